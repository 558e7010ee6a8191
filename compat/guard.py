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
from compat.report import Finding, IncompatibleConfigError, Report, Resolved, Suggestion
from compat.resolve import phase_flag, resolve
from compat.schema import ArchStatus, Column, ColumnId, Matrix, phase_rule_id
from compat.vocab import Cell, CellKind, ModelFeature, Phase, Platform, Severity

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
    uses: dict[str, list[Phase]] = {}
    for phase in (Phase.PREFILL, Phase.DECODE):
        name = resolved.backend(phase)
        if name is not None:
            uses.setdefault(name, []).append(phase)
    for name, phases in uses.items():
        _check_backend(parsed, resolved, name, tuple(phases), findings, matrix)
    _check_rules(parsed, resolved, findings, matrix)
    return Report(config, resolved, tuple(findings), _suggester(matrix))


def _suggester(matrix: Matrix) -> Callable[[Report], tuple[Suggestion, ...]]:
    def suggest(report: Report) -> tuple[Suggestion, ...]:
        from compat.suggest import suggest_fixes

        return suggest_fixes(report, lambda config: check(config, matrix), matrix)

    return suggest


def _flags(parsed: Parsed, phases: tuple[Phase, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(phase_flag(parsed, phase) for phase in phases))


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
    findings: list[Finding],
    matrix: Matrix,
) -> None:
    backend = matrix.backend(name)
    flags = _flags(parsed, phases)
    arch = resolved.arch
    for phase in phases:
        if phase not in backend.phases:
            serving = tuple(b.name for b in matrix.backends if phase in b.phases)
            findings.append(
                Finding(
                    phase_rule_id(backend),
                    Severity.ERROR,
                    f"{name} cannot serve the {phase.value} phase (it runs only "
                    f"{' and '.join(p.value for p in Phase if p in backend.phases)}); choose "
                    f"another {phase.flag}",
                    (phase_flag(parsed, phase),),
                    value=name,
                    allowed=serving,
                    backend=name,
                    phases=(phase,),
                )
            )
    status = matrix.arch_status(name, arch)
    if status is not ArchStatus.ROW:
        with_row = tuple(row.backend for row in matrix.table(arch).rows)
        refused = status is ArchStatus.REFUSED
        findings.append(
            Finding(
                "arch-refused" if refused else "arch-undocumented",
                Severity.ERROR if refused else Severity.WARNING,
                f"{name} {'does not work with' if refused else 'is undocumented for'} "
                f"{arch.label} models (it has no row in the {arch.label} table)",
                flags,
                value=name,
                allowed=with_row,
                backend=name,
                phases=phases,
            )
        )
    kind = backend.platforms.get(resolved.platform)
    if kind is None or kind is CellKind.UNTESTED:
        runs_on = tuple(p.value for p in Platform if p in backend.platforms)
        findings.append(
            Finding(
                "platform-unsupported" if kind is None else "platform-untested",
                Severity.ERROR if kind is None else Severity.WARNING,
                f"{name} {'does not run' if kind is None else 'is untested'} on "
                f"{resolved.platform.value} (it runs on {', '.join(runs_on)})",
                (*flags, "--platform"),
                value=resolved.platform.value,
                allowed=runs_on,
                backend=name,
                phases=phases,
            )
        )
    needed = backend.capability.get(arch)
    capability = resolved.compute_capability
    if needed is not None and resolved.platform is Platform.CUDA:
        if capability is None:
            findings.append(
                Finding(
                    "compute-capability-unknown",
                    Severity.INFO,
                    f"{name} needs {needed.label} for {arch.label} models; the compute "
                    "capability is unknown, so this was not checked",
                    ("--compute-capability",),
                    allowed=(needed.label,),
                    backend=name,
                    phases=phases,
                )
            )
        elif capability not in needed:
            findings.append(
                Finding(
                    "compute-capability",
                    Severity.ERROR,
                    f"{name} needs {needed.label} for {arch.label} models, not {capability}",
                    (*flags, "--compute-capability"),
                    value=str(capability),
                    allowed=(needed.label,),
                    backend=name,
                    phases=phases,
                )
            )
    if backend.kv_dtypes is not None and resolved.kv_dtype not in backend.kv_dtypes:
        accepted = tuple(d.value for d in backend.kv_dtypes)
        findings.append(
            Finding(
                "backend-kv-dtype",
                Severity.ERROR,
                f"{name} accepts --kv-cache-dtype {', '.join(sorted(accepted))} only, not "
                f"{resolved.kv_dtype.value}",
                (*flags, "--kv-cache-dtype"),
                value=resolved.kv_dtype.value,
                allowed=tuple(sorted(accepted)),
                backend=name,
                phases=phases,
            )
        )
    for feature in backend.requires_features - parsed.features:
        findings.append(
            Finding(
                "model-feature-required",
                Severity.ERROR,
                f"{name} serves only models with {feature.label}; this model has none",
                flags,
                value=name,
                backend=name,
                phases=phases,
            )
        )
    for feature in backend.refuses_features & parsed.features:
        findings.append(
            Finding(
                "model-feature-refused",
                Severity.ERROR,
                f"{name} cannot serve {feature.label} models",
                flags,
                value=name,
                backend=name,
                phases=phases,
            )
        )
    if backend.disables_cuda_graph and resolved.platform is Platform.CUDA:
        findings.append(
            Finding(
                "cuda-graph-disabled",
                Severity.INFO,
                f"{name} turns CUDA graphs off",
                flags,
                value=name,
                backend=name,
                phases=phases,
            )
        )
    row = matrix.row(arch, name)
    if row is None:
        return
    for column_id, cell in row.cells.items():
        if cell.kind is CellKind.SUPPORTED or cell.kind is CellKind.NOT_APPLICABLE:
            continue
        column = matrix.column(column_id)
        checked = tuple(p for p in phases if p in column.phases)
        if checked and _applies(column_id, parsed, resolved):
            finding = _cell_finding(parsed, resolved, column, cell, name, checked, matrix)
            if finding is not None:
                findings.append(finding)


def _applies(column_id: ColumnId, parsed: Parsed, resolved: Resolved) -> bool:
    """Whether this configuration uses what the column talks about."""
    if column_id is ColumnId.FP8_KV:
        return resolved.kv_dtype.is_fp8
    if column_id is ColumnId.FP4_KV:
        return resolved.kv_dtype.is_fp4
    if column_id is ColumnId.SPEC_TOPK_1:
        return resolved.topk == 1
    if column_id is ColumnId.SPEC_TOPK_GT1:
        return resolved.topk is not None and resolved.topk > 1
    if column_id is ColumnId.NATIVE_PAGE_SIZES:
        return resolved.page_size > 1
    if column_id is ColumnId.CHUNKED_PREFIX_CACHE:
        return True
    return _FEATURE_COLUMNS[column_id] in parsed.features


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
    allowed = tuple(
        b for b in matrix.supporting(arch, column_id)
        if all(p in matrix.backend(b).phases for p in phases)
    )
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
    for finding in report.warnings:
        logger.warning("[%s] %s", finding.rule, finding.message)
    for finding in report.infos:
        logger.info("[%s] %s", finding.rule, finding.message)
    if not report.ok:
        raise IncompatibleConfigError(report)
    return report
