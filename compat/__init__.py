"""attention-compat: one capability matrix for SGLang's attention backends.

`import compat` is nearly free: the matrix and the guard load on first use of a name
below (PEP 562), and nothing here ever imports torch, jinja2 or mkdocs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # like typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from compat.config import AttentionConfig
    from compat.config_checks import InputProblem, InvalidConfigError
    from compat.detect import PlatformDetectionError
    from compat.guard import check
    from compat.matrix import MATRIX
    from compat.model_config import ModelConfigError
    from compat.report import Finding, IncompatibleConfigError, Report, Resolved, Suggestion
    from compat.server_args import enforce
    from compat.vocab import Arch, ComputeCapability, KvDtype, Phase, Platform, Severity

__version__ = "0.1.0"

# Public name -> the module that defines it.
_HOMES = {
    "AttentionConfig": "compat.config",
    "InputProblem": "compat.config_checks",
    "InvalidConfigError": "compat.config_checks",
    "PlatformDetectionError": "compat.detect",
    "ModelConfigError": "compat.model_config",
    "check": "compat.guard",
    "enforce": "compat.server_args",
    "MATRIX": "compat.matrix",
    "Finding": "compat.report",
    "IncompatibleConfigError": "compat.report",
    "Report": "compat.report",
    "Resolved": "compat.report",
    "Suggestion": "compat.report",
    "Arch": "compat.vocab",
    "ComputeCapability": "compat.vocab",
    "KvDtype": "compat.vocab",
    "Phase": "compat.vocab",
    "Platform": "compat.vocab",
    "Severity": "compat.vocab",
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
