"""The runtime guard: judge a resolved configuration against every cell and rule of the matrix.

`check()` collects every finding (it never stops at the first) and never raises for an
incompatible combination; `enforce()` is the engine-side wrapper that raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compat.claim import words as wording
from compat.claim.backends import Backend
from compat.claim.cells import PlatformSupport
from compat.claim.matrix import ArchStatus, Matrix
from compat.claim.rules import Breach
from compat.guard.findings import (
    arch_finding,
    capability_finding,
    cell_finding,
    cuda_graph_finding,
    feature_findings,
    kv_dtype_finding,
    missing_row_finding,
    phase_finding,
    platform_finding,
    unmodelled_release_finding,
)
from compat.guard.fit import Fit, fit_for
from compat.guard.marks import (
    DISPUTED_NO,
    mark_disputes,
    mark_enforcement,
    mark_warmup_failures,
    same_page,
)
from compat.guard.plan import (
    MEMO_LIMIT,
    ActiveColumns,
    BackendPlan,
    CompiledGuard,
    FindingMemo,
)
from compat.guard.plan import compiled as compiled_guard
from compat.guard.report import (
    Finding,
    Report,
    Resolved,
    Suggestion,
)
from compat.guard.resolve import phase_flag, resolve_applying
from compat.inputs.config import AttentionConfig, Parsed
from compat.releases import release_matrix
from compat.vocab.terms import Phase, Platform, Severity, SpeculativeAttentionMode


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
    own = release_matrix(parsed.release.release)
    # The release's own page (or an equal copy): its disputed cells are the code's to
    # decide (`compat audit`); another page is judged on its word alone.
    own_matrix = matrix is None or matrix is own or same_page(matrix, own)
    if matrix is None:
        matrix = own
    compiled = compiled_guard(matrix)
    findings: list[Finding] = []
    resolved, applied = resolve_applying(parsed, findings, matrix)
    _check_dtype_platform(parsed, resolved, findings, compiled)
    prefill, decode = resolved.prefill_backend, resolved.decode_backend
    active = compiled.active_columns(resolved, parsed.features)
    if prefill is not None and prefill == decode:
        _check_backend(parsed, resolved, prefill, BOTH_PHASES, active, findings, compiled)
    else:
        if prefill is not None:
            _check_backend(parsed, resolved, prefill, PREFILL_ONLY, active, findings, compiled)
        if decode is not None:
            _check_backend(parsed, resolved, decode, DECODE_ONLY, active, findings, compiled)
    _check_rules(parsed, resolved, findings, compiled)
    release = parsed.release
    if applied or release.backend_build:
        mark_enforcement(findings, applied, release, compiled.findings)
    mark_warmup_failures(findings, release, compiled.findings)
    if own_matrix:
        # Only a documented error can be disputed: the audit (and its module, imported
        # here, not at start-up) is read the first time a launch of the release has one.
        disputed = DISPUTED_NO.get(release.release)
        if disputed is None and any(f.severity is Severity.ERROR for f in findings):
            from compat.guard.audit import disputed_no

            disputed = disputed_no(release.release)
        if disputed:
            mark_disputes(findings, resolved, disputed)
    unmodelled = parsed.unmodelled_release
    if unmodelled is not None:  # every answer says which release it is for
        findings.append(unmodelled_release_finding(unmodelled, release.release))
    return Report(
        config,
        resolved,
        tuple(findings),
        _suggester(compiled),
        release.release,
        parsed.version_source,
        unmodelled,
    )


BOTH_PHASES = (Phase.PREFILL, Phase.DECODE)
PREFILL_ONLY = (Phase.PREFILL,)
DECODE_ONLY = (Phase.DECODE,)


def _suggester(compiled: CompiledGuard) -> Callable[[Report], tuple[Suggestion, ...]]:
    """The report's lazy suggestion search, one function per matrix."""
    suggest = compiled.suggester
    if suggest is None:
        matrix = compiled.matrix

        def suggest(report: Report) -> tuple[Suggestion, ...]:
            from compat.guard.check_memo import CheckMemo
            from compat.guard.suggest import suggest_fixes

            return suggest_fixes(report, CheckMemo(lambda config: check(config, matrix)), matrix)

        compiled.suggester = suggest
    return suggest


