"""SGLang 0.5.19: trtllm_mha prefill on SM90 and SM120; minicpm backends; resolve_once()."""

from __future__ import annotations

from dataclasses import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES
from compat.engine.model_rules import MachineChoice, MachinePage
from compat.engine.rules import ANY_FLAG, EITHER_PHASE, BackendGate
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.families import (
    MODEL_HOOK,
    ON_BLACKWELL,
    ON_NPU,
    ON_ROCM,
    ON_SM100,
    ON_XPU,
    changed,
    moved,
)
from compat.releases.shared import ATTENTION_HOOK, TRTLLM_MHA_DECODE_GPUS, code

RELEASE = Release(
    "0.5.19",
    changes=(
        Change("trtllm_mha's prefill phase also runs on SM90 and SM120",
               code("0.5.19", "handle_attention_backend_compatibility", ATTENTION_HOOK),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", EITHER_PHASE, TRTLLM_MHA_DECODE_GPUS))}),
        Change("new backends minicpm_flashattn and minicpm_flashinfer",
               code("0.5.19", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("minicpm_flashattn", "minicpm_flashinfer")}),
        Change("deterministic inference also runs intel_xpu, and counts GLM-4-MoE-Lite as a "
               "DeepSeek-type model", code("0.5.19", "handle_deterministic_inference", ATTENTION_HOOK),
               {"deterministic": lambda before: replace(
                   before, backends=(*before.backends, "intel_xpu"),
                   deepseek_architectures=before.deepseek_architectures | {"Glm4MoeLiteForCausalLM"},
                   source="arg_groups/attention_hook.py, handle_deterministic_inference")}),
        Change("Nemotron-H on Blackwell with no backend flag: trtllm_mha on SM100 (with "
               "speculative decoding only at topk 1, else triton); it no longer refuses triton",
               code("0.5.19", "_nemotron_h_overrides",
                    "sglang/srt/arg_groups/model_overrides/nemotron_h.py"),
               {"model_rules": changed(
                   "nemotron-h-backend", refused=(), default_unless=ANY_FLAG, defaults=(
                       MachineChoice("trtllm_mha", ON_SM100, speculative=True, topk_one=True),
                       MachineChoice("triton", ON_BLACKWELL, speculative=True),
                       MachineChoice("trtllm_mha", ON_SM100, speculative=False)))}),
        Change("DeepSeek DSA on XPU skips its GPU branch (page size, KV dtype, torch.cuda)",
               code("0.5.19", "_deepseek_family_overrides",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v2.py"),
               {"model_rules": changed("dsa-backend", pages=(
                   MachinePage(None, ON_NPU), MachinePage(None, ON_XPU), MachinePage(1, ON_ROCM),
                   MachinePage(64)))}),
        Change("the model-specific checks move to arg_groups/model_hook.py",
               code("0.5.19", "handle_model_specific_adjustments", "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": moved(MODEL_HOOK)}),
        Change("a ServerArgs holds the raw flags; `resolve_once()` resolves them",
               code("0.5.19", "ServerArgs.resolve_once"), {"resolve_once": True}),
    ),
    doc_changes=(
        DocChange("new backends minicpm_flashattn and minicpm_flashinfer", LATER_RELEASES,
                  backends=(
            Backend("minicpm_flashattn", BOTH, CUDA_ONLY, note="For MiniCPM models.",
                    evidence=LATER_RELEASES),
            Backend("minicpm_flashinfer", BOTH, CUDA_ONLY, note="For MiniCPM models.",
                    evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
