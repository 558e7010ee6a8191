"""SGLang 0.5.22: new backend llada2_cfg_flashinfer."""

from __future__ import annotations

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES, MHA_ONLY
from compat.engine.rules import AB
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.families import ON_CUDA_SM80, ON_SM100, changed, choices
from compat.releases.shared import CHOICES, code

RELEASE = Release(
    "0.5.22",
    changes=(
        Change("EXAONE 4 gets a default (trtllm_mha on SM100, fa3 from CUDA sm80, else triton) "
               "before its list is checked", code("0.5.22", "handle_model_specific_adjustments",
                                                   "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": changed("exaone4-backends", defaults=choices(
                   ("trtllm_mha", ON_SM100), ("fa3", ON_CUDA_SM80), ("triton", None)),
                   default_unless=frozenset({AB}))}),
        Change("new backend llada2_cfg_flashinfer",
               code("0.5.22", "ATTENTION_BACKEND_CHOICES", CHOICES),
               {"backend_choices": plus("llada2_cfg_flashinfer")}),
    ),
    doc_changes=(
        DocChange("new backend llada2_cfg_flashinfer", LATER_RELEASES, backends=(
            Backend("llada2_cfg_flashinfer", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    note="LLaDA2 diffusion models with classifier-free guidance.",
                    evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