def _check_dtype_platform(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], compiled: CompiledGuard
) -> None:
    """The KV dtype's requirement: the platforms it runs on, the CUDA it needs."""
    requirement = compiled.matrix.dtype_requirement(resolved.kv_dtype)
    if requirement is not None:
        for breach in requirement.judge(resolved, parsed.cuda_version):
            findings.append(_breach_finding(parsed, breach, compiled.findings))


def _check_backend(
    parsed: Parsed,
    resolved: Resolved,
    name: str,
    phases: tuple[Phase, ...],
    active: ActiveColumns,
    findings: list[Finding],
    compiled: CompiledGuard,
) -> None:
    """Judge one backend, serving `phases`, against its requirements and its row.

    Judged once per everything its findings read (`CompiledGuard.backends`): the backend
    (its plan), the phases and the flags that chose them, the machine, the KV dtype, the
    model's features, the page size and topk (these four also set the active columns) and
    where speculative decoding verifies. `tests/claim/test_columns.py` holds the key: a
    cold copy of the matrix judges every report as a warm one."""
    plan = compiled.plan(resolved.arch, name)
    # The flags that chose the backends: every finding names them.
    chosen_by = (parsed.prefill is None, parsed.decode is None)
    verify_on_decode = parsed.spec_mode is SpeculativeAttentionMode.DECODE
    key = (plan, phases, chosen_by, resolved.platform, resolved.compute_capability,
           resolved.kv_dtype, parsed.features, resolved.page_size, resolved.topk,
           verify_on_decode)  # fmt: skip
    memo = compiled.backends
    found = memo.get(key)
    if found is None:
        judged: list[Finding] = []
        _judge_backend(parsed, resolved, plan, phases, chosen_by, verify_on_decode, active,
                       judged, compiled)  # fmt: skip
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        found = memo[key] = tuple(judged)
    findings.extend(found)


def _judge_backend(
    parsed: Parsed,
    resolved: Resolved,
    plan: BackendPlan,
    phases: tuple[Phase, ...],
    chosen_by: tuple[bool, bool],
    verify_on_decode: bool,
    active: ActiveColumns,
    findings: list[Finding],
    compiled: CompiledGuard,
) -> None:
    name = plan.backend.name
    _check_requirements(parsed, resolved, plan, phases, chosen_by, findings, compiled)
    memo, matrix = compiled.findings, compiled.matrix
    for cell_check, checked in plan.cell_work(active, phases, verify_on_decode):
        inputs = (
            cell_check,
            checked,
            resolved.page_size,
            resolved.topk,
            resolved.kv_dtype,
            chosen_by,
            resolved.platform,  # the ✅ list names the backends of this machine
            resolved.compute_capability,
            parsed.cuda_version,
        )
        cell = cell_check.cell
        finding: Finding | None
        if cell is None:
            finding = memo.finding(
                missing_row_finding, inputs, parsed, resolved, name, cell_check, checked, matrix
            )
        else:
            finding = memo.finding(
                cell_finding,
                inputs,
                parsed,
                resolved,
                cell_check.column,
                cell,
                name,
                checked,
                matrix,
            )
        if finding is not None:
            findings.append(finding)


