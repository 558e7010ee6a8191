"""The guard's compiled view of one matrix: per-backend plans, active columns, worded findings.

`compiled(matrix)` builds a `CompiledGuard` on the first check and keeps it as long as the
matrix lives (a matrix never changes). A plan keeps only the cells that can produce a
finding, and learns which of them each set of active columns reaches, so checking a
configuration walks a few tuples instead of the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ParamSpec, TypeVar

import msgspec.structs

from compat.claim.backends import Backend
from compat.claim.cells import Action, Cell, CellKind, PlatformSupport
from compat.claim.columns import Column, ColumnId, Situation
from compat.claim.matrix import ArchStatus, Matrix
from compat.guard.report import Enforcement, Finding, Report, Resolved, Suggestion
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, ModelFeature, Phase, Platform

P = ParamSpec("P")
F = TypeVar("F")

MEMO_LIMIT = 50_000
"""The most entries any of the guard's memos keeps: a long-running process checking ever new
launches must not grow one forever (a full memo starts again empty)."""
_MISSING: Any = object()  # Any: it stands in for whatever a memo holds

ActiveColumns = frozenset[ColumnId]
CellWork = tuple[tuple["CellCheck", tuple[Phase, ...]], ...]
"""Each cell check a configuration reaches, with the phases it is judged for."""


@dataclass(frozen=True, slots=True, eq=False)  # identity: findings are memoized by it
class CellCheck:
    column: Column
    cell: Cell | None
    """None: the backend has no row, and this refusing column needs a ✅."""
    header: str


@dataclass(frozen=True, slots=True, eq=False)
class BackendPlan:
    backend: Backend
    status: ArchStatus
    platforms: Mapping[Platform, PlatformSupport]
    capability: CapabilityRange | None
    cell_checks: tuple[CellCheck, ...]
    fixed_page_sizes: frozenset[int] | None
    """The only page sizes the kernel runs, when its native sizes are fixed."""
    runs_on: tuple[str, ...]
    """The platforms it runs on, as flag values."""
    arch_rows: tuple[str, ...]
    """The backends with a row in this architecture's table."""
    _work: dict[tuple[ActiveColumns, tuple[Phase, ...], bool], CellWork] = field(
        default_factory=dict
    )
    """`cell_work` by its arguments: a few hundred combinations at most, so unbounded."""

    def cell_work(
        self, active: ActiveColumns, phases: tuple[Phase, ...], verify_on_decode: bool
    ) -> CellWork:
        """The cell checks of `active` columns, each with the phases of `phases` it judges.

        `verify_on_decode`: `--speculative-attention-mode decode` runs draft and verify on
        the decode backend, so a speculative column does not judge the prefill backend.
        """
        key = (active, phases, verify_on_decode)
        work = self._work.get(key)
        if work is None:
            work = self._work[key] = tuple(
                (check, checked)
                for check in self.cell_checks
                if check.column.id in active
                and (checked := _judged(check.column, phases, verify_on_decode))
            )
        return work


def _judged(column: Column, phases: tuple[Phase, ...], verify_on_decode: bool) -> tuple[Phase, ...]:
    skip_prefill = verify_on_decode and column.when.speculative
    return tuple(
        p for p in phases if p in column.phases and not (skip_prefill and p is Phase.PREFILL)
    )


