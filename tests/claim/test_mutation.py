"""The mutation proof: every cell of every table is live in the page and in the guard.

For each cell in turn, the matrix is rebuilt in memory with that one cell changed. The
rendered page must change, and at least one configuration of a small search space built
for the cell must get a different verdict from the guard. A cell whose change the guard
never notices would be a dead claim: the page promising something nothing enforces.
Columns marked documentation-only are exempt from the guard half, and the page must say so.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import fields as dataclass_fields
from typing import Any

import pytest
from consistency import copies
from markdown_tables import read_tables
from msgspec.structs import replace

from compat import MATRIX, AttentionConfig, check
from compat.claim.cells import Action, Cell, CellKind
from compat.claim.columns import Column, ColumnId
from compat.claim.matrix import Matrix, Row, Table
from compat.publish.pages import ExampleCheckError, render_page
from compat.releases import RELEASE_NAMES
from compat.vocab.terms import Arch

BASELINE = RELEASE_NAMES[0]
YES = Cell(CellKind.SUPPORTED)
NO = Cell(CellKind.UNSUPPORTED)

KV_DTYPES = ("auto", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1")
TOPKS = (None, 1, 2)
PAGE_SIZES = (None, 1, 16, 32, 64, 128)
FEATURES = ((False, False), (True, False), (False, True), (True, True))
PRESETS: tuple[tuple[str, tuple[int, int] | None], ...] = (
    ("cuda", (10, 0)),
    ("cuda", (9, 0)),
    ("cuda", (8, 0)),
    ("rocm", None),
    ("npu", None),
    ("xpu", None),
    ("cpu", None),
)

Verdict = tuple[tuple[str, str, str | None], ...]
Judged = tuple[AttentionConfig, Verdict]


def _cells() -> list[Any]:
    params = []
    for table_index, table in enumerate(MATRIX.tables):
        for row_index, row in enumerate(table.rows):
            for column_id in table.columns:
                params.append(
                    pytest.param(
                        table_index,
                        row_index,
                        column_id,
                        id=f"{table.arch.value}-{row.backend}-{column_id.value}",
                    )
                )
    return params


def mutations(cell: Cell) -> list[tuple[str, Cell]]:
    """(what changed, the changed cell): every mutation this cell's kind gets."""
    kind = cell.kind
    if kind is CellKind.SUPPORTED:
        return [("✅ -> ❌", NO)]
    if kind is CellKind.UNSUPPORTED:
        return [("❌ -> ✅", YES)]
    if kind is CellKind.NOT_APPLICABLE:
        return [("n/a -> ❌", NO)]
    if kind in (CellKind.CONDITIONAL, CellKind.UNTESTED, CellKind.NOT_STATED):
        return [(f"{cell.symbol} -> ✅", YES), (f"{cell.symbol} -> ❌", NO)]
    assert kind is CellKind.PAGE_SIZES, f"no mutation for {kind}"
    sizes = cell.page_sizes
    changed = [(f"fixed={cell.fixed} -> {not cell.fixed}", replace(cell, fixed=not cell.fixed))]
    extra = next(size for size in (16, 32, 64, 128, 1) if size not in sizes)
    changed.append((f"sizes {sizes} + {extra}", replace(cell, page_sizes=(*sizes, extra))))
    if len(sizes) > 1:
        kept = tuple(size for size in sizes if size != max(sizes))
        changed.append((f"sizes {sizes} - {max(sizes)}", replace(cell, page_sizes=kept)))
    return changed


def mutated_matrix(table_index: int, row_index: int, column_id: ColumnId, cell: Cell) -> Matrix:
    """A fresh Matrix (fresh caches, validated again) with one cell replaced."""
    table = MATRIX.tables[table_index]
    row = table.rows[row_index]
    new_row: Row = replace(row, cells={**row.cells, column_id: cell})
    rows = tuple(new_row if i == row_index else r for i, r in enumerate(table.rows))
    new_table: Table = replace(table, rows=rows)
    tables = tuple(new_table if i == table_index else t for i, t in enumerate(MATRIX.tables))
    return replace(MATRIX, tables=tables)


