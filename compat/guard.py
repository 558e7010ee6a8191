"""The runtime guard: judge a resolved configuration against every cell and rule of the matrix.

`check()` collects every finding (it never stops at the first) and never raises for an
incompatible combination; `enforce()` is the engine-side wrapper that raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from compat.config import AttentionConfig, Parsed
from compat.matrix import MATRIX
from compat.plan import BackendPlan, CellCheck, backend_plan
from compat.report import Finding, IncompatibleConfigError, Report, Resolved, Suggestion
from compat.resolve import phase_flag, resolve
from compat.schema import ArchStatus, Backend, Column, ColumnId, Matrix, phase_rule_id
from compat.vocab import (
    Arch,
    CapabilityRange,
    Cell,
    CellKind,
    KvDtype,
    ModelFeature,
    Phase,
    Platform,
    Severity,
)

logger = logging.getLogger("compat")

_FEATURE_COLUMNS = {
    ColumnId.SLIDING_WINDOW: ModelFeature.SLIDING_WINDOW,
    ColumnId.MULTIMODAL: ModelFeature.MULTIMODAL,
}


def check(config: AttentionConfig, matrix: Matrix = MATRIX) -> Report:
    """Every finding about `config`; raises only InvalidConfigError, at construction."""
    parsed = config.parsed
    findings: list[Finding] = []
    resolved = resolve(parsed, findings, matrix)
    _check_dtype_platform(parsed, resolved, findings, matrix)
    prefill, decode = resolved.prefill_backend, resolved.decode_backend
    active = _active_columns(parsed, resolved)
    if prefill is not None and prefill == decode:
        _check_backend(parsed, resolved, prefill, BOTH_PHASES, active, findings, matrix)
    else:
        if prefill is not None:
            _check_backend(parsed, resolved, prefill, PREFILL_ONLY, active, findings, matrix)
        if decode is not None:
            _check_backend(parsed, resolved, decode, DECODE_ONLY, active, findings, matrix)
    _check_rules(parsed, resolved, findings, matrix)
    return Report(config, resolved, tuple(findings), _suggester(matrix))


BOTH_PHASES = (Phase.PREFILL, Phase.DECODE)
PREFILL_ONLY = (Phase.PREFILL,)
DECODE_ONLY = (Phase.DECODE,)


def _active_columns(parsed: Parsed, resolved: Resolved) -> frozenset[ColumnId]:
    """The columns whose subject this configuration uses."""
    active = [ColumnId.CHUNKED_PREFIX_CACHE]
    dtype = resolved.kv_dtype
    if dtype is KvDtype.FP4_E2M1:
        active.append(ColumnId.FP4_KV)
    elif dtype is KvDtype.FP8_E4M3 or dtype is KvDtype.FP8_E5M2:
        active.append(ColumnId.FP8_KV)
    topk = resolved.topk
    if topk is not None:
        active.append(ColumnId.SPEC_TOPK_1 if topk == 1 else ColumnId.SPEC_TOPK_GT1)
    if resolved.page_size > 1:
        active.append(ColumnId.NATIVE_PAGE_SIZES)
    for column_id, feature in _FEATURE_COLUMNS.items():
        if feature in parsed.features:
            active.append(column_id)
    return frozenset(active)


def _suggester(matrix: Matrix) -> Callable[[Report], tuple[Suggestion, ...]]:
    def suggest(report: Report) -> tuple[Suggestion, ...]:
        from compat.suggest import suggest_fixes

        return suggest_fixes(report, lambda config: check(config, matrix), matrix)

    return suggest


_FLAGS: dict[tuple[bool, bool, tuple[Phase, ...]], tuple[str, ...]] = {}


def _flags(parsed: Parsed, phases: tuple[Phase, ...]) -> tuple[str, ...]:
    """The flags that chose the backend of `phases`, each once."""
    key = (parsed.prefill is None, parsed.decode is None, phases)
    flags = _FLAGS.get(key)
    if flags is None:
        flags = _FLAGS[key] = tuple(dict.fromkeys(phase_flag(parsed, phase) for phase in phases))
    return flags


def _check_dtype_platform(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], matrix: Matrix
) -> None:
    requirement = matrix.dtype_requirement(resolved.kv_dtype)
    if requirement is None:
        return
    dtype = resolved.kv_dtype.value
    if requirement.platforms is not None and resolved.platform not in requirement.platforms:
        allowed = tuple(p.value for p in Platform if p in requirement.platforms)
        findings.append(
            Finding(
                requirement.rule_id,
                Severity.ERROR,
                f"--kv-cache-dtype {dtype} runs only on {', '.join(allowed)}, not on "
                f"{resolved.platform.value}",
                ("--kv-cache-dtype", "--platform"),
                value=resolved.platform.value,
                allowed=allowed,
            )
        )
    cuda = parsed.cuda_version
    if (
        resolved.platform is Platform.CUDA
        and cuda is not None
        and requirement.min_cuda is not None
        and cuda < requirement.min_cuda
    ):
        need = ".".join(map(str, requirement.min_cuda))
        findings.append(
            Finding(
                requirement.rule_id,
                Severity.ERROR,
                f"--kv-cache-dtype {dtype} needs CUDA {need} or newer; this build has "
                f"CUDA {cuda[0]}.{cuda[1]}",
                ("--kv-cache-dtype",),
                value=f"{cuda[0]}.{cuda[1]}",
                allowed=(f">={need}",),
            )
        )


def _check_backend(
    parsed: Parsed,
    resolved: Resolved,
    name: str,
    phases: tuple[Phase, ...],
    active: frozenset[ColumnId],
    findings: list[Finding],
    matrix: Matrix,
) -> None:
    arch = resolved.arch
    plan = backend_plan(matrix, arch, name)
    backend = plan.backend
    for phase in phases:
        if phase not in backend.phases:
            findings.append(_phase_finding(parsed, backend, phase, matrix))
    if plan.status is not ArchStatus.ROW:
        findings.append(_arch_finding(parsed, plan, phases, arch, matrix))
    kind = plan.platforms.get(resolved.platform)
    if kind is not CellKind.SUPPORTED:
        findings.append(_platform_finding(parsed, resolved, plan, kind, phases))
    needed = plan.capability
    capability = resolved.compute_capability
    if (
        needed is not None
        and resolved.platform is Platform.CUDA
        and (capability is None or capability not in needed)
    ):
        findings.append(_capability_finding(parsed, resolved, name, needed, phases))
    if backend.kv_dtypes is not None and resolved.kv_dtype not in backend.kv_dtypes:
        accepted = tuple(sorted(d.value for d in backend.kv_dtypes))
        findings.append(
            Finding(
                "backend-kv-dtype",
                Severity.ERROR,
                f"{name} accepts --kv-cache-dtype {', '.join(accepted)} only, not "
                f"{resolved.kv_dtype.value}",
                (*_flags(parsed, phases), "--kv-cache-dtype"),
                value=resolved.kv_dtype.value,
                allowed=accepted,
                backend=name,
                phases=phases,
            )
        )
    if backend.requires_features or backend.refuses_features:
        _check_features(parsed, backend, phases, findings)
    if backend.disables_cuda_graph and resolved.platform is Platform.CUDA:
        findings.append(
            Finding(
                "cuda-graph-disabled",
                Severity.INFO,
                f"{name} turns CUDA graphs off",
                _flags(parsed, phases),
                value=name,
                backend=name,
                phases=phases,
            )
        )
    for cell_check in plan.cell_checks:
        if cell_check.column.id not in active:
            continue
        checked = tuple(p for p in phases if p in cell_check.phases)
        if not checked:
            continue
        if cell_check.cell is None:
            findings.append(
                _missing_row_finding(parsed, resolved, name, cell_check, checked, matrix)
            )
            continue
        finding = _cell_finding(
            parsed, resolved, cell_check.column, cell_check.cell, name, checked, matrix
        )
        if finding is not None:
            findings.append(finding)


def _phase_finding(parsed: Parsed, backend: Backend, phase: Phase, matrix: Matrix) -> Finding:
    serving = tuple(b.name for b in matrix.backends if phase in b.phases)
    runs = " and ".join(p.value for p in Phase if p in backend.phases)
    return Finding(
        phase_rule_id(backend),
        Severity.ERROR,
        f"{backend.name} cannot serve the {phase.value} phase (it runs only {runs}); choose "
        f"another {phase.flag}",
        (phase_flag(parsed, phase),),
        value=backend.name,
        allowed=serving,
        backend=backend.name,
        phases=(phase,),
    )


def _arch_finding(
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
        _flags(parsed, phases),
        value=name,
        allowed=with_row,
        backend=name,
        phases=phases,
    )


def _platform_finding(
    parsed: Parsed,
    resolved: Resolved,
    plan: BackendPlan,
    kind: CellKind | None,
    phases: tuple[Phase, ...],
) -> Finding:
    name = plan.backend.name
    runs_on = plan.runs_on
    missing = kind is None
    return Finding(
        "platform-unsupported" if missing else "platform-untested",
        Severity.ERROR if missing else Severity.WARNING,
        f"{name} {'does not run' if missing else 'is untested'} on "
        f"{resolved.platform.value} (it runs on {', '.join(runs_on)})",
        (*_flags(parsed, phases), "--platform"),
        value=resolved.platform.value,
        allowed=runs_on,
        backend=name,
        phases=phases,
    )


def _capability_finding(
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
        (*_flags(parsed, phases), "--compute-capability"),
        value=str(capability),
        allowed=(needed.label,),
        backend=name,
        phases=phases,
    )


def _check_features(
    parsed: Parsed, backend: Backend, phases: tuple[Phase, ...], findings: list[Finding]
) -> None:
    name = backend.name
    for feature in sorted(backend.requires_features - parsed.features, key=_feature_order):
        findings.append(
            Finding(
                "model-feature-required",
                Severity.ERROR,
                f"{name} serves only models with {feature.label}; this model has none",
                _flags(parsed, phases),
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
                _flags(parsed, phases),
                value=name,
                backend=name,
                phases=phases,
            )
        )


def _feature_order(feature: ModelFeature) -> int:
    return list(ModelFeature).index(feature)


def _missing_row_finding(
    parsed: Parsed,
    resolved: Resolved,
    name: str,
    cell_check: CellCheck,
    phases: tuple[Phase, ...],
    matrix: Matrix,
) -> Finding:
    """A refusing column needs a ✅; a backend without a row in the table has none."""
    arch = resolved.arch
    column_id = cell_check.column.id
    allowed = matrix.supporting_in(arch, column_id, phases)
    setting = _column_setting(column_id, resolved)
    return Finding(
        column_id.rule_id,
        Severity.ERROR,
        f"{cell_check.header} ({setting}) needs a ✅ in the {arch.label} table, and {name} has "
        f"no row there; backends with ✅: {', '.join(allowed) or 'none'}",
        (*_flags(parsed, phases), *_COLUMN_FLAGS.get(column_id, ())),
        value=name,
        allowed=allowed,
        backend=name,
        phases=phases,
    )


def _column_setting(column_id: ColumnId, resolved: Resolved) -> str:
    if column_id is ColumnId.FP8_KV or column_id is ColumnId.FP4_KV:
        return f"--kv-cache-dtype {resolved.kv_dtype.value}"
    if column_id is ColumnId.SPEC_TOPK_1 or column_id is ColumnId.SPEC_TOPK_GT1:
        return f"--speculative-eagle-topk {resolved.topk}"
    if column_id is ColumnId.NATIVE_PAGE_SIZES:
        return f"--page-size {resolved.page_size}"
    return ""


_COLUMN_FLAGS = {
    ColumnId.FP8_KV: ("--kv-cache-dtype",),
    ColumnId.FP4_KV: ("--kv-cache-dtype",),
    ColumnId.SPEC_TOPK_1: ("--speculative-algorithm", "--speculative-eagle-topk"),
    ColumnId.SPEC_TOPK_GT1: ("--speculative-eagle-topk",),
    ColumnId.NATIVE_PAGE_SIZES: ("--page-size",),
}


def _cell_finding(
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
    flags = (*_flags(parsed, phases), *_COLUMN_FLAGS.get(column_id, ()))
    setting = _column_setting(column_id, resolved)
    with_setting = f" ({setting})" if setting else ""
    allowed = matrix.supporting_in(arch, column_id, phases)
    kind = cell.kind
    if column_id is ColumnId.NATIVE_PAGE_SIZES:
        if kind is CellKind.PAGE_SIZES and (cell.fixed or resolved.page_size in cell.page_sizes):
            return None
        return Finding(
            column_id.rule_id,
            Severity.INFO,
            f"{name} has no native paging for page size {resolved.page_size}; SGLang "
            "emulates it by expanding page tables",
            flags,
            value=str(resolved.page_size),
            allowed=allowed,
            backend=name,
            phases=phases,
        )
    if kind is CellKind.CONDITIONAL:
        if resolved.page_size in cell.page_sizes:
            return None
        sizes = ", ".join(map(str, cell.page_sizes))
        return Finding(
            column_id.rule_id,
            column.action.severity,
            f"{name} supports {header} for {arch.label} models only with --page-size {sizes}, "
            f"not {resolved.page_size}",
            (*flags, "--page-size"),
            value=str(resolved.page_size),
            allowed=tuple(map(str, cell.page_sizes)),
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
        f"({_phase_words(phases)}); backends with ✅: {', '.join(allowed) or 'none'}",
        flags,
        value=name,
        allowed=allowed,
        backend=name,
        phases=phases,
    )


def _phase_words(phases: tuple[Phase, ...]) -> str:
    if len(phases) == 2:
        return "both phases"
    return f"{phases[0].value} phase"


def _check_rules(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], matrix: Matrix
) -> None:
    prefill, decode, arch = resolved.prefill_backend, resolved.decode_backend, resolved.arch
    paired = False
    for rule in matrix.pairing_rules:
        if resolved.kv_dtype is not rule.kv_dtype or prefill != rule.prefill_backend:
            continue
        paired = True
        if decode in rule.excluded_decode:
            partners = matrix.decode_partners(rule, arch)
            findings.append(
                Finding(
                    rule.id,
                    Severity.ERROR,
                    f"with --kv-cache-dtype {rule.kv_dtype.value}, prefill on "
                    f"{rule.prefill_backend} cannot pair with decode on {decode}; use "
                    f"--decode-attention-backend {' or '.join(partners)}",
                    (phase_flag(parsed, Phase.DECODE), "--kv-cache-dtype"),
                    value=decode,
                    allowed=partners,
                    backend=decode,
                    phases=(Phase.DECODE,),
                )
            )
    if prefill is not None and decode is not None and prefill != decode and not paired:
        for caution in matrix.hybrid_caution_rules:
            if resolved.kv_dtype is caution.kv_dtype:
                findings.append(
                    Finding(
                        caution.id,
                        Severity.WARNING,
                        f"--kv-cache-dtype {caution.kv_dtype.value} with prefill on {prefill} "
                        f"and decode on {decode}: a hybrid pair may hit rare edge cases",
                        ("--prefill-attention-backend", "--decode-attention-backend"),
                        value=f"{prefill}+{decode}",
                    )
                )
    topk = resolved.topk
    if topk is None or topk <= 1 or resolved.page_size <= 1:
        return
    for spec_rule in matrix.spec_paged_rules:
        if arch is not spec_rule.arch:
            continue
        for phase, name in ((Phase.PREFILL, prefill), (Phase.DECODE, decode)):
            if name is None or name in spec_rule.backends:
                continue
            if phase is Phase.DECODE and name == prefill:
                continue
            findings.append(
                Finding(
                    spec_rule.id,
                    Severity.ERROR,
                    f"speculative topk {topk} with page size {resolved.page_size} runs only on "
                    f"{', '.join(sorted(spec_rule.backends))} for {arch.label} models, not {name}",
                    (phase_flag(parsed, phase), "--speculative-eagle-topk", "--page-size"),
                    value=name,
                    allowed=tuple(sorted(spec_rule.backends)),
                    backend=name,
                    phases=(phase,),
                )
            )


def enforce(
    server_args: Any,
    *,
    attention_arch: str,
    platform: str | None = None,
    compute_capability: tuple[int, int] | str | None = None,
    sliding_window: bool = False,
    multimodal: bool = False,
) -> Report:
    """Check SGLang's ServerArgs (duck-typed) at start-up; raise if the model would not run.

    Platform and compute capability are detected with torch when not given. Warnings are
    logged on the `compat` logger; the report is returned when nothing is an error.
    """
    cuda_version = None
    detected = None
    if platform is None:
        from compat.detect import detect_platform

        detected = detect_platform()
        platform = detected.platform.value
        if compute_capability is None and detected.compute_capability is not None:
            compute_capability = (
                detected.compute_capability.major,
                detected.compute_capability.minor,
            )
        cuda_version = detected.cuda_version
    config = AttentionConfig(
        attention_backend=getattr(server_args, "attention_backend", None),
        prefill_attention_backend=getattr(server_args, "prefill_attention_backend", None),
        decode_attention_backend=getattr(server_args, "decode_attention_backend", None),
        kv_cache_dtype=getattr(server_args, "kv_cache_dtype", "auto"),
        page_size=getattr(server_args, "page_size", None),
        speculative_algorithm=getattr(server_args, "speculative_algorithm", None),
        speculative_eagle_topk=getattr(server_args, "speculative_eagle_topk", None),
        speculative_attention_mode=getattr(server_args, "speculative_attention_mode", "prefill"),
        attention_arch=attention_arch,
        platform=platform,
        compute_capability=compute_capability,
        sliding_window=sliding_window,
        multimodal=multimodal,
        cuda_version=cuda_version,
    )
    report = check(config)
    if detected is not None:
        from compat.detect import with_software_findings

        report = with_software_findings(report, detected)
    for finding in report.warnings:
        logger.warning("[%s] %s", finding.rule, finding.message)
    for finding in report.infos:
        logger.info("[%s] %s", finding.rule, finding.message)
    if not report.ok:
        raise IncompatibleConfigError(report)
    return report
