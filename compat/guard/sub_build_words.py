"""The guard's words for a sub-backend flag SGLang refuses as it builds the part that
reads it (the vision encoder, the DSA backend): the flag, its value, the release's
`file:line` and the fix.

The engine predicts the failure (`compat.engine.sub_build`); the finding is enforced at
the backend build, like the registry's own, and says which values of the flag the release
builds on this machine (its other choices that no check refuses here).
"""

from __future__ import annotations

from compat.engine.build import BuildFailure
from compat.engine.sub_build import SubBuildCheck, SubCheck, SubPart
from compat.guard.report import Enforcement, Finding
from compat.inputs.flags import SUB_BACKEND_FLAGS
from compat.inputs.sub_backend_checks import spelling
from compat.vocab.terms import Platform, Severity

_FLAGS = {flag.field: flag for flag in SUB_BACKEND_FLAGS}
_PLATFORMS = {
    Platform.CUDA: "NVIDIA (CUDA) GPUs",
    Platform.ROCM: "AMD (ROCm) GPUs",
    Platform.NPU: "Ascend NPUs",
    Platform.XPU: "Intel GPUs (XPU)",
    Platform.CPU: "CPUs",
}


def sub_backend_finding(failure: BuildFailure, check: SubBuildCheck, release: str) -> Finding:
    """The finding for `check`, which fails as SGLang `release` builds the launch."""
    option = spelling(_FLAGS[check.field], release)
    part = "the vision encoder" if check.part is SubPart.VISION else "the DSA attention backend"
    return Finding(
        failure.check.rule,
        Severity.ERROR,
        f"SGLang {release} starts, then fails building {part} after the weights load: "
        f"{option} {check.value} {_said(check)} (sglang {release}, {failure.where}, "
        f"{check.function}); {_fix(check, option)}",
        (option,),
        value=check.value,
        enforced=Enforcement.BACKEND_BUILD,
        raised_at=f"{failure.where} ({check.function})",
    )


def _said(check: SubBuildCheck) -> str:
    kind = check.check
    if kind is SubCheck.BLACKWELL:
        return "is refused on Blackwell GPUs"
    if kind is SubCheck.PLATFORM:
        where = " or ".join(
            _PLATFORMS[p] for p in sorted(check.platforms, key=list(Platform).index)
        )
        return f"runs on {where} only"
    if kind is SubCheck.GPU:
        gpus = " or ".join(f"sm{major}x" for major in sorted(check.majors))
        return f"needs a {gpus} GPU"
    return "is a prefill-only kernel, refused as the decode one"


def _fix(check: SubBuildCheck, option: str) -> str:
    what = "the encoder's attention" if check.part is SubPart.VISION else "the DSA kernels"
    return f"leave {option} unset (SGLang picks {what} for the GPU) or choose another"