def search_space(table: Table, backend: str) -> Iterator[AttentionConfig]:
    """Configurations that put `backend` in front of every column of `table`, built as the
    consistency proof builds its own (`copies`)."""
    others = [row.backend for row in table.rows if row.backend != backend][:2]
    placements: list[dict[str, Any]] = [{"attention_backend": backend}]
    for other in others:
        placements.append({"prefill_attention_backend": backend, "decode_attention_backend": other})
        placements.append({"prefill_attention_backend": other, "decode_attention_backend": backend})
    if table.arch is Arch.MHA and backend != "fa4":
        # fa4 prefill forces page size 128 on an MHA model: the decode backend's own page
        # sizes then decide whether it can run (SGLang does not snap again).
        placements.append({"prefill_attention_backend": "fa4", "decode_attention_backend": backend})
    fields = itertools.product(placements, KV_DTYPES, TOPKS, PAGE_SIZES, FEATURES, PRESETS)
    return copies(
        (
            dict(
                attention_arch=table.arch.value,
                sliding_window=sliding,
                multimodal=multimodal,
                platform=platform,
                compute_capability=cc,
            ),
            dict(
                kv_cache_dtype=dtype,
                speculative_algorithm=None if topk is None else "EAGLE",
                speculative_eagle_topk=topk,
                page_size=page,
                **placement,
            ),
        )
        for placement, dtype, topk, page, (sliding, multimodal), (platform, cc) in fields
    )


def verdict(config: AttentionConfig, matrix: Matrix) -> Verdict:
    report = check(config, matrix=matrix)
    return tuple(
        sorted(
            (f.rule, f.severity.value, f.backend or "", f.enforced.value) for f in report.findings
        )
    )


_SPACES: dict[tuple[Arch, str], tuple[Iterator[AttentionConfig], list[Judged]]] = {}


def baseline_space(table: Table, backend: str) -> Iterator[Judged]:
    """`search_space` in its order, each configuration with the unchanged matrix's verdict:
    built and judged once per process, as far as a search has gone, since every cell of a
    row searches the same space."""
    # Kept by architecture and backend: the space of a changed table would need its own key.
    assert any(table is unchanged for unchanged in MATRIX.tables), "not the matrix's own table"
    source, judged = _SPACES.setdefault((table.arch, backend), (search_space(table, backend), []))
    index = 0
    while True:
        if index == len(judged):
            config = next(source, None)
            if config is None:
                return
            judged.append((config, verdict(config, MATRIX)))
        yield judged[index]
        index += 1


def first_difference(
    table: Table, backend: str, mutated: Matrix
) -> tuple[AttentionConfig, Verdict, Verdict] | None:
    for config, before in baseline_space(table, backend):
        after = verdict(config, mutated)
        if before != after:
            return config, before, after
    return None


def page_says_documentation_only(page: str, column: Column) -> bool:
    """The legend's row for `column` names the documentation-only action."""
    (legend,) = [t for t in read_tables(page) if t.heading == "Legend" and t.header[0] == "Column"]
    action = legend.header.index("Guard action on an unsupported cell")
    finding = legend.header.index("Finding id")
    return any(
        row[finding].strip("`") == column.id.rule_id
        and row[action] == Action.DOCUMENTATION_ONLY.value
        for row in legend.rows
    )


@pytest.fixture(scope="module")
def baseline_page() -> str:
    return render_page(MATRIX, release=BASELINE)


