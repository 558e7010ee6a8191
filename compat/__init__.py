"""attention-compat: one capability matrix for SGLang's attention backends.

`import compat` loads only the matrix and the guard: never torch, jinja2 or mkdocs.
"""

from __future__ import annotations

from compat.config import AttentionConfig, InputProblem, InvalidConfigError
from compat.guard import check, enforce
from compat.matrix import MATRIX
from compat.report import Finding, IncompatibleConfigError, Report, Resolved, Suggestion
from compat.vocab import Arch, ComputeCapability, KvDtype, Phase, Platform, Severity

__version__ = "0.1.0"

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
    "Phase",
    "Platform",
    "Report",
    "Resolved",
    "Severity",
    "Suggestion",
    "__version__",
    "check",
    "enforce",
]
