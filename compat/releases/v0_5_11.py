"""SGLang 0.5.11: intel_xpu's MLA and page rules; `--speculative-algorithm DFLASH`."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import YES
from compat.claim.columns import ColumnId
from compat.engine.model_rules import SpecWithRadix
from compat.engine.rules import RUNS_DECODE
from compat.releases.doc import commit, tagged_page, wheel
from compat.releases.entry import CellChange, Change, DocChange, Release, plus
from compat.releases.families import (
    GEMMA4_RULE,
    MOSS_VL,
    ON_ROCM,
    ON_SM90,
    ON_SM100,
    ON_XPU,
    added,
    chained,
    changed,
    choices,
    extended,
)
from compat.releases.shared import COMPAT, MODEL_ADJUSTMENTS, code, intel_xpu_snaps
from compat.vocab.terms import Arch

# From 0.5.11 the page is the Mintlify one: every later table edit went only there.
MINTLIFY_PAGE = "docs_new/docs/advanced_features/attention_backend.mdx"

RELEASE = Release(
    "0.5.11",
    changes=(
        Change("intel_xpu cannot run the prefill phase of an MLA model; its page sizes follow "
               "the decode phase: 64 or 128 for MHA, 16 to 128 for MLA", code("0.5.11", COMPAT),
               {"mla_prefill_refused": ("intel_xpu",),
                "page_snaps": intel_xpu_snaps(frozenset({RUNS_DECODE}))}),
        Change("GPT-OSS runs intel_xpu on XPU by default and accepts it",
               code("0.5.11", MODEL_ADJUSTMENTS),
               {"model_rules": chained(
                   changed("gpt-oss-backends", defaults=choices(
                       ("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("intel_xpu", ON_XPU),
                       ("aiter", ON_ROCM), ("triton", None))),
                   extended("gpt-oss-backends", allowed=("intel_xpu",)))}),
        Change("hybrid models' no_buffer cache with the radix cache on sets page size 1; with "
               "speculative decoding ROCm turns the radix cache off, other machines refuse",
               code("0.5.11", "ServerArgs._handle_mamba_radix_cache"),
               {"hybrid_cache": lambda before: replace(
                   before, page_one=True, spec=SpecWithRadix.REFUSE_BUT_ROCM)}),
        Change("the MHA default skips flashinfer for a model with attention sinks (GPT-OSS): "
               "triton instead", code("0.5.11", "ServerArgs._get_default_attn_backend"),
               {"defaults": lambda before: tuple(
                   replace(b, unless_sinks=True)
                   if b.backend == "flashinfer" and b.arch is Arch.MHA else b for b in before),
                "sink_architectures": frozenset({"GptOssForCausalLM"})}),
        Change("a decode server turns its radix cache off before the model branches run",
               code("0.5.11", "ServerArgs.__post_init__"),
               {"hybrid_cache": lambda before: replace(before, decode_radix_off_first=True)}),
        Change("Gemma 4 (Gemma4ForConditionalGeneration) with no backend flag runs triton",
               code("0.5.11", f"{MODEL_ADJUSTMENTS} (line 2087)"),
               {"model_rules": added(GEMMA4_RULE)}),
        Change("Moss-VL with no backend flag prefills on flashinfer, and refuses any other "
               "prefill backend", code("0.5.11", f"{MODEL_ADJUSTMENTS} (line 2091)"),
               {"model_rules": added(MOSS_VL)}),
        Change("`--speculative-algorithm DFLASH` is accepted",
               wheel("0.5.11", "sglang/srt/server_args.py", "ServerArgs.add_cli_args", 5367,
                     "the flag's argparse choices add DFLASH"),
               {"algorithm_choices": plus("DFLASH")}),
    ),
    doc_changes=(
        DocChange("FA4 serves sliding-window models (MHA)",
                  commit("c74b345e3a40b7a18bcd8e6fab0e8be9254c1917", 23793, "2026-04-26",
                         "Update FA4 support SWA"),
                  page=tagged_page("0.5.11", MINTLIFY_PAGE),
                  cells=(CellChange(Arch.MHA, "fa4", ColumnId.SLIDING_WINDOW, YES),)),
    ),
)  # fmt: skip
