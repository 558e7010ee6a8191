"""How the guard words a finding: the message, the flags, the value and the allowed set.

Only called when a check fails, so the cost of formatting stays off the passing path.
"""

from __future__ import annotations

from functools import cache

from compat.claim.backends import Backend, phase_rule_id
from compat.claim.cell_words import not_stated_message
from compat.claim.cells import Action, Cell, CellKind, PlatformSupport
from compat.claim.columns import Column
from compat.claim.matrix import ArchStatus, Matrix
from compat.claim.words import phase_message
from compat.guard.fit import Fit, fit_for
from compat.guard.plan import BackendPlan, CellCheck, compiled
from compat.guard.report import Finding, Resolved
from compat.guard.resolve import phase_flag
from compat.inputs.config import Parsed
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, ModelFeature, Phase, Platform, Severity

_FLAGS: dict[tuple[bool, bool, tuple[Phase, ...]], tuple[str, ...]] = {}


def flags_for(parsed: Parsed, phases: tuple[Phase, ...]) -> tuple[str, ...]:
    """The flags that chose the backend of `phases`, each once."""
    key = (parsed.prefill is None, parsed.decode is None, phases)
    flags = _FLAGS.get(key)
    if flags is None:
        flags = _FLAGS[key] = tuple(dict.fromkeys(phase_flag(parsed, phase) for phase in phases))
    return flags


def phase_finding(parsed: Parsed, backend: Backend, phase: Phase, matrix: Matrix) -> Finding:
    serving = tuple(b.name for b in matrix.backends if phase in b.phases)
    return Finding(
        phase_rule_id(backend),
        Severity.ERROR,
        phase_message(backend, phase),
        (phase_flag(parsed, phase),),
        value=backend.name,
        allowed=serving,
        backend=backend.name,
        phases=(phase,),
    )


def arch_finding(
    parsed: Parsed, plan: BackendPlan, phases: tuple[Phase, ...], arch: Arch, matrix: Matrix
) -> Finding:
    name = plan.backend.name
    with_row = plan.arch_rows
    refused = plan.status is ArchStatus.REFUSED
    return Finding(
        "arch-refused" if refused else "arch-undocumented",
        Severity.ERROR if refused else Severity.WARNING,
        f"{name} {'does not work with' if refused else 'is undocumented for'} "
        f"{arch.label} models (it has no row in the {arch.label} table)",
        flags_for(parsed, phases),
        value=name,
        allowed=with_row,
        backend=name,
        phases=phases,
    )


def platform_finding(
    parsed: Parsed,
    resolved: Resolved,
    plan: BackendPlan,
    support: PlatformSupport | None,
    phases: tuple[Phase, ...],
) -> Finding:
    name = plan.backend.name
    runs_on = plan.runs_on
    missing = support is None
    if missing:
        message = (
            f"{name} does not run on {resolved.platform.value} (it runs on {', '.join(runs_on)})"
        )
    else:  # the platforms it runs on include this one: name those the page marks tested
        tested = [p.value for p in Platform if plan.platforms.get(p) is PlatformSupport.SUPPORTED]
        where = f"tested on {', '.join(tested)}" if tested else "tested on none"
        message = f"{name} is untested on {resolved.platform.value} (the page marks it {where})"
    return Finding(
        "platform-unsupported" if missing else "platform-untested",
        Severity.ERROR if missing else Severity.WARNING,
        message,
        (*flags_for(parsed, phases), "--platform"),
        value=resolved.platform.value,
        allowed=runs_on,
        backend=name,
        phases=phases,
    )


