"""SGLang 0.5.19: trtllm_mha prefill on SM90 and SM120; minicpm backends; resolve_once()."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, NO, native, row
from compat.engine.model_rules import MachineChoice, MachinePage
from compat.engine.rules import ANY_FLAG, EITHER_PHASE, BackendGate
from compat.releases.doc import backed, not_stated, unread_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.families import (
    DSV4_OVERRIDES,
    MODEL_HOOK,
    ON_BLACKWELL,
    ON_NPU,
    ON_ROCM,
    ON_SM100,
    ON_XPU,
    changed,
    moved,
    with_family,
)
from compat.releases.shared import ATTENTION_HOOK, TRTLLM_MHA_DECODE_GPUS, code
from compat.vocab.terms import Arch

PAGE = unread_page("0.5.19")
MINICPM = wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py",
                "MiniCPMSparseBackend.__init__", 137,
                "wraps the standard (MHA) backends and needs a MiniCPM config with sparse "
                "attention (MiniCPM SALA models, which are not MLA)")

def _minicpm_row(name: str, label: str) -> NewRow:
    """The two MiniCPM sparse backends share one cache and one backend class: one set of cells."""
    return NewRow(Arch.MHA, row(name, label,
    native_page_sizes=backed(native(1, fixed=True), wheel("0.5.19", "sglang/srt/layers/attention/minicpm/cache.py", "MiniCPMCompressedCache.reset_allocator", 52,
                  "the compressed-key cache raises unless the allocator page size is 1")),
    fp8_kv=not_stated(wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 643,
                  "the dense path writes and reads the pool with the layer k/v scales (the FlashInfer adapter also passes the pool dtype)"),
              "nothing accepts or refuses an FP8 pool for the sparse (compressed-key) path"),
    fp4_kv=backed(NO, wheel("0.5.19", "sglang/srt/arg_groups/kv_cache_hook.py", "handle_kv4_compatibility", 98,
                  f"{name} is not in the KV4 MHA lists, so an FP4 KV cache is refused at start-up")),
    spec_topk_1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "target-verify and draft-extend batches raise NotImplementedError; the EAGLE draft factory has no entry for it either")),
    spec_topk_gt1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "same refusal")),
    sliding_window=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 628,
                  "forward_extend raises for a sliding-window layer")),
    multimodal=not_stated(wheel("0.5.19", "sglang/srt/arg_groups/model_overrides/minicpm.py", "_minicpm_sala_overrides (decorator)", 17,
                  "the backend is wired for the MiniCPM SALA text architectures"),
              "a model-specific backend; the family notion of the MultiModal column does not settle it"),
))  # fmt: skip


MINICPM_FLASHATTN_ROW = _minicpm_row("minicpm_flashattn", "MiniCPM sparse (FlashAttention)")
MINICPM_FLASHINFER_ROW = _minicpm_row("minicpm_flashinfer", "MiniCPM sparse (FlashInfer)")

RELEASE = Release(
    "0.5.19",
    changes=(
        Change("the DeepSeek family's branch also takes Dots3NoteForCausalLM",
               code("0.5.19", "_DEEPSEEK_FAMILY_ARCHS (line 29)",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v2.py"),
               {"model_rules": with_family("Dots3NoteForCausalLM")}),
        Change("trtllm_mha's prefill phase also runs on SM90 and SM120",
               code("0.5.19", "handle_attention_backend_compatibility", ATTENTION_HOOK),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", EITHER_PHASE, TRTLLM_MHA_DECODE_GPUS))}),
        Change("new backends minicpm_flashattn and minicpm_flashinfer",
               code("0.5.19", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("minicpm_flashattn", "minicpm_flashinfer")}),
        Change("deterministic inference also runs intel_xpu",
               code("0.5.19", "handle_deterministic_inference", ATTENTION_HOOK),
               {"deterministic": lambda before: replace(
                   before, backends=(*before.backends, "intel_xpu"),
                   source="arg_groups/overrides.py, _deterministic_attention_backend (run by "
                   "arg_groups/attention_hook.py, handle_deterministic_inference)")}),
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
                   MachinePage(None, ON_NPU), MachinePage(None, ON_XPU), MachinePage(1, ON_ROCM, unless_preshuffle=True),
                   MachinePage(64)))}),
        Change("the model-specific checks move to arg_groups/model_hook.py",
               code("0.5.19", "handle_model_specific_adjustments", "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": moved(MODEL_HOOK)}),
        Change("a ServerArgs holds the raw flags; `resolve_once()` resolves them",
               code("0.5.19", "ServerArgs.resolve_once"), {"resolve_once": True}),
        Change("DeepSeek V4's declarations move to arg_groups/model_overrides/deepseek_v4.py",
               code("0.5.19", "_deepseek_v4_overrides (line 21)",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v4.py"),
               {"model_rules": moved(DSV4_OVERRIDES, "deepseek-v4-backend")}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables is known (its tag could not be read)", PAGE,
                  page=PAGE),
        DocChange("new backends minicpm_flashattn and minicpm_flashinfer (MHA), their rows read "
                  "from the code", MINICPM, backends=(
            Backend("minicpm_flashattn", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    note="MiniCPM sparse (SALA) models only.", evidence=MINICPM),
            Backend("minicpm_flashinfer", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    note="MiniCPM sparse (SALA) models only.", evidence=MINICPM),
        ), rows=(MINICPM_FLASHATTN_ROW, MINICPM_FLASHINFER_ROW)),
    ),
)  # fmt: skip
