"""The shape of the capability matrix: what a backend, a column, a table and a rule are.

`compat.matrix` fills these with facts; every consumer reads them through `Matrix`,
whose derived views (FP4-capable backends, fixed page sizes, decode partners) are
computed from cells and rules so no list is ever written down twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from compat.vocab import (
    Action,
    Arch,
    CapabilityRange,
    Cell,
    CellKind,
    Evidence,
    KvDtype,
    ModelFeature,
    Phase,
    Platform,
    Term,
)


class ColumnId(Term):
    NATIVE_PAGE_SIZES = "native_page_sizes"
    FP8_KV = "fp8_kv"
    FP4_KV = "fp4_kv"
    CHUNKED_PREFIX_CACHE = "chunked_prefix_cache"
    SPEC_TOPK_1 = "spec_topk_1"
    SPEC_TOPK_GT1 = "spec_topk_gt1"
    SLIDING_WINDOW = "sliding_window"
    MULTIMODAL = "multimodal"

    def __init__(self, value: str) -> None:
        self.rule_id = value.replace("_", "-")
        """The id of the finding the guard raises for an unsupported cell of this column."""


@dataclass(frozen=True)
class Column:
    id: ColumnId
    description: str
    action: Action
    why: str
    """Why the guard takes `action` (shown in the legend)."""
    phases: frozenset[Phase] = frozenset(Phase)
    """The phases whose backend the guard checks against this column."""
    evidence: Evidence | None = None
    """Where this column's claims come from, when not the table's own source."""


@dataclass(frozen=True)
class Row:
    """One backend's line in one architecture table."""

    backend: str
    display_name: str
    cells: Mapping[ColumnId, Cell]


@dataclass(frozen=True)
class Table:
    arch: Arch
    title: str
    headers: tuple[tuple[ColumnId, str], ...]
    """The columns in page order, each with its header text in this table."""
    rows: tuple[Row, ...]
    evidence: Evidence

    @property
    def columns(self) -> tuple[ColumnId, ...]:
        return tuple(column for column, _ in self.headers)


@dataclass(frozen=True)
class Backend:
    """What a backend needs, independent of any table cell."""

    name: str
    phases: frozenset[Phase]
    platforms: Mapping[Platform, CellKind]
    """Each platform the backend runs on: SUPPORTED or UNTESTED."""
    capability: Mapping[Arch, CapabilityRange] = field(default_factory=dict)
    """CUDA compute capabilities it needs, per architecture; absent means any."""
    refuses_archs: frozenset[Arch] = frozenset()
    kv_dtypes: frozenset[KvDtype] | None = None
    """The only KV dtypes the backend accepts, where it limits them."""
    requires_features: frozenset[ModelFeature] = frozenset()
    refuses_features: frozenset[ModelFeature] = frozenset()
    disables_cuda_graph: bool = False
    note: str = ""
    evidence: Evidence | None = None

    def runs_on(self, platform: Platform) -> bool:
        return platform in self.platforms


@dataclass(frozen=True)
class DtypeRequirement:
    """What a KV dtype needs from the platform and the software stack."""

    dtype: KvDtype
    rule_id: str
    platforms: frozenset[Platform] | None = None
    """Platforms it is allowed on; None means any."""
    min_cuda: tuple[int, int] | None = None
    min_torch: tuple[int, int] | None = None
    torch_dtype: str | None = None
    """The torch attribute that stores this dtype (checked by platform detection)."""
    evidence: Evidence | None = None


@dataclass(frozen=True)
class PairingRule:
    """With `kv_dtype`, prefill on `prefill_backend` needs a decode partner outside `excluded`."""

    id: str
    kv_dtype: KvDtype
    prefill_backend: str
    excluded_decode: frozenset[str]
    evidence: Evidence


@dataclass(frozen=True)
class HybridCautionRule:
    """With `kv_dtype`, two different phase backends (other than a pairing) get a warning."""

    id: str
    kv_dtype: KvDtype
    evidence: Evidence


@dataclass(frozen=True)
class SpecPagedRule:
    """For `arch`, speculative topk > 1 with page size > 1 runs only on `backends`."""

    id: str
    arch: Arch
    backends: frozenset[str]
    evidence: Evidence


@dataclass(frozen=True)
class DtypeFallbackRule:
    """The engine replaces `backend` by `replacement` when it meets `kv_dtype`."""

    id: str
    backend: str
    kv_dtype: KvDtype
    replacement: str
    why: str
    evidence: Evidence


class ArchStatus(Term):
    ROW = "has a row"
    REFUSED = "known not to work"
    UNDOCUMENTED = "undocumented"


@dataclass(frozen=True)
class Matrix:
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
    def compiled(self) -> dict[object, Any]:
        """Structures a consumer derives once per matrix (the guard's per-backend plans)."""
        return {}

    @cached_property
    def _memo(self) -> dict[tuple[object, ...], tuple[str, ...]]:
        """Derived backend lists, computed once per matrix (the matrix never changes)."""
        return {}

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
        if arch in self.backend(backend).refuses_archs:
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
        column_id = kv_column(rule.kv_dtype)
        found = self._memo[key] = tuple(
            name
            for name in self.supporting(arch, column_id)
            if name != rule.prefill_backend
            and name not in rule.excluded_decode
            and Phase.DECODE in self.backend(name).phases
        )
        return found

    def fixed_page_sizes(self) -> tuple[tuple[Row, Arch, tuple[int, ...]], ...]:
        """Every (row, arch, sizes) whose native page sizes are fixed."""
        found = []
        for table in self.tables:
            for row in table.rows:
                cell = row.cells.get(ColumnId.NATIVE_PAGE_SIZES)
                if cell is not None and cell.kind is CellKind.PAGE_SIZES and cell.fixed:
                    found.append((row, table.arch, cell.page_sizes))
        return tuple(found)

    def phase_only_backends(self) -> tuple[Backend, ...]:
        return tuple(b for b in self.backends if b.phases != frozenset(Phase))


def kv_column(dtype: KvDtype) -> ColumnId:
    """The table column that speaks for a KV dtype."""
    if dtype.is_fp4:
        return ColumnId.FP4_KV
    if dtype.is_fp8:
        return ColumnId.FP8_KV
    raise ValueError(f"no table column for {dtype.value}")


def phase_rule_id(backend: Backend) -> str:
    """`fa4-prefill-only`: the id of the rule a phase-limited backend carries."""
    only = "-".join(phase.value for phase in Phase if phase in backend.phases)
    return f"{backend.name.replace('_', '-')}-{only}-only"


def _check_consistency(matrix: Matrix) -> None:
    """Refuse a matrix whose parts disagree (a typo in a backend name, a missing cell)."""
    names = {backend.name for backend in matrix.backends}
    column_ids = {column.id for column in matrix.columns}
    problems: list[str] = []
    for table in matrix.tables:
        for row in table.rows:
            if row.backend not in names:
                problems.append(f"{table.arch.value} row names unknown backend {row.backend!r}")
            if set(row.cells) != set(table.columns):
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
    problems += [
        f"a rule names unknown backend {name!r}" for name in referenced if name not in names
    ]
    if problems:
        raise ValueError("inconsistent capability matrix: " + "; ".join(problems))