@pytest.mark.parametrize(("table_index", "row_index", "column_id"), _cells())
def test_every_cell_is_live(
    table_index: int, row_index: int, column_id: ColumnId, baseline_page: str
) -> None:
    table = MATRIX.tables[table_index]
    row = table.rows[row_index]
    column = MATRIX.column(column_id)
    cell_name = f"{table.arch.value} {row.backend} {column_id.value}"
    for change, cell in mutations(row.cells[column_id]):
        mutated = mutated_matrix(table_index, row_index, column_id, cell)
        try:
            page = render_page(mutated, release=BASELINE)
        except ExampleCheckError as error:
            # A launch example this cell decides stops passing: the build fails, visibly.
            page = f"the build fails: {error}"
        assert page != baseline_page, f"{cell_name} ({change}): the page did not change"
        if column.action is Action.DOCUMENTATION_ONLY:
            assert page_says_documentation_only(page, column), (
                f"{cell_name}: the column is documentation-only but the page does not say so"
            )
            continue
        difference = first_difference(table, row.backend, mutated)
        assert difference is not None, (
            f"{cell_name} ({change}): no configuration of the search space gets a different "
            "verdict from the guard; the guard ignores this cell"
        )


def test_every_cell_is_parametrized() -> None:
    cells = sum(len(table.rows) * len(table.columns) for table in MATRIX.tables)
    assert len(_cells()) == cells > 0


def test_the_search_spaces_copies_are_constructed_configurations() -> None:
    """The search builds its configurations as copies; each equals the configuration its
    own field values construct, canonical form included, for a backend of each table."""
    names = [f.name for f in dataclass_fields(AttentionConfig) if f.init]
    for table in MATRIX.tables:
        copies = list(search_space(table, table.rows[0].backend))
        assert len(copies) > 1000
        for copy in copies:
            built = AttentionConfig(**{name: getattr(copy, name) for name in names})
            assert copy == built and copy.parsed == built.parsed, copy


def test_a_difference_names_the_changed_claim() -> None:
    """The search finds the exact configuration that one FP4 cell decides.

    The cell is the first MLA FP4 cell that is ✅ or ❌ for a backend able to serve both
    phases, picked from the live matrix and flipped whichever way it points today.
    """
    mla = next(i for i, t in enumerate(MATRIX.tables) if t.arch.value == "mla")
    table = MATRIX.tables[mla]
    index, row = next(
        (i, r)
        for i, r in enumerate(table.rows)
        if r.cells[ColumnId.FP4_KV].kind in (CellKind.SUPPORTED, CellKind.UNSUPPORTED)
        and len(MATRIX.backend(r.backend).phases) == 2
    )
    supported = row.cells[ColumnId.FP4_KV].kind is CellKind.SUPPORTED
    mutated = mutated_matrix(mla, index, ColumnId.FP4_KV, NO if supported else YES)
    difference = first_difference(table, row.backend, mutated)
    assert difference is not None
    config, before, after = difference
    assert config.kv_cache_dtype == "fp4_e2m1"
    refused, accepted = (after, before) if supported else (before, after)
    assert [v[:3] for v in refused].count(("fp4-kv", "error", row.backend)) == 1
    assert ("fp4-kv", "error", row.backend) not in [v[:3] for v in accepted]


def test_documentation_only_columns_are_labelled_on_the_page() -> None:
    """The exemption has teeth: a documentation-only column is declared in the legend."""
    columns = tuple(
        replace(c, action=Action.DOCUMENTATION_ONLY) if c.id is ColumnId.MULTIMODAL else c
        for c in MATRIX.columns
    )
    relaxed = replace(MATRIX, columns=columns)
    page = render_page(relaxed, release=BASELINE)
    assert page_says_documentation_only(page, relaxed.column(ColumnId.MULTIMODAL))
    baseline = render_page(MATRIX, release=BASELINE)
    assert not page_says_documentation_only(baseline, MATRIX.column(ColumnId.MULTIMODAL))


def test_mutations_change_every_kind() -> None:
    kinds = (CellKind.NOT_APPLICABLE, CellKind.UNTESTED, CellKind.NOT_STATED)
    for kind_cell in (YES, NO, *(Cell(kind) for kind in kinds)):
        assert all(new != kind_cell for _, new in mutations(kind_cell))
    fixed = Cell(CellKind.PAGE_SIZES, page_sizes=(32, 64), fixed=True)
    assert {new for _, new in mutations(fixed)} == {
        replace(fixed, fixed=False),
        replace(fixed, page_sizes=(32, 64, 16)),
        replace(fixed, page_sizes=(32,)),
    }
