"""SGLang 0.5.19: trtllm_mha prefill on SM90 and SM120; minicpm backends; resolve_once()."""

from __future__ import annotations

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, NO, native, row
from compat.engine.rules import EITHER_PHASE, BackendGate
from compat.releases.doc import backed, not_stated, unread_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.shared import ATTENTION_HOOK, TRTLLM_MHA_DECODE_GPUS, code
from compat.vocab.terms import Arch

PAGE = unread_page("0.5.19")
MINICPM = wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py",
                "MiniCPMSparseBackend.__init__", 137,
                "wraps the standard (MHA) backends and needs a MiniCPM config with sparse "
                "attention (MiniCPM SALA models, which are not MLA)")

MINICPM_FLASHATTN_ROW = NewRow(Arch.MHA, row("minicpm_flashattn", "MiniCPM sparse (FlashAttention)",
    native_page_sizes=backed(native(1, fixed=True), wheel("0.5.19", "sglang/srt/layers/attention/minicpm/cache.py", "MiniCPMCompressedCache.reset_allocator", 52,
                  "the compressed-key cache raises unless the allocator page size is 1")),
    fp8_kv=not_stated(wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 643,
                  "the dense path writes and reads the pool with the layer k/v scales (the FlashInfer adapter also passes the pool dtype)"),
              "nothing accepts or refuses an FP8 pool for the sparse (compressed-key) path"),
    fp4_kv=backed(NO, wheel("0.5.19", "sglang/srt/arg_groups/kv_cache_hook.py", "handle_kv4_compatibility", 98,
                  "minicpm_flashattn is not in the KV4 MHA lists, so an FP4 KV cache is refused at start-up")),
    spec_topk_1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "target-verify and draft-extend batches raise NotImplementedError; the EAGLE draft factory has no entry for it either")),
    spec_topk_gt1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "same refusal")),
    sliding_window=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 628,
                  "forward_extend raises for a sliding-window layer")),
    multimodal=not_stated(wheel("0.5.19", "sglang/srt/arg_groups/model_overrides/minicpm.py", "_minicpm_sala_overrides (decorator)", 17,
                  "the backend is wired for the MiniCPM SALA text architectures"),
              "a model-specific backend; the family notion of the MultiModal column does not settle it"),
))

MINICPM_FLASHINFER_ROW = NewRow(Arch.MHA, row("minicpm_flashinfer", "MiniCPM sparse (FlashInfer)",
    native_page_sizes=backed(native(1, fixed=True), wheel("0.5.19", "sglang/srt/layers/attention/minicpm/cache.py", "MiniCPMCompressedCache.reset_allocator", 52,
                  "the compressed-key cache raises unless the allocator page size is 1")),
    fp8_kv=not_stated(wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 643,
                  "the dense path writes and reads the pool with the layer k/v scales (the FlashInfer adapter also passes the pool dtype)"),
              "nothing accepts or refuses an FP8 pool for the sparse (compressed-key) path"),
    fp4_kv=backed(NO, wheel("0.5.19", "sglang/srt/arg_groups/kv_cache_hook.py", "handle_kv4_compatibility", 98,
                  "minicpm_flashinfer is not in the KV4 MHA lists, so an FP4 KV cache is refused at start-up")),
    spec_topk_1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "target-verify and draft-extend batches raise NotImplementedError; the EAGLE draft factory has no entry for it either")),
    spec_topk_gt1=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.init_forward_metadata", 381,
                  "same refusal")),
    sliding_window=backed(NO, wheel("0.5.19", "sglang/srt/layers/attention/minicpm/backend.py", "MiniCPMSparseBackend.forward_extend", 628,
                  "forward_extend raises for a sliding-window layer")),
    multimodal=not_stated(wheel("0.5.19", "sglang/srt/arg_groups/model_overrides/minicpm.py", "_minicpm_sala_overrides (decorator)", 17,
                  "the backend is wired for the MiniCPM SALA text architectures"),
              "a model-specific backend; the family notion of the MultiModal column does not settle it"),
))

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
        Change("a ServerArgs holds the raw flags; `resolve_once()` resolves them",
               code("0.5.19", "ServerArgs.resolve_once"), {"resolve_once": True}),
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
