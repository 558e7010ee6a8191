"""The runtime guard: judge a resolved configuration against every cell and rule of the matrix.

`check()` collects every finding (it never stops at the first) and never raises for an
incompatible combination; `enforce()` is the engine-side wrapper that raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from compat.config import AttentionConfig, Parsed
from compat.findings import (
    arch_finding,
    capability_finding,
    cell_finding,
    cuda_graph_finding,
    feature_findings,
    kv_dtype_finding,
    missing_row_finding,
    phase_finding,
    platform_finding,
)
from compat.plan import backend_plan
from compat.releases import release_matrix
from compat.report import (
    Enforcement,
    Finding,
    Report,
    Resolved,
    Suggestion,
)
from compat.resolve import phase_flag, resolve_applying
from compat.schema import ArchStatus, ColumnId, Matrix, kv_column
from compat.vocab import (
    CellKind,
    KvDtype,
    ModelFeature,
    Phase,
    Platform,
    Severity,
    SpeculativeAttentionMode,
)

_FEATURE_COLUMNS = {
    ColumnId.SLIDING_WINDOW: ModelFeature.SLIDING_WINDOW,
    ColumnId.MULTIMODAL: ModelFeature.MULTIMODAL,
}


def check(config: AttentionConfig, matrix: Matrix | None = None) -> Report:
    """Every finding about `config`; raises only InvalidConfigError, at construction.

    The page's facts are those of the release being predicted (`release_matrix`), unless
    `matrix` is given.
    """
    if not isinstance(config, AttentionConfig):
        raise TypeError(
            f"check() takes an AttentionConfig, got {type(config).__name__}; build one with "
            "AttentionConfig(...)"
        )
    parsed = config.parsed
    if matrix is None:
        matrix = release_matrix(parsed.release.release)
    findings: list[Finding] = []
    resolved, applied = resolve_applying(parsed, findings, matrix)
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
    release = parsed.release
    if applied or release.backend_build:
        _mark_enforcement(findings, applied, release.backend_build)
    return Report(
        config,
        resolved,
        tuple(findings),
        _suggester(matrix),
        release.release,
        parsed.version_source,
    )


def _mark_enforcement(
    findings: list[Finding],
    applied: frozenset[tuple[str, str | None]],
    build: Mapping[tuple[str, str], str],
) -> None:
    """Say where each documented finding is enforced, in place.

    A page finding whose rule SGLang's start-up code also applies (its twin `startup-RULE`
    for the same backend) is enforced at start-up; one that the release's backend
    constructors refuse fails later. Both findings stay: the page's words and SGLang's.
    """
    for index, finding in enumerate(findings):
        if finding.enforced is not Enforcement.DOCUMENTED:
            continue
        if (finding.rule, finding.backend) in applied:
            findings[index] = _retagged(finding, Enforcement.STARTUP)
        elif (finding.rule, finding.backend or "") in build:
            findings[index] = _retagged(finding, Enforcement.BACKEND_BUILD)


def _retagged(finding: Finding, enforced: Enforcement) -> Finding:
    """The same finding enforced elsewhere; memoized like the findings themselves."""
    known = _RETAGGED.get((id(finding), enforced))
    if known is None or known[0] is not finding:
        if len(_RETAGGED) > _MEMO_LIMIT:
            _RETAGGED.clear()
        known = _RETAGGED[(id(finding), enforced)] = (finding, replace(finding, enforced=enforced))
    return known[1]


_RETAGGED: dict[tuple[int, Enforcement], tuple[Finding, Finding]] = {}


BOTH_PHASES = (Phase.PREFILL, Phase.DECODE)
PREFILL_ONLY = (Phase.PREFILL,)
DECODE_ONLY = (Phase.DECODE,)


# Which column speaks for each KV dtype that has one (schema.kv_column), looked up per check.
_DTYPE_COLUMN = {dtype: kv_column(dtype) for dtype in KvDtype if dtype.is_fp4 or dtype.is_fp8}


def _active_columns(parsed: Parsed, resolved: Resolved) -> list[ColumnId]:
    """The columns whose subject this configuration uses (a handful: a list is fastest)."""
    active = [ColumnId.CHUNKED_PREFIX_CACHE]
    dtype_column = _DTYPE_COLUMN.get(resolved.kv_dtype)
    if dtype_column is not None:
        active.append(dtype_column)
    topk = resolved.topk
    if topk is not None:
        active.append(ColumnId.SPEC_TOPK_1 if topk == 1 else ColumnId.SPEC_TOPK_GT1)
    if resolved.page_size > 1:
        active.append(ColumnId.NATIVE_PAGE_SIZES)
    if parsed.features:
        for column_id, feature in _FEATURE_COLUMNS.items():
            if feature in parsed.features:
                active.append(column_id)
    return active


def _suggester(matrix: Matrix) -> Callable[[Report], tuple[Suggestion, ...]]:
    """The report's lazy suggestion search, one function per matrix."""
    suggest: Callable[[Report], tuple[Suggestion, ...]] | None = matrix.compiled.get("suggest")
    if suggest is None:

        def suggest(report: Report) -> tuple[Suggestion, ...]:
            from compat.suggest import suggest_fixes

            return suggest_fixes(report, lambda config: check(config, matrix), matrix)

        matrix.compiled["suggest"] = suggest
    return suggest


