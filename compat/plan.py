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
    all_phases: bool
    """The column applies to both phases (most do), so no filtering is needed."""


@dataclass(frozen=True, slots=True)
class BackendPlan:
    backend: Backend
    status: ArchStatus
    platforms: Mapping[Platform, CellKind]
    capability: CapabilityRange | None
    cell_checks: tuple[CellCheck, ...]
    fixed_page_sizes: frozenset[int] | None
    """The only page sizes the kernel runs, when its native sizes are fixed."""
    runs_on: tuple[str, ...]
    """The platforms it runs on, as flag values."""
    arch_rows: tuple[str, ...]
    """The backends with a row in this architecture's table."""


def backend_plan(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    plans: dict[tuple[Arch, str], BackendPlan] | None = matrix.compiled.get("plans")
    if plans is None:
        plans = matrix.compiled["plans"] = {
            (table_arch, backend): _compile(matrix, table_arch, backend)
            for table_arch in Arch
            for backend in matrix.backend_names
        }
    return plans[(arch, name)]


def _compile(matrix: Matrix, arch: Arch, name: str) -> BackendPlan:
    backend = matrix.backend(name)
    status = matrix.arch_status(name, arch)
    row = matrix.row(arch, name)
    checks: list[CellCheck] = []
    fixed: frozenset[int] | None = None
    for column_id, header in matrix.table(arch).headers:
        column = matrix.column(column_id)
        both = column.phases == frozenset(Phase)
        if row is not None:
            cell = row.cells[column_id]
            if cell.kind is CellKind.SUPPORTED or cell.kind is CellKind.NOT_APPLICABLE:
                continue
            if column_id is ColumnId.NATIVE_PAGE_SIZES and cell.fixed:
                fixed = frozenset(cell.page_sizes)
                continue  # resolve() snaps the page size to a native one
            checks.append(CellCheck(column, cell, header, column.phases, both))
        elif status is ArchStatus.UNDOCUMENTED and column.action is Action.ERROR:
            checks.append(CellCheck(column, None, header, column.phases, both))
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
