"""SGLang 0.5.13: new backends dsa (nsa its alias) and cutedsl_mla; topk > 1 paged on triton."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BLACKWELL as BLACKWELL_CC
from compat.claim.baseline import BOTH, CUDA_ONLY, MLA_ONLY, NO, YES, native, row
from compat.claim.cells import PlatformSupport
from compat.engine.model_rules import MambaCache
from compat.engine.rules import ANY_FLAG, PageSnap
from compat.releases.doc import LATER_RELEASES, backed, commit, tagged_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.families import (
    GEMMA4_LISTED,
    ON_AMX_CPU,
    ON_ROCM,
    ON_SM90,
    ON_SM100,
    ON_XPU,
    chained,
    changed,
    choices,
    extended,
)
from compat.releases.preshuffle import PRESHUFFLE_0_5_13
from compat.releases.shared import (
    COMPAT,
    MODEL_ADJUSTMENTS,
    SM100,
    SPECULATIVE_HOOK,
    code,
    gate,
    snap,
)
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform

MINTLIFY_PAGE = "docs_new/docs/advanced_features/attention_backend.mdx"

DSA_ROW = NewRow(Arch.MLA, row("dsa", "DSA (DeepSeek Sparse Attention)",
    native_page_sizes=backed(native(64, fixed=True), wheel("0.5.13", "sglang/srt/server_args.py", "ServerArgs._handle_model_specific_adjustments", 1945,
                  "for DSA models on CUDA start-up forces page size 64 whatever the user gave")),
    fp8_kv=backed(YES, wheel("0.5.13", "sglang/srt/server_args.py", "ServerArgs._set_default_dsa_kv_cache_dtype", 1754,
                  "the DSA dtype step turns auto into fp8_e4m3 on compute capability 10+ (bfloat16 otherwise) and asserts bfloat16 or fp8_e4m3")),
    fp4_kv=backed(NO, wheel("0.5.13", "sglang/srt/server_args.py", "ServerArgs._set_default_dsa_kv_cache_dtype", 1754,
                  "the same assert refuses FP4; also sglang 0.5.13 wheel, sglang/srt/server_args.py, ServerArgs._handle_kv4_compatibility (line 3134): dsa/nsa are not in the KV4 MLA lists")),
    chunked_prefix_cache=backed(NO, wheel("0.5.13", "sglang/srt/model_executor/model_runner.py", "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS", 275,
                  "dsa/nsa are not in the list; also sglang 0.5.13 wheel, sglang/srt/model_executor/model_runner.py, ModelRunner.model_specific_adjustment (line 1043): so the model runner turns chunked prefix cache off for them")),
    spec_topk_1=backed(YES, wheel("0.5.13", "sglang/srt/speculative/draft_utils.py", "DraftBackendFactory.create_decode_backend", 58,
                  "the draft factory has DSA draft-decode (DeepseekSparseAttnMultiStepBackend) and draft-extend backends; the backend handles target-verify")),
    spec_topk_gt1=backed(NO, wheel("0.5.13", "sglang/srt/arg_groups/speculative_hook.py", "_handle_eagle_family", 376,
                  "topk > 1 with page size > 1 is refused unless the backend is flashinfer, fa3 or triton; DSA runs page 64 on CUDA")),
))

RELEASE = Release(
    "0.5.13",
    changes=(
        Change("aiter's preshuffle switch is SGLANG_DSA_HIP_DISABLE_PRESHUFFLE (an EnvBool; "
               "the NSA name its deprecated alias)",
               code("0.5.13", PRESHUFFLE_0_5_13.source.partition(" ")[2],
                    PRESHUFFLE_0_5_13.source.partition(":")[0]),
               {"preshuffle": PRESHUFFLE_0_5_13}),
        Change("--mamba-scheduler-strategy takes extra_buffer_lazy (an extra_buffer strategy)",
               code("0.5.13", "MAMBA_SCHEDULER_STRATEGY_CHOICES"),
               {"hybrid_cache": lambda before: replace(
                   before, strategies=(*before.strategies, "extra_buffer_lazy"))}),
        Change("Nemotron-H and Falcon-H1 have the extra_buffer Mamba cache",
               code("0.5.13", "ServerArgs._handle_mamba_radix_cache"),
               {"model_rules": chained(
                   changed("nemotron-h-backend", mamba=MambaCache.EXTRA_BUFFER),
                   changed("falcon-h1-backend", mamba=MambaCache.EXTRA_BUFFER))}),
        Change("new backends dsa (nsa becomes its alias) and cutedsl_mla",
               code("0.5.13", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsa", "cutedsl_mla"),
                "model_rules": changed("dsa-backend", defaults=choices(("dsa", None)))}),
        Change("cutedsl_mla: decode only (prefill runs trtllm_mla), SM100, page size 32 or 64",
               code("0.5.13", COMPAT),
               {"decode_only": {"cutedsl_mla": "trtllm_mla"},
                "page_snaps": snap(
                    "cutedsl_mla", PageSnap("cutedsl_mla", ANY_FLAG, frozenset({32, 64}))),
                "gpu_gates": gate("cutedsl_mla", ANY_FLAG, SM100),
                "kv_spellings": lambda before: (
                    *before, ("cutedsl_mla", ("fp8_e4m3", "bf16", "bfloat16", "auto")))}),
        Change("GPT-OSS runs intel_amx on a CPU with AMX by default and accepts it",
               code("0.5.13", MODEL_ADJUSTMENTS),
               {"model_rules": chained(
                   changed("gpt-oss-backends", defaults=choices(
                       ("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("intel_amx", ON_AMX_CPU),
                       ("intel_xpu", ON_XPU), ("aiter", ON_ROCM), ("triton", None))),
                   extended("gpt-oss-backends", allowed=("intel_amx",)))}),
        Change("deterministic inference also runs ascend",
               code("0.5.13", "DETERMINISTIC_ATTENTION_BACKEND_CHOICES"),
               {"deterministic": lambda before: replace(
                   before, backends=(*before.backends, "ascend"))}),
        Change("Gemma 4 (every Gemma 4 architecture): trtllm_mha on SM100, else triton, while "
               "`--attention-backend` is unset; it then runs only trtllm_mha, triton or intel_xpu",
               code("0.5.13", f"{MODEL_ADJUSTMENTS} (lines 2365-2402)"),
               {"model_rules": GEMMA4_LISTED}),
        Change("speculative topk > 1 with page size > 1 also runs on triton",
               code("0.5.13", "_handle_eagle_family", SPECULATIVE_HOOK),
               {"topk_paged_eagle": plus("triton")}),
    ),
    doc_changes=(
        DocChange("dsa replaces nsa (now another name for it); its MLA row read from the code",
                  wheel("0.5.13", "sglang/srt/server_args.py", "ATTENTION_BACKEND_CHOICES", 175,
                        "dsa is a choice; nsa stays on the next line as its older name"),
                  page=tagged_page("0.5.13", MINTLIFY_PAGE), removed=("nsa",),
                  backends=(
            Backend("dsa", BOTH, {Platform.CUDA: PlatformSupport.SUPPORTED,
                                  Platform.ROCM: PlatformSupport.UNTESTED},
                    capability={Arch.MLA: CapabilityRange(9, 10)}, archs=MLA_ONLY,
                    requires_features=frozenset({ModelFeature.SPARSE_DSA}),
                    note="DeepSeek sparse attention (DSA); `nsa` is its older name.",
                    evidence=LATER_RELEASES),
        ), rows=(DSA_ROW,), aliases={"nsa": "dsa"}),
        DocChange("new backend cutedsl_mla (MLA, decode only)",
                  commit("50e0b3b77f2779f526a8c8d7b4054f314d5c1936", 24737, "2026-05-28",
                         "Support Flashinfer Cute-DSL MLA attention"),
                  backends=(
            Backend("cutedsl_mla", frozenset({Phase.DECODE}), CUDA_ONLY,
                    capability={Arch.MLA: BLACKWELL_CC}, archs=MLA_ONLY,
                    kv_dtypes=frozenset({KvDtype.FP8_E4M3, KvDtype.BF16, KvDtype.AUTO}),
                    note="Decode only; SGLang runs prefill on trtllm_mla when it is unset.",
                    evidence=LATER_RELEASES),
        ), rows=(NewRow(Arch.MLA, row("cutedsl_mla", "CuteDSL MLA (Blackwell)",
                 native_page_sizes=native(32, 64, fixed=True), fp8_kv=YES, fp4_kv=NO,
                 chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=NO)),)),
    ),
)  # fmt: skip
