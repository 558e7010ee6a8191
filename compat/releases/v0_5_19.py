"""SGLang 0.5.19: trtllm_mha prefill on SM90 and SM120; minicpm backends; resolve_once()."""

from __future__ import annotations

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES
from compat.engine.rules import EITHER_PHASE, BackendGate
from compat.releases.entry import Change, DocChange, Release, plus
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
