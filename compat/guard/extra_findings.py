"""Findings from what was read beside the flags: the installed software, the model config.

Detection (`compat.inputs.detect`) says what torch and CUDA are installed, and the model
config (`compat.inputs.model_config`) what the model implies; the guard judges both here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from compat.claim.baseline import MATRIX
from compat.claim.matrix import Matrix
from compat.claim.words import torch_dtype_message, torch_message
from compat.guard.report import Finding, Report
from compat.inputs.detect import DetectedPlatform, torch_has
from compat.releases import release_matrix
from compat.vocab.terms import KvDtype, Severity


def dtype_support(
    dtype: KvDtype, detected: DetectedPlatform, matrix: Matrix = MATRIX
) -> tuple[Finding, ...]:
    """What the installed torch and CUDA lack for `dtype`, as findings (empty when fine)."""
    requirement = matrix.dtype_requirement(dtype)
    if requirement is None:
        return ()
    findings: list[Finding] = []
    rule = requirement.rule_id
    installed = detected.torch_version
    if requirement.torch_dtype is not None and not torch_has(requirement.torch_dtype):
        findings.append(
            Finding(
                rule,
                Severity.ERROR,
                torch_dtype_message(requirement, requirement.torch_dtype, installed),
                ("--kv-cache-dtype",),
                value=dtype.value,
            )
        )
    if requirement.min_torch is not None and installed < requirement.min_torch:
        need = ".".join(map(str, requirement.min_torch))
        findings.append(
            Finding(
                rule,
                Severity.ERROR,
                torch_message(requirement, requirement.min_torch, installed),
                ("--kv-cache-dtype",),
                value=".".join(map(str, installed)),
                allowed=(f">={need}",),
            )
        )
    return tuple(findings)


def with_software_findings(report: Report, detected: DetectedPlatform) -> Report:
    """The report plus what the installed torch and CUDA lack for its KV dtype."""
    matrix = release_matrix(report.sglang_version) if report.sglang_version else MATRIX
    extra = dtype_support(report.resolved.kv_dtype, detected, matrix)
    return replace(report, findings=report.findings + extra) if extra else report


CONFLICT_RULE = "model-config-conflict"


def with_conflicts(report: Report, context: dict[str, Any]) -> Report:
    """The report plus a warning for each explicit flag that contradicts the model config."""
    conflicts = context.get("model_config_conflicts") or []
    extra = tuple(
        Finding(
            CONFLICT_RULE,
            Severity.WARNING,
            f"{conflict['flag']} {_shown(conflict['given'])} contradicts the model config, "
            f"which implies {_shown(conflict['model_config'])} ({conflict['why']}); the "
            "flag is what was checked",
            (str(conflict["flag"]), "--model-config"),
            value=_shown(conflict["given"]),
            allowed=(_shown(conflict["model_config"]),),
        )
        for conflict in conflicts
    )
    return replace(report, findings=report.findings + extra) if extra else report


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