def _check_requirements(
    parsed: Parsed,
    resolved: Resolved,
    plan: BackendPlan,
    phases: tuple[Phase, ...],
    chosen_by: tuple[bool, bool],
    findings: list[Finding],
    compiled: CompiledGuard,
) -> None:
    """The backend's own needs: its phases, architectures, platforms, GPU, KV dtypes, model."""
    backend, memo, matrix = plan.backend, compiled.findings, compiled.matrix
    name, arch, platform = backend.name, resolved.arch, resolved.platform
    for phase in phases:
        if phase not in backend.phases:
            finding = memo.finding(
                phase_finding, (name, phase, chosen_by), parsed, backend, phase, matrix
            )
            findings.append(finding)
    if plan.status is not ArchStatus.ROW:
        inputs: tuple[object, ...] = (name, arch, phases, chosen_by)
        findings.append(memo.finding(arch_finding, inputs, parsed, plan, phases, arch, matrix))
    support = plan.platforms.get(platform)
    if support is not PlatformSupport.SUPPORTED:
        inputs = (name, arch, platform, phases, chosen_by)
        findings.append(
            memo.finding(platform_finding, inputs, parsed, resolved, plan, support, phases)
        )
    needed = plan.capability
    if needed is not None and platform is Platform.CUDA:
        capability = resolved.compute_capability
        if capability is None or not (
            needed.min_major <= capability.major
            and (needed.max_major is None or capability.major <= needed.max_major)
        ):
            inputs = (name, arch, capability, phases, chosen_by)
            findings.append(
                memo.finding(capability_finding, inputs, parsed, resolved, name, needed, phases)
            )
    if backend.kv_dtypes is not None and resolved.kv_dtype not in backend.kv_dtypes:
        inputs = (name, resolved.kv_dtype, phases, chosen_by)
        findings.append(memo.finding(kv_dtype_finding, inputs, parsed, resolved, backend, phases))
    if backend.requires_features or backend.refuses_features:
        inputs = (name, parsed.features, phases, chosen_by)
        findings.extend(memo.finding(_feature_findings, inputs, parsed, backend, phases))
    if backend.disables_cuda_graph and platform is Platform.CUDA:
        inputs = (name, phases, chosen_by)
        findings.append(memo.finding(cuda_graph_finding, inputs, parsed, name, phases))


def _feature_findings(
    parsed: Parsed, backend: Backend, phases: tuple[Phase, ...]
) -> tuple[Finding, ...]:
    found: list[Finding] = []
    feature_findings(parsed, backend, phases, found)
    return tuple(found)


def _check_rules(
    parsed: Parsed, resolved: Resolved, findings: list[Finding], compiled: CompiledGuard
) -> None:
    """Every cross-field rule judges the configuration itself."""
    verify_on_decode = parsed.spec_mode is SpeculativeAttentionMode.DECODE
    matrix, memo = compiled.matrix, compiled.findings
    fit: Fit | None = None  # built for the first breach: most launches break no rule
    for rule in matrix.cross_field_rules:
        for breach in rule.judge(resolved, matrix, verify_on_decode):
            if breach.allowed and fit is None:
                fit = fit_for(parsed, compiled)
            finding = None
            if fit is not None and fit.backend_list(breach.allowed):
                # A list of backends names those that run this model on this machine.
                breach = breach.narrowed(fit.runs_here)
                if not fit.fitting(breach.allowed):
                    finding = _breach_finding(parsed, breach, memo)
                    inputs = (finding, fit.nowhere(breach.allowed))
                    finding = memo.finding(_nowhere, inputs, *inputs)
            findings.append(finding or _breach_finding(parsed, breach, memo))


def _nowhere(finding: Finding, note: str) -> Finding:
    """A broken rule whose allowed backends all serve other models or machines: said so."""
    return replace(finding, message=f"{finding.message} ({note})")


def _breach_finding(parsed: Parsed, breach: Breach, memo: FindingMemo) -> Finding:
    """The finding of a broken rule, worded once per breach (a value) and the flags that
    chose its phases."""
    chosen_by = (parsed.prefill is None, parsed.decode is None)
    return memo.finding(_worded_breach, (breach, chosen_by), parsed, breach)


def _worded_breach(parsed: Parsed, breach: Breach) -> Finding:
    """The finding of a broken rule: its words, and the flags that chose its phases."""
    return Finding(
        breach.rule,
        breach.severity,
        wording.message(breach),
        tuple(f if isinstance(f, str) else phase_flag(parsed, f) for f in breach.flags),
        value=breach.value,
        allowed=breach.allowed,
        backend=breach.backend,
        phases=breach.phases,
    )
