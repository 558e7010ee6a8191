"""The shape of the capability matrix: what a backend, a column, a table and a rule are.

`compat.claim.baseline` fills these with facts; every consumer reads them through `Matrix`,
whose derived views (FP4-capable backends, fixed page sizes, decode partners) are
computed from cells and rules so no list is ever written down twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import msgspec

from compat.claim.backends import Backend
from compat.claim.cells import Action, Cell, CellKind
from compat.claim.columns import Column, ColumnId, KvDtypeIn, PageSizeAbove
from compat.claim.rules import (
    CrossFieldRule,
    DtypeFallbackRule,
    DtypeRequirement,
    HybridCautionRule,
    PairingRule,
    SpecPagedRule,
)
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, KvDtype, KvFamily, Phase, Term


class Row(msgspec.Struct, frozen=True):
    """One backend's line in one architecture table."""

    backend: str
    display_name: str
    cells: Mapping[ColumnId, Cell]


class Table(msgspec.Struct, frozen=True):
    arch: Arch
    title: str
    headers: tuple[tuple[ColumnId, str], ...]
    """The columns in page order, each with its header text in this table."""
    rows: tuple[Row, ...]
    evidence: Evidence

    @property
    def columns(self) -> tuple[ColumnId, ...]:
        return tuple(column for column, _ in self.headers)


_ARCH_STATUS_LABELS = {
    "row": "has a row",
    "refused": "known not to work",
    "undocumented": "undocumented",
}


class ArchStatus(Term):
    """Where a backend stands with an architecture's table."""

    ROW = "row"
    REFUSED = "refused"
    UNDOCUMENTED = "undocumented"

    def __init__(self, value: str) -> None:
        self.label = _ARCH_STATUS_LABELS[value]
        """How the page and the CLI say it."""


class Matrix(msgspec.Struct, frozen=True, dict=True):
    backends: tuple[Backend, ...]
    columns: tuple[Column, ...]
    tables: tuple[Table, ...]
    dtype_requirements: tuple[DtypeRequirement, ...]
    pairing_rules: tuple[PairingRule, ...]
    hybrid_caution_rules: tuple[HybridCautionRule, ...]
    spec_paged_rules: tuple[SpecPagedRule, ...]
    dtype_fallback_rules: tuple[DtypeFallbackRule, ...]
    sources: tuple[Evidence, ...]
    """Evidence that is not attached to any single claim (kept for the sources list)."""
    aliases: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Other names the release accepts for a backend (`nsa` for `dsa`): no row of their own,
    they are judged by their backend's."""

    def __post_init__(self) -> None:
        _check_consistency(self)

    # -- lookups ---------------------------------------------------------------------

    @property
    def backend_names(self) -> tuple[str, ...]:
        return tuple(backend.name for backend in self.backends)

    @cached_property
    def _backend_index(self) -> dict[str, Backend]:
        return {backend.name: backend for backend in self.backends}

    @cached_property
    def _row_index(self) -> dict[tuple[Arch, str], Row]:
        return {(table.arch, row.backend): row for table in self.tables for row in table.rows}

    def backend(self, name: str) -> Backend:
        return self._backend_index[name]

    def judged_as(self, name: str) -> str:
        """The backend whose row and needs judge `name` (itself, unless it is an alias)."""
        return self.aliases.get(name, name)

    @cached_property
    def _column_index(self) -> dict[ColumnId, Column]:
        return {column.id: column for column in self.columns}

    @cached_property
    def _table_index(self) -> dict[Arch, Table]:
        return {table.arch: table for table in self.tables}

    @cached_property
    def _header_index(self) -> dict[tuple[Arch, ColumnId], str]:
        return {(t.arch, c): header for t in self.tables for c, header in t.headers}

    @cached_property
    def derived(self) -> dict[str, object]:
        """What a consumer computes once from this matrix (the matrix never changes).

        The matrix knows no consumer: each keeps its own entry here (the guard, its
        compiled tables), so they live exactly as long as the matrix.
        """
        return {}

    @cached_property
    def _memo(self) -> dict[tuple[object, ...], tuple[str, ...]]:
        """Derived backend lists, computed once per matrix (the matrix never changes)."""
        return {}

    @cached_property
    def cross_field_rules(self) -> tuple[CrossFieldRule, ...]:
        """The rules that combine several flags, in the order the page lists them."""
        return (
            *self.pairing_rules,
            *self.hybrid_caution_rules,
            *self.spec_paged_rules,
            *self.dtype_fallback_rules,
        )

    def column(self, column_id: ColumnId) -> Column:
        return self._column_index[column_id]

    def table(self, arch: Arch) -> Table:
        return self._table_index[arch]

    def row(self, arch: Arch, backend: str) -> Row | None:
        return self._row_index.get((arch, backend))

    def header(self, arch: Arch, column_id: ColumnId) -> str | None:
        return self._header_index.get((arch, column_id))

    def arch_status(self, backend: str, arch: Arch) -> ArchStatus:
        if self.row(arch, backend) is not None:
            return ArchStatus.ROW
        if arch not in self.backend(backend).archs:
            return ArchStatus.REFUSED
        return ArchStatus.UNDOCUMENTED

    def evidence_for(self, arch: Arch, backend: str, column_id: ColumnId) -> Evidence:
        """The most specific source of one cell: the cell's, its column's, or its table's."""
        table = self.table(arch)
        row = self.row(arch, backend)
        cell = row.cells[column_id] if row is not None else None
        if cell is not None and cell.evidence is not None:
            return cell.evidence
        return self.column(column_id).evidence or table.evidence

    @cached_property
    def _dtype_index(self) -> dict[KvDtype, DtypeRequirement]:
        return {requirement.dtype: requirement for requirement in self.dtype_requirements}

    def dtype_requirement(self, dtype: KvDtype) -> DtypeRequirement | None:
        return self._dtype_index.get(dtype)

    # -- views derived from cells and rules -----------------------------------------

    def supporting(self, arch: Arch, column_id: ColumnId) -> tuple[str, ...]:
        """Backends whose cell in `column_id` of the `arch` table is ✅, in table order."""
        key = ("supporting", arch, column_id)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = tuple(
                row.backend
                for row in self.table(arch).rows
                if row.cells[column_id].kind is CellKind.SUPPORTED
            )
        return found

    def supporting_in(
        self, arch: Arch, column_id: ColumnId, phases: tuple[Phase, ...]
    ) -> tuple[str, ...]:
        """`supporting()`, keeping only backends that can serve all of `phases`."""
        key = ("supporting_in", arch, column_id, phases)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = tuple(
                name
                for name in self.supporting(arch, column_id)
                if all(phase in self.backend(name).phases for phase in phases)
            )
        return found

    def decode_partners(self, rule: PairingRule, arch: Arch) -> tuple[str, ...]:
        """Decode backends that satisfy `rule` for `arch`, computed from the FP4 cells."""
        key = ("partners", rule.id, arch)
        found = self._memo.get(key)
        if found is not None:
            return found
        column_id = self.kv_family_column(rule.kv_family)
        found = self._memo[key] = tuple(
            name
            for name in self.supporting(arch, column_id)
            if name != rule.prefill_backend
            and name not in rule.excluded_decode
            and Phase.DECODE in self.backend(name).phases
        )
        return found

    def fixed_page_sizes(self) -> tuple[tuple[Row, Arch, tuple[int, ...]], ...]:
        """Every (row, arch, sizes) whose native page sizes are fixed (snapped to)."""
        snapping = [column.id for column in self.columns if column.action is Action.SNAP]
        found = []
        for table in self.tables:
            for row in table.rows:
                for column_id in snapping:
                    cell = row.cells.get(column_id)
                    if cell is not None and cell.kind is CellKind.PAGE_SIZES and cell.fixed:
                        found.append((row, table.arch, cell.page_sizes))
        return tuple(found)

    @cached_property
    def _kv_columns(self) -> dict[KvFamily, ColumnId]:
        return {c.when.family: c.id for c in self.columns if isinstance(c.when, KvDtypeIn)}

    def kv_column(self, dtype: KvDtype) -> ColumnId:
        """The table column that speaks for a KV dtype (the one its family triggers)."""
        column_id = self._kv_columns.get(dtype.family) if dtype.family is not None else None
        if column_id is None:
            raise ValueError(f"no table column for {dtype.value}")
        return column_id

    def kv_family_column(self, family: KvFamily) -> ColumnId:
        """The table column that speaks for a family of quantized KV dtypes."""
        column_id = self._kv_columns.get(family)
        if column_id is None:
            raise ValueError(f"no table column for {family.value} KV dtypes")
        return column_id

    def kv_dtypes(self, family: KvFamily) -> tuple[KvDtype, ...]:
        """The spellings of `family` this release's page speaks of (its column's)."""
        return self.column(self.kv_family_column(family)).dtypes

    def phase_only_backends(self) -> tuple[Backend, ...]:
        return tuple(b for b in self.backends if b.phases != frozenset(Phase))