def _check_dtype_platform(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], matrix: Matrix
) -> None:
    requirement = matrix.dtype_requirement(resolved.kv_dtype)
    if requirement is None:
        return
    cuda = parsed.cuda_version
    if (requirement.platforms is None or resolved.platform in requirement.platforms) and (
        cuda is None or requirement.min_cuda is None
    ):
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
    active: list[ColumnId],
    findings: list[Finding],
    matrix: Matrix,
) -> None:
    """Judge one backend, serving `phases`, against its requirements and its row.

    Findings are immutable and fully determined by the inputs named in their memo key, so
    one built for an earlier configuration is reused; every rule is still evaluated.
    """
    arch = resolved.arch
    plan = backend_plan(matrix, arch, name)
    backend = plan.backend
    memo = _finding_memo(matrix)
    chosen_by = (parsed.prefill is None, parsed.decode is None)
    # Draft and verify run on the decode backend in this mode; plain decode always does.
    verify_on_decode = parsed.spec_mode is SpeculativeAttentionMode.DECODE
    for phase in phases:
        if phase not in backend.phases:
            phase_key: tuple[object, ...] = ("phase", name, phase, chosen_by)
            finding = memo.get(phase_key)
            if finding is None:
                finding = memo[phase_key] = phase_finding(parsed, backend, phase, matrix)
            findings.append(finding)
    if plan.status is not ArchStatus.ROW:
        findings.append(
            _memoized(
                memo,
                ("arch", name, arch, phases, chosen_by),
                lambda: arch_finding(parsed, plan, phases, arch, matrix),
            )
        )
    platform = resolved.platform
    kind = plan.platforms.get(platform)
    if kind is not CellKind.SUPPORTED:
        findings.append(
            _memoized(
                memo,
                ("platform", name, arch, platform, phases, chosen_by),
                lambda: platform_finding(parsed, resolved, plan, kind, phases),
            )
        )
    needed = plan.capability
    if needed is not None and platform is Platform.CUDA:
        capability = resolved.compute_capability
        if capability is None or not (
            needed.min_major <= capability.major
            and (needed.max_major is None or capability.major <= needed.max_major)
        ):
            findings.append(
                _memoized(
                    memo,
                    ("capability", name, arch, capability, phases, chosen_by),
                    lambda: capability_finding(parsed, resolved, name, needed, phases),
                )
            )
    if backend.kv_dtypes is not None and resolved.kv_dtype not in backend.kv_dtypes:
        findings.append(kv_dtype_finding(parsed, resolved, backend, phases))
    if backend.requires_features or backend.refuses_features:
        feature_findings(parsed, backend, phases, findings)
    if backend.disables_cuda_graph and platform is Platform.CUDA:
        findings.append(
            _memoized(
                memo,
                ("cuda-graph", name, phases, chosen_by),
                lambda: cuda_graph_finding(parsed, name, phases),
            )
        )
    for cell_check in plan.cell_checks:
        if cell_check.column.id not in active:
            continue
        checked = (
            phases if cell_check.all_phases else tuple(p for p in phases if p in cell_check.phases)
        )
        if verify_on_decode and cell_check.column.id in _SPEC_COLUMNS:
            checked = tuple(p for p in checked if p is not Phase.PREFILL)
        if not checked:
            continue
        key = (
            "cell",
            id(cell_check),
            checked,
            resolved.page_size,
            resolved.topk,
            resolved.kv_dtype,
            chosen_by,
        )
        finding = memo.get(key, _MISSING)
        if finding is _MISSING:
            finding = memo[key] = (
                missing_row_finding(parsed, resolved, name, cell_check, checked, matrix)
                if cell_check.cell is None
                else cell_finding(
                    parsed, resolved, cell_check.column, cell_check.cell, name, checked, matrix
                )
            )
        if finding is not None:
            findings.append(finding)


_MISSING = object()
_SPEC_COLUMNS = frozenset({ColumnId.SPEC_TOPK_1, ColumnId.SPEC_TOPK_GT1})
# A long-running process checking ever new page sizes must not grow the memo forever.
_MEMO_LIMIT = 50_000


def _finding_memo(matrix: Matrix) -> dict[tuple[object, ...], Any]:
    memo: dict[tuple[object, ...], Any] | None = matrix.compiled.get("findings")
    if memo is None or len(memo) > _MEMO_LIMIT:
        memo = matrix.compiled["findings"] = {}
    return memo


def _memoized(
    memo: dict[tuple[object, ...], Any], key: tuple[object, ...], build: Callable[[], Finding]
) -> Finding:
    finding: Finding | None = memo.get(key)
    if finding is None:
        finding = memo[key] = build()
    return finding


def _check_rules(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], matrix: Matrix
) -> None:
    prefill, decode, arch = resolved.prefill_backend, resolved.decode_backend, resolved.arch
    paired = False
    for rule in matrix.pairing_rules:
        if not resolved.kv_dtype.same_family(rule.kv_dtype) or prefill != rule.prefill_backend:
            continue
        paired = True
        if decode in rule.excluded_decode:
            partners = matrix.decode_partners(rule, arch)
            findings.append(
                Finding(
                    rule.id,
                    Severity.ERROR,
                    f"with --kv-cache-dtype {resolved.kv_dtype.value}, prefill on "
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
            if resolved.kv_dtype.same_family(caution.kv_dtype):
                findings.append(
                    Finding(
                        caution.id,
                        Severity.WARNING,
                        f"--kv-cache-dtype {resolved.kv_dtype.value} with prefill on {prefill} "
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
            if phase is Phase.PREFILL and parsed.spec_mode is SpeculativeAttentionMode.DECODE:
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


# enforce() lives in compat.server_args (it imports check() from here when it runs); the SGLang
# plugin, and callers written before it moved, name it here.
from compat.server_args import enforce as enforce  # noqa: E402
