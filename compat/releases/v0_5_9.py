"""SGLang 0.5.9: Blackwell includes SM110; the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA."""

from __future__ import annotations

from compat.engine.rules import AB_OR_DB
from compat.releases.entry import Change, Release
from compat.releases.shared import (
    BLACKWELL_0_5_9,
    COMPAT,
    MODEL_ADJUSTMENTS,
    code,
    gate,
    with_family,
)

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
)  # fmt: skip