def _check_consistency(matrix: Matrix) -> None:
    """Refuse a matrix whose parts disagree (a typo in a backend name, a missing cell)."""
    names = {backend.name for backend in matrix.backends}
    column_ids = {column.id for column in matrix.columns}
    problems = _column_problems(matrix.columns)
    for table in matrix.tables:
        expected = set(table.columns)
        for row in table.rows:
            if row.backend not in names:
                problems.append(f"{table.arch.value} row names unknown backend {row.backend!r}")
            if row.cells.keys() != expected:
                cells = sorted(column.value for column in row.cells)
                problems.append(f"{table.arch.value} row {row.backend!r} has cells {cells}")
        for column_id in table.columns:
            if column_id not in column_ids:
                problems.append(f"{table.arch.value} table uses undeclared column {column_id}")
    referenced = [rule.prefill_backend for rule in matrix.pairing_rules]
    referenced += [name for rule in matrix.pairing_rules for name in rule.excluded_decode]
    referenced += [name for rule in matrix.spec_paged_rules for name in rule.backends]
    referenced += [r.backend for r in matrix.dtype_fallback_rules]
    referenced += [r.replacement for r in matrix.dtype_fallback_rules]
    referenced += list(matrix.aliases.values())
    problems += [f"alias {name!r} is also a backend" for name in matrix.aliases if name in names]
    problems += [
        f"a rule names unknown backend {name!r}" for name in referenced if name not in names
    ]
    if problems:
        raise ValueError("inconsistent capability matrix: " + "; ".join(problems))


def _column_problems(columns: tuple[Column, ...]) -> list[str]:
    """Declarations the guard could not honour: two columns for one KV family, a snap
    without a page size to snap."""
    problems = []
    families = [c.when.family for c in columns if isinstance(c.when, KvDtypeIn)]
    problems += [
        f"two columns speak for {family.value} KV dtypes"
        for family in dict.fromkeys(families)
        if families.count(family) > 1
    ]
    problems += [
        f"column {c.id.value} snaps page sizes but is not triggered by a page size"
        for c in columns
        if c.action is Action.SNAP and not isinstance(c.when, PageSizeAbove)
    ]
    return problems
