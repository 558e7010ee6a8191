"""SGLang 0.5.9: Blackwell includes SM110; the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA."""

from __future__ import annotations

from compat.claim.baseline import YES
from compat.claim.columns import ColumnId
from compat.engine.rules import AB_OR_DB
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import CellChange, Change, DocChange, Release
from compat.releases.shared import (
    BLACKWELL_0_5_9,
    COMPAT,
    MODEL_ADJUSTMENTS,
    code,
    gate,
    with_family,
)
from compat.vocab.terms import Arch

RELEASE = Release(
    "0.5.9",
    changes=(
        Change("trtllm_mla's Blackwell check also admits SM110", code("0.5.9", COMPAT),
               {"gpu_gates": gate("trtllm_mla", AB_OR_DB, BLACKWELL_0_5_9)}),
        Change("the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA",
               code("0.5.9", MODEL_ADJUSTMENTS),
               {"model_overrides": with_family("KimiK25ForConditionalGeneration",
                                               "GlmMoeDsaForCausalLM")}),
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
