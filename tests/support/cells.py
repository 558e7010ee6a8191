"""Example cells picked from the live matrix, and one-cell copies of it.

Mechanism tests must pass after any single-cell change of `compat/matrix.py`, so they do
not hard-code which backend has which cell. They either pick their example from
`MATRIX` at run time ("the first MLA row whose FP4 cell is ❌ and which otherwise runs")
or pin the cell they rely on in an in-memory copy (`with_cell`). Only the tests that pin
the PR #14467 baseline name literal cells.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec.structs

from compat import MATRIX, AttentionConfig, check
from compat.claim.cells import Cell, CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix, Row
from compat.vocab.terms import Arch, KvDtype, Phase

YES = Cell(CellKind.SUPPORTED)
NO = Cell(CellKind.UNSUPPORTED)
FP4 = KvDtype.FP4_E2M1.value
B200: dict[str, Any] = {"platform": "cuda", "compute_capability": (10, 0)}


def with_cell(matrix: Matrix, arch: Arch, backend: str, column: ColumnId, cell: Cell) -> Matrix:
    """A fresh copy of `matrix` (fresh caches, validated again) with one cell replaced."""
    tables = []
    for table in matrix.tables:
        if table.arch is arch:
            rows = tuple(
                msgspec.structs.replace(row, cells={**row.cells, column: cell})
                if row.backend == backend
                else row
                for row in table.rows
            )
            assert any(row.backend == backend for row in table.rows), (
                f"no {arch.value} row for {backend}"
            )
            table = msgspec.structs.replace(table, rows=rows)
        tables.append(table)
    return msgspec.structs.replace(matrix, tables=tuple(tables))


def with_cells(matrix: Matrix, *cells: tuple[Arch, str, ColumnId, Cell]) -> Matrix:
    """`with_cell` for several cells at once."""
    for arch, backend, column, cell in cells:
        matrix = with_cell(matrix, arch, backend, column, cell)
    return matrix


def opposite(cell: Cell) -> Cell:
    """✅ <-> ❌."""
    assert cell.kind in (CellKind.SUPPORTED, CellKind.UNSUPPORTED), cell
    return NO if cell.kind is CellKind.SUPPORTED else YES


def rows_with(arch: Arch, column: ColumnId, kind: CellKind) -> Iterator[Row]:
    """The rows of the live `arch` table whose `column` cell is of `kind`, in table order."""
    return (row for row in MATRIX.table(arch).rows if row.cells[column].kind is kind)


def fp4_refused_on_b200(arch: Arch = Arch.MLA) -> str:
    """The first `arch` backend whose only objection on a B200 is its ❌ FP4 cell.

    Without an FP4 cache it runs as the single backend; with one, the guard's only error
    is the FP4 column's.
    """
    for row in rows_with(arch, ColumnId.FP4_KV, CellKind.UNSUPPORTED):
        fields = {"attention_arch": arch.value, "attention_backend": row.backend, **B200}
        if not check(AttentionConfig(**fields)).ok:
            continue
        report = check(AttentionConfig(kv_cache_dtype=FP4, **fields))
        # The page's FP4 rule, and SGLang's own copy of it where its start-up checks it.
        if {f.rule.removeprefix("startup-") for f in report.errors} == {ColumnId.FP4_KV.rule_id}:
            return row.backend
    raise AssertionError(f"no {arch.value} backend is refused on a B200 for its FP4 cell alone")


def fp4_accepted_on_b200(arch: Arch = Arch.MLA) -> tuple[str, ...]:
    """The `arch` backends with a ✅ FP4 cell that run alone with an FP4 cache on a B200."""
    found = tuple(
        row.backend
        for row in rows_with(arch, ColumnId.FP4_KV, CellKind.SUPPORTED)
        if check(
            AttentionConfig(
                attention_arch=arch.value,
                attention_backend=row.backend,
                kv_cache_dtype=FP4,
                **B200,
            )
        ).ok
    )
    assert found, f"no {arch.value} backend accepts an FP4 cache on a B200"
    return found


def fp4_partner_candidate(arch: Arch = Arch.MLA) -> Row:
    """The first `arch` row whose FP4 cell decides whether it is a decode partner of the
    pairing rule: ✅ or ❌, serves decode, and is neither the rule's prefill backend nor
    one of its excluded decode backends."""
    (rule,) = MATRIX.pairing_rules
    for row in MATRIX.table(arch).rows:
        if (
            row.cells[ColumnId.FP4_KV].kind in (CellKind.SUPPORTED, CellKind.UNSUPPORTED)
            and Phase.DECODE in MATRIX.backend(row.backend).phases
            and row.backend != rule.prefill_backend
            and row.backend not in rule.excluded_decode
        ):
            return row
    raise AssertionError(f"no {arch.value} row can be a decode partner")


def page_row_index(lines: list[str], arch: Arch, backend: str) -> int:
    """The index of `backend`'s row in the `arch` table of the page's `lines`."""
    table = MATRIX.table(arch)
    row = MATRIX.row(arch, backend)
    assert row is not None, f"no {arch.value} row for {backend}"
    heading = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("#") and line.lstrip("#").strip().startswith(table.title)
    )
    label = f"| {row.display_name} [`{backend}`] |"
    return next(i for i in range(heading, len(lines)) if lines[i].startswith(label))


def page_cell_position(arch: Arch, column: ColumnId) -> int:
    """The index of `column`'s cell in a page row of the `arch` table split on `|`."""
    return 2 + MATRIX.table(arch).columns.index(column)
