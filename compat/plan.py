"""The guard's view of one backend for one architecture, compiled once per matrix.

Only the cells that can produce a finding are kept, so checking a configuration walks a
few tuples instead of the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compat.schema import ArchStatus, Backend, Column, ColumnId, Matrix
from compat.vocab import Action, Arch, CapabilityRange, Cell, CellKind, Phase, Platform


@dataclass(frozen=True, slots=True)
class CellCheck:
    column: Column
    cell: Cell | None
    """None: the backend has no row, and this refusing column needs a ✅."""
    header: str
    phases: frozenset[Phase]


@dataclass(frozen=True, slots=True)
class BackendPlan:
    backend: Backend
    status: ArchStatus
    platforms: Mapping[Platform, CellKind]
    capability: CapabilityRange | None
    cell_checks: tuple[CellCheck, ...]
    runs_on: tuple[str, ...]
    """The platforms it runs on, as flag values."""
    arch_rows: tuple[str, ...]
    """The backends with a row in this architecture's table."""


def backend_plan(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    key = ("plan", arch, name)
    plan: BackendPlan | None = matrix.compiled.get(key)
    if plan is None:
        plan = matrix.compiled[key] = _compile(matrix, arch, name)
    return plan


def _compile(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    backend = matrix.backend(name)
    status = matrix.arch_status(name, arch)
    row = matrix.row(arch, name)
    checks: list[CellCheck] = []
    for column_id, header in matrix.table(arch).headers:
        column = matrix.column(column_id)
        if row is not None:
            cell = row.cells[column_id]
            if cell.kind is CellKind.SUPPORTED or cell.kind is CellKind.NOT_APPLICABLE:
                continue
            if column_id is ColumnId.NATIVE_PAGE_SIZES and cell.fixed:
                continue  # resolve() snaps the page size to a native one
            checks.append(CellCheck(column, cell, header, column.phases))
        elif status is ArchStatus.UNDOCUMENTED and column.action is Action.ERROR:
            checks.append(CellCheck(column, None, header, column.phases))
    return BackendPlan(
        backend=backend,
        status=status,
        platforms=backend.platforms,
        capability=backend.capability.get(arch),
        cell_checks=tuple(checks),
        runs_on=tuple(p.value for p in Platform if p in backend.platforms),
        arch_rows=tuple(row.backend for row in matrix.table(arch).rows),
    )
