"""Find the platform, compute capability and software versions with torch, imported lazily.

This is the only module that imports torch, and only inside its functions, so
`import compat` stays free of it.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from compat.claim.baseline import MATRIX
from compat.claim.matrix import Matrix
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import KvDtype, Platform


class PlatformDetectionError(RuntimeError, ValueError):
    """The platform cannot be found out here; the message says which flags to pass.

    A ValueError too, like every other error `enforce()` raises, so that one
    `except ValueError` catches them all; a RuntimeError for callers that caught it as one.
    """


@dataclass(frozen=True)
class DetectedPlatform:
    platform: Platform
    compute_capability: ComputeCapability | None
    cuda_version: tuple[int, int] | None
    torch_version: tuple[int, int]
    device_name: str | None


def _import_torch() -> ModuleType:
    try:
        with warnings.catch_warnings():
            # torch warns when numpy is absent; detection needs no numpy.
            warnings.simplefilter("ignore")
            import torch
    except ImportError as error:
        raise PlatformDetectionError(
            "cannot detect the platform: torch is not installed here. Pass --platform "
            "(cuda, rocm, npu, xpu, cpu) and, on CUDA, --compute-capability (e.g. 10.0), "
            "or install attention-compat[torch]"
        ) from error
    return torch


def version_tuple(text: str | None) -> tuple[int, int] | None:
    """`"2.13.0+cpu"` -> (2, 13); None when there is no leading major.minor."""
    if not text:
        return None
    match = re.match(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _available(torch: Any, attribute: str) -> bool:
    module = getattr(torch, attribute, None)
    is_available = getattr(module, "is_available", None)
    try:
        return bool(is_available()) if callable(is_available) else False
    except Exception:  # a half-installed device plugin must not stop detection
        return False


def detect_platform() -> DetectedPlatform:
    """Ask torch what this process would run on."""
    torch = _import_torch()
    torch_version = version_tuple(str(torch.__version__)) or (0, 0)
    hip = getattr(torch.version, "hip", None)
    cuda_text = getattr(torch.version, "cuda", None)
    if _available(torch, "cuda"):
        name = str(torch.cuda.get_device_name(0))
        if hip:
            return DetectedPlatform(Platform.ROCM, None, None, torch_version, name)
        major, minor = torch.cuda.get_device_capability(0)
        return DetectedPlatform(
            Platform.CUDA,
            ComputeCapability(int(major), int(minor)),
            version_tuple(cuda_text),
            torch_version,
            name,
        )
    if _available(torch, "xpu"):
        return DetectedPlatform(Platform.XPU, None, None, torch_version, None)
    if _available(torch, "npu"):
        return DetectedPlatform(Platform.NPU, None, None, torch_version, None)
    return DetectedPlatform(Platform.CPU, None, None, torch_version, None)


def detected_fields(fields: dict[str, Any]) -> tuple[DetectedPlatform, dict[str, Any]]:
    """Fill a configuration's platform, compute capability (unless given) and CUDA version
    from torch; return what was detected and how a report says it."""
    detected = detect_platform()
    fields["platform"] = detected.platform.value
    capability = detected.compute_capability
    if "compute_capability" not in fields and capability is not None:
        fields["compute_capability"] = (capability.major, capability.minor)
    if detected.cuda_version is not None:
        fields["cuda_version"] = detected.cuda_version
    return detected, {
        "platform": detected.platform.value,
        "compute_capability": None if capability is None else capability.dotted,
        "device": detected.device_name,
    }


def torch_has(attribute: str) -> bool:
    """Whether the installed torch has `attribute` (a dtype such as `float4_e2m1fn_x2`)."""
    return hasattr(_import_torch(), attribute)


def torch_dtype(dtype: KvDtype, matrix: Matrix = MATRIX) -> Any:
    """The torch dtype a KV dtype is stored as (None for `auto`: the model's own dtype)."""
    requirement = matrix.dtype_requirement(dtype)
    if requirement is None or requirement.torch_dtype is None:
        return None
    torch = _import_torch()
    found = getattr(torch, requirement.torch_dtype, None)
    if found is None:
        raise PlatformDetectionError(
            f"the installed torch has no torch.{requirement.torch_dtype} for {dtype.value}"
        )
    return found