class FindingMemo:
    """Worded findings, reused across configurations; one per matrix.

    Findings are immutable and fully determined by their builder and the inputs named with
    it (the matrix aside), so one worded for an earlier configuration is reused and
    repeated configurations skip the string formatting; every rule is still evaluated.
    tests/claim/test_columns.py checks the inputs: a cold copy of the matrix words every
    report exactly as a warm one.
    """

    __slots__ = ("_found", "_retagged")

    def __init__(self) -> None:
        # Values are whatever their builder returns: a Finding, a tuple of them, or None.
        self._found: dict[tuple[object, tuple[object, ...]], Any] = {}
        self._retagged: dict[tuple[int, Enforcement], tuple[Finding, Finding]] = {}

    def finding(
        self,
        build: Callable[P, F],
        inputs: tuple[object, ...],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> F:
        """`build(*args)`, worded once per `inputs`: everything its words depend on."""
        key = (build, inputs)
        found: F = self._found.get(key, _MISSING)
        if found is _MISSING:
            if len(self._found) >= MEMO_LIMIT:
                self._found.clear()
            found = self._found[key] = build(*args, **kwargs)
        return found

    def retagged(self, finding: Finding, enforced: Enforcement) -> Finding:
        """The same finding enforced elsewhere.

        Keyed by identity, since hashing a finding's fields costs more than copying it; the
        entry keeps the original alive, so its id cannot name another finding meanwhile.
        """
        known = self._retagged.get((id(finding), enforced))
        if known is None:
            if len(self._retagged) >= MEMO_LIMIT:
                self._retagged.clear()
            known = (finding, replace(finding, enforced=enforced))
            self._retagged[(id(finding), enforced)] = known
        return known[1]

    def clear(self) -> None:
        """Forget every worded finding (the benchmark's cold figure)."""
        self._found.clear()
        self._retagged.clear()


Launch = tuple[object, Resolved, tuple[Finding, ...], frozenset[tuple[str, str | None]]]
"""A replayed launch: its release (kept so that the key's `id()` stays its own), what SGLang
runs, SGLang's own findings, and the (rule, backend) pairs its start-up code applied."""


class CompiledGuard:
    """The guard's tables for one matrix, each built on first use."""

    __slots__ = ("_active", "_plans", "backends", "findings", "launches", "matrix", "suggester")

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.findings = FindingMemo()
        self.suggester: Callable[[Report], tuple[Suggestion, ...]] | None = None
        """The report's lazy suggestion search; set by the guard, which knows how to check."""
        self._plans: dict[Arch, dict[str, BackendPlan]] | None = None
        self._active: dict[tuple[object, ...], ActiveColumns] = {}
        self.launches: dict[tuple[object, ...], Launch] = {}
        """`compat.guard.resolve`'s memo: each distinct launch replayed once per matrix."""
        self.backends: dict[tuple[object, ...], tuple[Finding, ...]] = {}
        """`compat.guard.check`'s memo: a backend's findings, by everything they read."""

    def plan(self, arch: Arch, name: str) -> BackendPlan:
        plans = self._plans
        if plans is None:
            matrix = self.matrix
            # An alias is judged by its backend's row, under the name the launch gave.
            names = (*matrix.backend_names, *matrix.aliases)
            plans = self._plans = {
                table_arch: {name: _compile(matrix, table_arch, name) for name in names}
                for table_arch in Arch
            }
        return plans[arch][name]

    def active_columns(
        self, resolved: Resolved, features: frozenset[ModelFeature]
    ) -> ActiveColumns:
        """The columns whose trigger this configuration meets."""
        key = (resolved.kv_dtype, resolved.topk, resolved.page_size, features)
        active = self._active.get(key)
        if active is None:
            if len(self._active) >= MEMO_LIMIT:
                self._active.clear()
            situation = Situation(resolved.kv_dtype, resolved.topk, resolved.page_size, features)
            active = self._active[key] = frozenset(
                column.id for column in self.matrix.columns if column.when.matches(situation)
            )
        return active


def compiled(matrix: Matrix) -> CompiledGuard:
    """The guard's tables for `matrix`, built on first use and kept with the matrix."""
    found = matrix.derived.get(_KEY)
    if found is None:
        found = matrix.derived[_KEY] = CompiledGuard(matrix)
    return found  # type: ignore[return-value]


_KEY = "compat.guard"


def backend_plan(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    """The plan of backend `name` for `arch` models in `matrix`."""
    return compiled(matrix).plan(arch, name)


def _compile(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    judged_as = matrix.judged_as(name)
    backend = matrix.backend(judged_as)
    if judged_as != name:
        backend = msgspec.structs.replace(backend, name=name)
    status = matrix.arch_status(judged_as, arch)
    row = matrix.row(arch, judged_as)
    checks: list[CellCheck] = []
    fixed: frozenset[int] | None = None
    for column_id, header in matrix.table(arch).headers:
        column = matrix.column(column_id)
        if row is not None:
            cell = row.cells[column_id]
            if cell.kind is CellKind.SUPPORTED or cell.kind is CellKind.NOT_APPLICABLE:
                continue  # nothing to find (a "not stated" cell is checked: it warns)
            if column.action is Action.SNAP and cell.fixed:
                fixed = frozenset(cell.page_sizes)
                continue  # SGLang's start-up snaps the page size to a native one
            checks.append(CellCheck(column, cell, header))
        elif status is ArchStatus.UNDOCUMENTED and column.action is Action.ERROR:
            checks.append(CellCheck(column, None, header))
    return BackendPlan(
        backend=backend,
        status=status,
        platforms=backend.platforms,
        capability=backend.capability.get(arch),
        cell_checks=tuple(checks),
        fixed_page_sizes=fixed,
        runs_on=tuple(p.value for p in Platform if p in backend.platforms),
        arch_rows=tuple(row.backend for row in matrix.table(arch).rows),
    )
