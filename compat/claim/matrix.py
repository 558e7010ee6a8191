"""The shape of the capability matrix: what a backend, a column, a table and a rule are.

`compat.claim.baseline` fills these with facts; every consumer reads them through `Matrix`,
whose derived views (FP4-capable backends, fixed page sizes, decode partners) are
computed from cells and rules so no list is ever written down twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from compat.claim.cells import Action, Cell, CellKind, PlatformSupport
from compat.claim.columns import KvDtypeIn, Trigger
from compat.claim.invariants import check_consistency
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, KvFamily, ModelFeature, Phase, Platform, Term

if TYPE_CHECKING:
    from compat.guard.plan import CompiledGuard


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
    """A column of the tables, and what the guard does with its cells."""

    id: ColumnId
    description: str
    action: Action
    """What an unsupported cell makes the guard do. SNAP belongs to the page-size column: a
    cell of fixed sizes is snapped to (nothing to find), any other size is emulated (info)."""
    why: str
    """Why the guard takes `action` (shown in the legend)."""
    when: Trigger
    """What in a configuration makes this column's cells apply to it."""
    flags: tuple[str, ...] = ()
    """The flags this column speaks for: a finding names them after the backend's flags."""
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
    platforms: Mapping[Platform, PlatformSupport]
    """Each platform the backend runs on, and whether that is tested."""
    capability: Mapping[Arch, CapabilityRange] = field(default_factory=dict)
    """CUDA compute capabilities it needs, per architecture; absent means any."""
    archs: frozenset[Arch] = frozenset(Arch)
    """The model architectures it serves; a table without its row for one of these leaves
    it undocumented there, for any other it is known not to work."""
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
        check_consistency(self)

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
    def compiled(self) -> CompiledGuard:
        """The guard's tables for this matrix, compiled on first use (the matrix never changes)."""
        from compat.guard.plan import (
            CompiledGuard,  # plan builds on this module; only the guard needs it
        )

        return CompiledGuard(self)

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
        column_id = self.kv_column(rule.kv_dtype)
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

    def phase_only_backends(self) -> tuple[Backend, ...]:
        return tuple(b for b in self.backends if b.phases != frozenset(Phase))


def phase_rule_id(backend: Backend) -> str:
    """`fa4-prefill-only`: the id of the rule a phase-limited backend carries."""
    only = "-".join(phase.value for phase in Phase if phase in backend.phases)
    return f"{backend.name.replace('_', '-')}-{only}-only"
