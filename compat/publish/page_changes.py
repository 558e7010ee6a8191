"""What changed on the page, release by release: each documented change in words.

Every sentence is computed from the release entries (`DocChange`) and from the matrices they
fold into (the cell a change replaced is read from the release before), so the What changed
page and each release's page say the same, and a changed entry changes them both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from compat.claim.cells import Cell, CellKind
from compat.claim.matrix import Matrix, Row
from compat.claim.words import code, code_list, phases
from compat.publish.filters import headers_of, row_label, source
from compat.releases import RELEASE_NAMES, DocChange, doc_changes_of, release_matrix
from compat.releases.doc import read_from_code
from compat.vocab.terms import KvDtype


@dataclass(frozen=True)
class PageNews:
    """One documented change of one release, and what it moved, in words (Markdown)."""

    change: DocChange
    lines: tuple[str, ...]


def page_news(release: str) -> tuple[PageNews, ...]:
    """Each documented change of `release` (none for the baseline), in the entry's order."""
    index = RELEASE_NAMES.index(release)
    if not index:
        return ()
    before = release_matrix(RELEASE_NAMES[index - 1])
    after = release_matrix(release)
    return tuple(
        PageNews(change, tuple(_lines(change, before, after))) for change in doc_changes_of(release)
    )


def _lines(change: DocChange, before: Matrix, after: Matrix) -> Iterator[str]:
    if change.tagged_in is not None:
        yield (
            f"Merged before the v{change.tagged_in} tag, whose page already shows it; the "
            f"{RELEASE_NAMES[0]} page here keeps the PR #14467 page it restates, so the change "
            "is recorded from this release on."
        )
    for name in change.removed:
        where = [t.arch.label for t in before.tables if before.row(t.arch, name) is not None]
        yield f"{code(name)} leaves, with its row ({', '.join(where) or 'none'})."
    for new in change.rows:
        row = after.row(new.arch, new.row.backend)
        assert row is not None
        label = f"{new.arch.label} row {row_label(row)}"
        if before.row(new.arch, row.backend) is None:
            yield f"{label}: {_cells(after, new.arch.value, row)}; {_read(row)}."
        else:
            yield f"{label}: now backed by this change; its cells are unchanged."
    for cell_change in change.cells:
        old = before.row(cell_change.arch, cell_change.backend)
        new_row = after.row(cell_change.arch, cell_change.backend)
        assert old is not None and new_row is not None
        header = after.header(cell_change.arch, cell_change.column)
        yield (
            f"{cell_change.arch.label} {row_label(new_row)}, {header}: "
            f"{old.cells[cell_change.column].symbol} → {new_row.cells[cell_change.column].symbol}."
        )
    for backend in change.backends:
        if backend.name not in before.backend_names:
            continue  # a new backend: its row says the rest
        was = before.backend(backend.name)
        if backend.phases != was.phases:
            yield f"{code(backend.name)} serves {phases(backend.phases)}."
        if backend.kv_dtypes != was.kv_dtypes:
            taken = code_list(d.value for d in KvDtype if d in (backend.kv_dtypes or KvDtype))
            yield f"{code(backend.name)} takes `--kv-cache-dtype` {taken}."
    for name, target in change.aliases.items():
        yield f"{code(name)} is another name for {code(target)}: it is judged by that row."
    for column in change.columns:
        yield (
            f"{headers_of(after, column.id)}: speaks for "
            f"{code_list(d.value for d in column.dtypes)}."
        )
    for requirement in change.requirements:
        yield f"Rule {code(requirement.rule_id)} covers {code(requirement.dtype.value)}."
    for dtype in change.dropped_dtypes:
        yield f"{code(dtype.value)} and its requirement leave the page."
    if change.page is not None and change.page != change.evidence:
        yield f"The release's page: {source(change.page)}"


def _cells(matrix: Matrix, arch: str, row: Row) -> str:
    table = next(t for t in matrix.tables if t.arch.value == arch)
    headers = dict(table.headers)
    return ", ".join(f"{headers[c]} {row.cells[c].symbol}" for c in table.columns)


def _read(row: Row) -> str:
    """How many of a new row's cells were read from code, and how many it leaves open."""
    cells = list(row.cells.values())
    from_code = sum(1 for cell in cells if is_from_code(cell))
    open_ = sum(1 for cell in cells if cell.kind is CellKind.NOT_STATED)
    read = f"{from_code} of {len(cells)} cells read from the code" if from_code else "from the page"
    return f"{read}, {open_} not stated" if open_ else read


def is_from_code(cell: Cell) -> bool:
    """Whether a cell was read from a release's code (not from a page)."""
    return cell.evidence is not None and read_from_code(cell.evidence)
