"""attention-compat: one capability matrix for SGLang's attention backends.

`import compat` is nearly free: the matrix and the guard load on first use of a name
below (PEP 562), and nothing here ever imports torch, jinja2 or mkdocs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # like typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from compat.claim.baseline import MATRIX
    from compat.guard.check import check
    from compat.guard.enforce import enforce
    from compat.guard.report import Finding, IncompatibleConfigError, Report, Resolved, Suggestion
    from compat.inputs.checks import InputProblem, InvalidConfigError
    from compat.inputs.config import AttentionConfig
    from compat.inputs.config_file import ModelConfigError
    from compat.inputs.detect import PlatformDetectionError
    from compat.vocab.hardware import ComputeCapability
    from compat.vocab.terms import Arch, KvDtype, Phase, Platform, Severity

__version__ = "0.1.0"

# Public name -> the module that defines it.
_HOMES = {
    "AttentionConfig": "compat.inputs.config",
    "InputProblem": "compat.inputs.checks",
    "InvalidConfigError": "compat.inputs.checks",
    "PlatformDetectionError": "compat.inputs.detect",
    "ModelConfigError": "compat.inputs.model_config",
    "check": "compat.guard.check",
    "enforce": "compat.guard.enforce",
    "MATRIX": "compat.claim.baseline",
    "Finding": "compat.guard.report",
    "IncompatibleConfigError": "compat.guard.report",
    "Report": "compat.guard.report",
    "Resolved": "compat.guard.report",
    "Suggestion": "compat.guard.report",
    "Arch": "compat.vocab.terms",
    "ComputeCapability": "compat.vocab.hardware",
    "KvDtype": "compat.vocab.terms",
    "Phase": "compat.vocab.terms",
    "Platform": "compat.vocab.terms",
    "Severity": "compat.vocab.terms",
}

__all__ = [
    "MATRIX",
    "Arch",
    "AttentionConfig",
    "ComputeCapability",
    "Finding",
    "IncompatibleConfigError",
    "InputProblem",
    "InvalidConfigError",
    "KvDtype",
    "ModelConfigError",
    "Phase",
    "Platform",
    "PlatformDetectionError",
    "Report",
    "Resolved",
    "Severity",
    "Suggestion",
    "__version__",
    "check",
    "enforce",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
