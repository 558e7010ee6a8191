"""Where a release's page and its own code disagree: every disputed ✅ and ❌ cell.

Each documented cell (✅ or ❌) of a release's tables is tried on launches that isolate it:
the table's architecture, the row's backend for both phases, one value of the column (each
`--kv-cache-dtype` spelling the column speaks for, a speculative topk, a model feature),
and otherwise SGLang's defaults, on each machine of `AUDIT_MACHINES` where the backend runs
(the same launch without the column's value passes the engine there). `check()` judges
each launch; the engine's findings (enforced at start-up or at the backend build) say what
the code does, the documented ones what the page says.

- A ✅ is disputed when the code refuses or fails every value of the column on every such
  machine. A refusal that is the code's twin of one of the page's own cross-field rules
  (the FA4 + KV4 note) is that rule's business, not the cell's, and is set aside.
- A ❌ is disputed when the code checks the column (some row's launch meets the code's own
  twin of the column's rule) and names this backend among those its check accepts, and the
  backend's own launch runs there.

Nothing here is typed by hand: the cells come from `release_matrix`, the verdicts from
`check()`, the lines of code from the engine's record of where the release raised
(`compat.engine.sites`). New engine rules flow in: the audit reads findings by where they
are enforced, never by their rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compat.claim.cells import Action, CellKind
from compat.claim.columns import Column, ColumnId, KvDtypeIn, ModelHas, TopkRange
from compat.claim.matrix import Matrix, Row, Table
from compat.engine.sites import raised_at
from compat.guard.audit_facts import CodeVerdict, Dispute, Launch
from compat.guard.marks import DISPUTED_NO
from compat.guard.report import STARTUP_PREFIX, Enforcement, Finding, Report
from compat.inputs.config import AttentionConfig
from compat.inputs.flags import flag_of
from compat.inputs.gpus import Gpu, gpu_named
from compat.inputs.validation import FEATURE_FIELDS
from compat.releases import release_matrix, release_rules
from compat.vocab.terms import Arch, Platform, Severity

if TYPE_CHECKING:
    from compat.guard.marks import DisputedNo

AUDIT_MACHINES = ("H200", "B200", "MI300X", "Xeon (CPU)")
"""The machines a cell is tried on, one per platform and CUDA generation the release's own
code can be replayed on (the conformance harness's GPU profiles), oldest first."""

SPEC_STEPS = 3
"""`--speculative-num-steps` of a speculative launch: SGLang refuses a topk given without
the steps and draft tokens, and any valid triple isolates the topk column alike."""


def engine_errors(report: Report) -> tuple[Finding, ...]:
    """What the release's code refuses or fails on: the errors it enforces itself."""
    return tuple(
        f
        for f in report.findings
        if f.severity is Severity.ERROR and f.enforced is not Enforcement.DOCUMENTED
    )


def column_values(column: Column) -> tuple[dict[str, object], ...]:
    """The AttentionConfig fields that set each value of `column` (none: not isolable)."""
    when = column.when
    if isinstance(when, KvDtypeIn):
        return tuple({"kv_cache_dtype": dtype.value} for dtype in column.dtypes)
    if isinstance(when, TopkRange):
        return (
            {
                "speculative_algorithm": "EAGLE",
                "speculative_eagle_topk": when.low,
                "speculative_num_steps": SPEC_STEPS,
                "speculative_num_draft_tokens": SPEC_STEPS * when.low + 1,
            },
        )
    if isinstance(when, ModelHas):
        return ({when.feature.value: True},)
    # ALWAYS has no value to switch on; the page-size column (SNAP) never refuses.
    return ()


def _audited(column: Column) -> bool:
    return column.action is not Action.SNAP and bool(column_values(column))


def _machines(matrix: Matrix, backend: str, arch: Arch) -> Iterator[Gpu]:
    """The audit's machines where the page says `backend` runs for `arch`."""
    judged = matrix.backend(matrix.judged_as(backend))
    needed = judged.capability.get(arch)
    for name in AUDIT_MACHINES:
        gpu = gpu_named(name)
        if gpu.platform not in judged.platforms:
            continue
        if gpu.platform is Platform.CUDA and needed is not None and gpu.capability not in needed:
            continue
        yield gpu


def _base(matrix: Matrix, release: str, arch: Arch, backend: str, gpu: Gpu) -> dict[str, object]:
    """The backend's plain launch: a model of the table's architecture with the features the
    backend serves only (QSA's indexer profile: a QSA model drafts on QSA's own path)."""
    needed = matrix.backend(matrix.judged_as(backend)).requires_features
    return {
        "sglang_version": release,
        "attention_arch": arch.value,
        "attention_backend": backend,
        "platform": gpu.platform.value,
        "compute_capability": gpu.capability,
    } | {FEATURE_FIELDS[feature]: True for feature in needed}


_SHOWN = (
    "attention_backend",
    "kv_cache_dtype",
    "speculative_algorithm",
    "speculative_eagle_topk",
    "speculative_num_steps",
    "speculative_num_draft_tokens",
)
"""The fields a launch may set that are SGLang flags, in the order `compat check` lists them."""


def _flags(fields: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """The SGLang flags of a launch's fields (the model and the machine are not flags)."""
    flags = [(flag_of(name), str(fields[name])) for name in _SHOWN if name in fields]
    for name, value in fields.items():
        if value is True:  # a model feature: how `compat check` states it
            flags.append((flag_of(name), ""))
    return tuple((flag, value) for flag, value in flags)


@dataclass(frozen=True)
class _Tried:
    """One cell value on the machines where the backend's plain launch runs."""

    runs: Launch | None
    refused: tuple[Launch, ...]


def _try(release: str, matrix: Matrix, table: Table, row: Row, column: Column,
         values: Mapping[str, object]) -> _Tried:  # fmt: skip
    from compat.guard.check import check

    refused: list[Launch] = []
    twins = _page_rule_twins(matrix)
    for gpu in _machines(matrix, row.backend, table.arch):
        base = _base(matrix, release, table.arch, row.backend, gpu)
        if engine_errors(check(AttentionConfig(**base))):  # type: ignore[arg-type]
            continue  # the backend itself does not start here: nothing isolates the cell
        fields = {**base, **values}
        report = check(AttentionConfig(**fields))  # type: ignore[arg-type]
        found = engine_errors(report)
        errors = tuple(f for f in found if f.rule not in twins)
        if found and not errors:
            continue  # refused only by the twin of a page's own rule: the page agrees
        setting = column.when.setting(report.resolved) or _feature_setting(values)
        launch = Launch(_flags(fields), gpu.name, setting, errors, tuple(values.items()))
        if not errors:
            return _Tried(launch, tuple(refused))
        refused.append(launch)
    return _Tried(None, tuple(refused))


def _feature_setting(values: Mapping[str, object]) -> str:
    return " ".join(flag_of(name) for name, value in values.items() if value is True)


def _page_rule_twins(matrix: Matrix) -> frozenset[str]:
    """The engine's ids of the page's own cross-field rules (`startup-<id>`)."""
    ids = [rule.id for rule in matrix.cross_field_rules]
    ids += [requirement.rule_id for requirement in matrix.dtype_requirements]
    return frozenset(f"{STARTUP_PREFIX}{rule}" for rule in ids)


def _twin(column: Column, finding: Finding) -> bool:
    """Whether `finding` is the code's own check of `column` (its rule, as the engine names it)."""
    rule = column.id.rule_id
    return finding.rule in (f"{STARTUP_PREFIX}{rule}", rule)


def _verdict(launches: tuple[Launch, ...]) -> CodeVerdict:
    startup = any(f.enforced is Enforcement.STARTUP for launch in launches for f in launch.findings)
    return CodeVerdict.REFUSES if startup else CodeVerdict.FAILS


_AUDITS: dict[str, tuple[Dispute, ...]] = {}
_AUDITING: set[str] = set()
"""The releases being audited now: their checks must not wait for their own audit."""


def audit(release: str) -> tuple[Dispute, ...]:
    """Every documented cell of `release` that its own code contradicts, in page order.

    Raises UnknownReleaseError (via `release_rules`) for a release not modelled."""
    release = release_rules(release).release
    known = _AUDITS.get(release)
    if known is None:
        _AUDITING.add(release)
        try:
            known = _AUDITS[release] = _audit(release)
        finally:
            _AUDITING.discard(release)
    return known


def _audit(release: str) -> tuple[Dispute, ...]:
    matrix = release_matrix(release)
    found: list[Dispute] = []
    for table in matrix.tables:
        tried: dict[tuple[str, ColumnId], tuple[tuple[dict[str, object], _Tried], ...]] = {}
        for row in table.rows:
            for column_id in table.columns:
                column = matrix.column(column_id)
                if row.cells[column_id].kind in _JUDGED and _audited(column):
                    tried[row.backend, column_id] = tuple(
                        (values, _try(release, matrix, table, row, column, values))
                        for values in column_values(column)
                    )
        for row in table.rows:
            for column_id in table.columns:
                outcome = tried.get((row.backend, column_id))
                if outcome is not None:
                    dispute = _dispute(release, matrix, table, row, column_id, outcome, tried)
                    if dispute is not None:
                        found.append(dispute)
    return tuple(found)


_JUDGED = frozenset({CellKind.SUPPORTED, CellKind.UNSUPPORTED})


def _dispute(
    release: str,
    matrix: Matrix,
    table: Table,
    row: Row,
    column_id: ColumnId,
    outcome: tuple[tuple[dict[str, object], _Tried], ...],
    tried: Mapping[tuple[str, ColumnId], tuple[tuple[dict[str, object], _Tried], ...]],
) -> Dispute | None:
    cell = row.cells[column_id]
    column = matrix.column(column_id)
    launches: tuple[Launch, ...]
    accepted: tuple[Finding, ...] = ()
    if cell.kind is CellKind.SUPPORTED:
        if not all(t.runs is None and t.refused for _, t in outcome):
            return None
        launches = tuple(t.refused[0] for _, t in outcome)
        verdict = _verdict(launches)
        evidence: Launch | None = launches[0]
    else:
        running: list[Launch] = []
        for values, t in outcome:
            if t.runs is None:
                continue
            names = _accepting(column, values, tried, column_id, row.backend)
            if names:
                running.append(t.runs)
                accepted += names
        if not running:
            return None
        launches, verdict = tuple(running), CodeVerdict.RUNS
        evidence = _refused_launch(accepted[0], tried, column_id)
    if evidence is None:  # pragma: no cover - an accepting check always refused a launch
        return None
    return Dispute(
        release,
        table.arch,
        row.backend,
        row.display_name,
        column_id,
        matrix.header(table.arch, column_id) or column_id.value,
        cell.symbol,
        matrix.evidence_for(table.arch, row.backend, column_id),
        verdict,
        launches,
        raised_at(release, evidence.machine, table.arch, evidence.argv),
        evidence,
        accepted,
    )


def _accepting(
    column: Column,
    values: Mapping[str, object],
    tried: Mapping[tuple[str, ColumnId], tuple[tuple[dict[str, object], _Tried], ...]],
    column_id: ColumnId,
    backend: str,
) -> tuple[Finding, ...]:
    """The code's own checks of `column` at `values`, on other rows, that accept `backend`."""
    return tuple(
        f
        for (_, other_column), outcome in tried.items()
        if other_column is column_id
        for other_values, t in outcome
        if other_values == values
        for launch in t.refused
        for f in launch.findings
        if _twin(column, f) and backend in f.allowed
    )


def _refused_launch(
    finding: Finding,
    tried: Mapping[tuple[str, ColumnId], tuple[tuple[dict[str, object], _Tried], ...]],
    column_id: ColumnId,
) -> Launch | None:
    """The launch of another row that `finding` (the accepting check) refused."""
    for (_, other_column), other in tried.items():
        if other_column is not column_id:
            continue
        for _, t in other:
            for launch in t.refused:
                if finding in launch.findings:
                    return launch
    return None


def disputed_no(release: str) -> DisputedNo:
    """The disputed ❌ cells of `release`: what the default policy warns about instead of
    refusing. Empty, and not kept, while `release` is being audited (its launches are then
    judged on the page's word)."""
    if release in _AUDITING:
        return {}
    known = DISPUTED_NO.get(release)
    if known is None:
        found: dict[tuple[Arch, str, str], tuple[tuple[str, Dispute], ...]] = {}
        for d in audit(release):
            if d.verdict is CodeVerdict.RUNS:
                key = (d.arch, d.backend, d.column.rule_id)
                found[key] = found.get(key, ()) + tuple((run.setting, d) for run in d.launches)
        known = DISPUTED_NO[release] = found
    return known