def capability_finding(
    parsed: Parsed,
    resolved: Resolved,
    name: str,
    needed: CapabilityRange,
    phases: tuple[Phase, ...],
) -> Finding:
    arch = resolved.arch
    capability = resolved.compute_capability
    if capability is None:
        return Finding(
            "compute-capability-unknown",
            Severity.INFO,
            f"{name} needs {needed.label} for {arch.label} models; the compute capability is "
            "unknown, so this was not checked",
            ("--compute-capability",),
            allowed=(needed.label,),
            backend=name,
            phases=phases,
        )
    return Finding(
        "compute-capability",
        Severity.ERROR,
        f"{name} needs {needed.label} for {arch.label} models, not {capability}",
        (*flags_for(parsed, phases), "--compute-capability"),
        value=str(capability),
        allowed=(needed.label,),
        backend=name,
        phases=phases,
    )


def feature_findings(
    parsed: Parsed, backend: Backend, phases: tuple[Phase, ...], findings: list[Finding]
) -> None:
    name = backend.name
    for feature in sorted(backend.requires_features - parsed.features, key=_feature_order):
        findings.append(
            Finding(
                "model-feature-required",
                Severity.ERROR,
                f"{name} serves only models with {feature.label}; this model has none",
                flags_for(parsed, phases),
                value=name,
                backend=name,
                phases=phases,
            )
        )
    for feature in sorted(backend.refuses_features & parsed.features, key=_feature_order):
        findings.append(
            Finding(
                "model-feature-refused",
                Severity.ERROR,
                f"{name} cannot serve models with {feature.label}",
                flags_for(parsed, phases),
                value=name,
                backend=name,
                phases=phases,
            )
        )


def _feature_order(feature: ModelFeature) -> int:
    return list(ModelFeature).index(feature)


def missing_row_finding(
    parsed: Parsed,
    resolved: Resolved,
    name: str,
    cell_check: CellCheck,
    phases: tuple[Phase, ...],
    matrix: Matrix,
) -> Finding:
    """A refusing column needs a ✅; a backend without a row in the table has none."""
    arch = resolved.arch
    column = cell_check.column
    column_id = column.id
    fit = fit_for(parsed, compiled(matrix))
    allowed = fit.fitting(matrix.supporting_in(arch, column_id, phases))
    setting = column.when.setting(resolved)
    return Finding(
        column_id.rule_id,
        Severity.ERROR,
        f"{cell_check.header} ({setting}) needs a ✅ in the {arch.label} table, and {name} has "
        f"no row there; {_with_check(matrix.supporting_in(arch, column_id, phases), fit)}",
        (*flags_for(parsed, phases), *column.flags),
        value=name,
        allowed=allowed,
        backend=name,
        phases=phases,
    )


def cell_finding(
    parsed: Parsed,
    resolved: Resolved,
    column: Column,
    cell: Cell,
    name: str,
    phases: tuple[Phase, ...],
    matrix: Matrix,
) -> Finding | None:
    arch = resolved.arch
    column_id = column.id
    header = matrix.header(arch, column_id) or column_id.value
    flags = (*flags_for(parsed, phases), *column.flags)
    setting = column.when.setting(resolved)
    with_setting = f" ({setting})" if setting else ""
    # The ✅ backends that run this model on this machine: the others are counted, not named.
    fit = fit_for(parsed, compiled(matrix))
    supporting = matrix.supporting_in(arch, column_id, phases)
    allowed = fit.fitting(supporting)
    kind = cell.kind
    if column.action is Action.SNAP:  # fixed sizes are snapped to; other sizes are emulated
        if kind is CellKind.PAGE_SIZES and (cell.fixed or resolved.page_size in cell.page_sizes):
            return None
        return _emulated_paging_finding(resolved, column, name, flags, allowed, phases)
    if kind is CellKind.CONDITIONAL:
        if resolved.page_size in cell.page_sizes:
            return None
        return _page_size_finding(resolved, column, cell, header, name, flags, phases)
    if kind is CellKind.NOT_STATED:
        return Finding(
            column_id.rule_id,
            Severity.WARNING,
            not_stated_message(header, setting, name, arch),
            flags,
            value=name,
            allowed=allowed,
            backend=name,
            phases=phases,
        )
    if kind is CellKind.UNTESTED:
        return Finding(
            column_id.rule_id,
            Severity.WARNING,
            f"{header}{with_setting} is untested on {name} for {arch.label} models",
            flags,
            value=name,
            allowed=allowed,
            backend=name,
            phases=phases,
        )
    what = "is disabled" if column.action.severity is Severity.INFO else "is not supported"
    return Finding(
        column_id.rule_id,
        column.action.severity,
        f"{header}{with_setting} {what} on {name} for {arch.label} models "
        f"({_phase_words(phases)}); {_with_check(supporting, fit)}",
        flags,
        value=name,
        allowed=allowed,
        backend=name,
        phases=phases,
    )


