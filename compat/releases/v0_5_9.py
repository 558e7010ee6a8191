"""SGLang 0.5.9: Blackwell includes SM110; the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import YES
from compat.claim.columns import ColumnId
from compat.engine.model_rules import TRACK_INTERVAL
from compat.engine.rules import AB_OR_DB
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import CellChange, Change, DocChange, Release
from compat.releases.families import (
    EXAONE4_RULE,
    LFM2,
    added,
    chained,
    changed,
    extended,
    with_family,
)
from compat.releases.shared import (
    BLACKWELL_0_5_9,
    COMPAT,
    MODEL_ADJUSTMENTS,
    code,
    gate,
)
from compat.vocab.terms import Arch

RELEASE = Release(
    "0.5.9",
    changes=(
        Change("--mamba-ssm-dtype takes float16",
               code("0.5.9", "MAMBA_SSM_DTYPE_CHOICES"),
               {"hybrid_cache": lambda before: replace(
                   before, ssm_dtypes=(*before.ssm_dtypes, "float16"))}),
        Change("trtllm_mla's Blackwell check also admits SM110", code("0.5.9", COMPAT),
               {"gpu_gates": gate("trtllm_mla", AB_OR_DB, BLACKWELL_0_5_9)}),
        Change("the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA",
               code("0.5.9", MODEL_ADJUSTMENTS),
               {"model_rules": with_family("KimiK25ForConditionalGeneration",
                                               "GlmMoeDsaForCausalLM")}),
        Change("EXAONE 4 runs only fa3, triton or trtllm_mha (`--attention-backend` must name "
               "one); LFM2 refuses triton and runs flashinfer on SM100 by default",
               code("0.5.9", MODEL_ADJUSTMENTS),
               {"model_rules": chained(added(EXAONE4_RULE), added(LFM2))}),
        Change("hybrid linear-attention models share one Mamba cache handler: the model's SM100 "
               "default first, then no_buffer with the radix cache (speculative decoding or "
               "trtllm_mha turn the radix cache off); Qwen3.5 joins Qwen3-Next; an asked-for "
               "extra_buffer is checked again, and needs a page size that divides the track "
               "interval (256) and the FLA chunk (64) or a multiple of it, not one that divides 64",
               code("0.5.9", "ServerArgs._handle_mamba_radix_cache"),
               {"hybrid_cache": lambda before: replace(
                   before, handled=True, page_divides=TRACK_INTERVAL, extra_buffer_checked=True,
                   source="server_args.py, ServerArgs._handle_mamba_radix_cache"),
                "model_rules": chained(
                    changed("nemotron-h-backend", default_without_speculation=False),
                    extended("qwen3-next-backend", architectures=(
                        "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration")))}),
        Change("deterministic inference counts GLM-MoE-DSA as a DeepSeek model",
               code("0.5.9", "ServerArgs._handle_deterministic_inference"),
               {"deterministic": lambda before: replace(
                   before, deepseek_architectures=before.deepseek_architectures | {"GlmMoeDsaForCausalLM"})}),
    ),
    doc_changes=(
        DocChange("FA4 serves multimodal models (MHA)",
                  commit("08fcda2f634ac705226ee95d2cd05b86f69c6fe1", 13539, "2026-01-23",
                         "add the fa4 mm backend and varlen func"),
                  page=tagged_page("0.5.9", "docs/advanced_features/attention_backend.md"),
                  cells=(CellChange(Arch.MHA, "fa4", ColumnId.MULTIMODAL, YES),)),
        DocChange("Ascend runs speculative decoding with topk 1 (MHA)",
                  commit("c52578c7fd19f64353513006b604b5050132901e", 17940, "2026-01-30",
                         "Update Expert Parallelism docs for Ascend NPU"),
                  cells=(CellChange(Arch.MHA, "ascend", ColumnId.SPEC_TOPK_1, YES),)),
    ),
)  # fmt: skip
