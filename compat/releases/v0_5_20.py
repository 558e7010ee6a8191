"""SGLang 0.5.20: cutlass_mla and dual_chunk_flash_attn removed; qsa new; intel_xpu prefill."""

from __future__ import annotations

from dataclasses import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES
from compat.engine.model_rules import MachinePage
from compat.engine.rules import EITHER_PHASE
from compat.releases.entry import Change, DocChange, Release, minus, plus
from compat.releases.families import (
    ON_CPU,
    ON_CUDA,
    ON_NPU,
    ON_ROCM,
    ON_ROCM_MXFP,
    ON_XPU,
    changed,
)
from compat.releases.shared import (
    ATTENTION_HOOK,
    CHOICES,
    code,
    intel_xpu_snaps,
    kv4_without,
    snap,
)

RELEASE = Release(
    "0.5.20",
    changes=(
        Change("cutlass_mla and dual_chunk_flash_attn are removed; qsa is new",
               code("0.5.20", "ATTENTION_BACKEND_CHOICES", CHOICES),
               {"backend_choices": lambda before: plus("qsa")(
                   minus("cutlass_mla", "dual_chunk_flash_attn")(before)),
                "page_snaps": snap("cutlass_mla", None),
                "kv4": kv4_without("cutlass_mla"),
                "dual_chunk_backend": None}),
        Change("intel_xpu may run the prefill phase of an MLA model; its page sizes follow "
               "either phase", code("0.5.20", "handle_attention_backend_compatibility",
                                    ATTENTION_HOOK),
               {"mla_prefill_refused": (), "page_snaps": intel_xpu_snaps(EITHER_PHASE)}),
        Change("DeepSeek DSA runs page size 128 on XPU",
               code("0.5.20", "_deepseek_family_overrides",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v2.py"),
               {"model_rules": changed("dsa-backend", pages=(
                   MachinePage(None, ON_NPU), MachinePage(128, ON_XPU), MachinePage(1, ON_ROCM),
                   MachinePage(64)))}),
        Change("mxfp4 quantization is registered on XPU too",
               code("0.5.20", "QUANTIZATION_METHODS", "sglang/srt/layers/quantization/__init__.py"),
               {"quantization": lambda before: replace(
                   before, gated={"mxfp4": (ON_CPU, ON_CUDA, ON_ROCM_MXFP, ON_XPU)})}),
        Change("deterministic inference counts GLM-5-Next as a DeepSeek-type model",
               code("0.5.20", "handle_deterministic_inference", ATTENTION_HOOK),
               {"deterministic": lambda before: replace(
                   before, deepseek_architectures=before.deepseek_architectures
                   | {"Glm5NextForConditionalGeneration"})}),
    ),
    doc_changes=(
        DocChange("new backend qsa", LATER_RELEASES, backends=(
            Backend("qsa", BOTH, CUDA_ONLY, evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