def _with_check(supporting: tuple[str, ...], fit: Fit) -> str:
    if not supporting:
        return "backends with ✅: none"
    return f"backends with ✅: {fit.named(supporting)}"


def _emulated_paging_finding(
    resolved: Resolved,
    column: Column,
    name: str,
    flags: tuple[str, ...],
    allowed: tuple[str, ...],
    phases: tuple[Phase, ...],
) -> Finding:
    """A page size the kernel does not page natively: SGLang emulates it (info)."""
    return Finding(
        column.id.rule_id,
        Severity.INFO,
        f"{name} has no native paging for page size {resolved.page_size}; SGLang "
        "emulates it by expanding page tables",
        flags,
        value=str(resolved.page_size),
        allowed=allowed,
        backend=name,
        phases=phases,
    )


def _page_size_finding(
    resolved: Resolved,
    column: Column,
    cell: Cell,
    header: str,
    name: str,
    flags: tuple[str, ...],
    phases: tuple[Phase, ...],
) -> Finding:
    """A conditional cell (✅ only with given page sizes) met with another page size."""
    sizes = ", ".join(map(str, cell.page_sizes))
    return Finding(
        column.id.rule_id,
        column.action.severity,
        f"{name} supports {header} for {resolved.arch.label} models only with --page-size "
        f"{sizes}, not {resolved.page_size}",
        (*flags, "--page-size"),
        value=str(resolved.page_size),
        allowed=tuple(map(str, cell.page_sizes)),
        backend=name,
        phases=phases,
    )


def _phase_words(phases: tuple[Phase, ...]) -> str:
    if len(phases) == 2:
        return "both phases"
    return f"{phases[0].value} phase"


def kv_dtype_finding(
    parsed: Parsed, resolved: Resolved, backend: Backend, phases: tuple[Phase, ...]
) -> Finding:
    accepted = tuple(sorted(d.value for d in backend.kv_dtypes or ()))
    return Finding(
        "backend-kv-dtype",
        Severity.ERROR,
        f"{backend.name} accepts --kv-cache-dtype {', '.join(accepted)} only, not "
        f"{resolved.kv_dtype.value}",
        (*flags_for(parsed, phases), "--kv-cache-dtype"),
        value=resolved.kv_dtype.value,
        allowed=accepted,
        backend=backend.name,
        phases=phases,
    )


def cuda_graph_finding(parsed: Parsed, name: str, phases: tuple[Phase, ...]) -> Finding:
    return Finding(
        "cuda-graph-disabled",
        Severity.INFO,
        f"{name} turns CUDA graphs off",
        flags_for(parsed, phases),
        value=name,
        backend=name,
        phases=phases,
    )


UNMODELLED_RELEASE_RULE = "release-newer-than-modelled"


@cache
def unmodelled_release_finding(asked: str, answering: str) -> Finding:
    """The report answers for `answering`, the newest release modelled, not for `asked`."""
    return Finding(
        UNMODELLED_RELEASE_RULE,
        Severity.WARNING,
        f"SGLang {asked} is newer than the newest release modelled ({answering}): answers "
        f"are {answering}'s",
        ("--sglang-version",),
        value=asked,
        allowed=(answering,),
    )
