"""The mutation proof, release by release: a documented cell moves its release's page and
documented verdict, and never a start-up prediction.

For every release, cells of that release's matrix are flipped one at a time in a copy of it:
every cell the release itself brought (a changed cell, a row read from the code or from a
docs commit) and, for each column of each table, the first row whose cell is ✅ or ❌. Then:

- the page rendered from the copy, read back as Markdown, differs from the release's page in
  exactly that cell (or the page is not built, naming the launch example the cell breaks);
- at least one launch of a small search space built for the cell gets another verdict from
  the guard, unless the column judges a phase the backend never serves;
- for every launch of it, SGLang's predicted start-up is unchanged: whether it refuses, the
  prefill and decode backends it runs, and the page size.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import pytest
from markdown_tables import read_tables
from msgspec.structs import replace

from compat import AttentionConfig, check
from compat.claim.cells import Cell, CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix
from compat.guard.report import Report
from compat.inputs.validation import FEATURE_FIELDS
from compat.publish.pages import ExampleCheckError, render_page
from compat.releases import RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Arch, Platform

YES = Cell(CellKind.SUPPORTED)
NO = Cell(CellKind.UNSUPPORTED)
HEADINGS = {Arch.MHA: "MHA backends", Arch.MLA: "MLA backends"}
MACHINES: dict[Platform, tuple[dict[str, Any], ...]] = {
    Platform.CUDA: (
        {"platform": "cuda", "compute_capability": (10, 0)},
        {"platform": "cuda", "compute_capability": (9, 0)},
    ),
    Platform.ROCM: ({"platform": "rocm"},),
    Platform.NPU: ({"platform": "npu"},),
    Platform.XPU: ({"platform": "xpu"},),
    Platform.CPU: ({"platform": "cpu"},),
}

Cut = tuple[Arch, str, ColumnId]


def flipped(cell: Cell) -> Cell:
    """The cell that says the opposite: ✅ <-> ❌, native page sizes to ❌ (no native paging:
    SGLang may snap to a fixed size itself, but never emulates one), any other kind to ✅."""
    kind = cell.kind
    if kind in (CellKind.SUPPORTED, CellKind.NOT_APPLICABLE, CellKind.PAGE_SIZES):
        return NO
    return YES


def with_cell(matrix: Matrix, cut: Cut, cell: Cell) -> Matrix:
    """A fresh copy of `matrix` (fresh caches, validated again) with one cell replaced."""
    arch, backend, column = cut
    tables = tuple(
        replace(
            table,
            rows=tuple(
                replace(row, cells={**row.cells, column: cell}) if row.backend == backend else row
                for row in table.rows
            ),
        )
        if table.arch is arch
        else table
        for table in matrix.tables
    )
    return replace(matrix, tables=tables)


def _cuts(release: str) -> list[Cut]:
    """The cells flipped for `release`: those it brought, and a ✅ or ❌ of each column."""
    matrix = release_matrix(release)
    index = RELEASE_NAMES.index(release)
    before = release_matrix(RELEASE_NAMES[index - 1]) if index else None
    cuts: list[Cut] = []
    for table in matrix.tables:
        for row in table.rows:
            old = before.row(table.arch, row.backend) if before is not None else None
            for column, cell in row.cells.items():
                if cell.evidence is not None and (old is None or old.cells[column] != cell):
                    cuts.append((table.arch, row.backend, column))
        for column in table.columns:
            plain = (
                row.backend
                for row in table.rows
                if row.cells[column].kind in (CellKind.SUPPORTED, CellKind.UNSUPPORTED)
            )
            first = next(plain, None)
            if first is not None and (table.arch, first, column) not in cuts:
                cuts.append((table.arch, first, column))
    return cuts


CUTS = [
    pytest.param(release, cut, id=f"{release}-{cut[0].value}-{cut[1]}-{cut[2].value}")
    for release in RELEASE_NAMES
    for cut in _cuts(release)
]


def _settings(release: str, column: ColumnId) -> list[dict[str, Any]]:
    """Launch settings that make `column` apply."""
    kv = RELEASES[release].kv_choices
    if column is ColumnId.NATIVE_PAGE_SIZES:
        return [{"page_size": size} for size in (1, 16, 64, 128, 256)]
    if column is ColumnId.FP8_KV:
        return [{"kv_cache_dtype": d} for d in ("fp8_e4m3", "fp8_e5m2") if d in kv]
    if column is ColumnId.FP4_KV:
        return [{"kv_cache_dtype": d} for d in kv if KV_DTYPE_SPELLINGS[d].is_fp4]
    if column in (ColumnId.SPEC_TOPK_1, ColumnId.SPEC_TOPK_GT1):
        topk = 1 if column is ColumnId.SPEC_TOPK_1 else 4
        spec = {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": topk}
        return [{**spec, "page_size": size} for size in (None, 1, 64)]
    if column is ColumnId.SLIDING_WINDOW:
        return [{"sliding_window": True}]
    if column is ColumnId.MULTIMODAL:
        return [{"multimodal": True}]
    return [{}]


def _placements(matrix: Matrix, cut: Cut) -> list[dict[str, str]]:
    """The cut's backend for both phases, for one, and (for the page-size column) beside
    another backend of its table, whose page size SGLang may keep for both phases."""
    arch, name, column = cut
    placements = [
        {"attention_backend": name},
        {"prefill_attention_backend": name},
        {"decode_attention_backend": name},
    ]
    if column is ColumnId.NATIVE_PAGE_SIZES:
        for other in (row.backend for row in matrix.table(arch).rows if row.backend != name):
            placements.append(
                {"prefill_attention_backend": other, "decode_attention_backend": name}
            )
            placements.append(
                {"prefill_attention_backend": name, "decode_attention_backend": other}
            )
    return placements


def launches(release: str, cut: Cut) -> list[AttentionConfig]:
    """Launches that put the cut's backend in front of its column, on each machine it runs
    on, for a model with and without the features it requires."""
    arch, name, column = cut
    matrix = release_matrix(release)
    backend = matrix.backend(name)
    required = {FEATURE_FIELDS[f]: True for f in backend.requires_features}
    models = [{}, required] if required else [{}]
    machines = [m for p in Platform if p in backend.platforms for m in MACHINES[p]]
    return [
        AttentionConfig(
            attention_arch=arch.value,
            sglang_version=release,
            **placement,
            **model,
            **machine,
            **setting,
        )
        for placement, model, machine, setting in itertools.product(
            _placements(matrix, cut), models, machines, _settings(release, column)
        )
    ]


def verdict(report: Report) -> tuple[tuple[str, ...], ...]:
    return tuple(
        sorted(
            (f.rule, f.severity.value, f.backend or "", f.enforced.value, f.message)
            for f in report.findings
        )
    )


def startup(report: Report) -> tuple[object, ...]:
    """What SGLang is predicted to do: refuse at start-up, or the backends and page size it
    runs, and whether it then fails building them."""
    resolved = report.resolved
    return (
        report.refused_at_startup,
        report.sglang_fails,
        resolved.prefill_backend,
        resolved.decode_backend,
        resolved.page_size,
    )


@cache
def _tables(release: str) -> dict[tuple[str, str, str], str]:
    return _cells(render_page(release_matrix(release), release=release))


def _cells(page: str) -> dict[tuple[str, str, str], str]:
    """(table heading, row label, column header) -> the cell's text, read from the Markdown."""
    found = {}
    for table in read_tables(page):
        if table.heading in HEADINGS.values():
            for row in table.rows:
                for header, text in zip(table.header[1:], row[1:], strict=True):
                    found[(table.heading, row[0], header)] = text
    return found


@pytest.mark.parametrize(("release", "cut"), CUTS)
def test_a_flipped_cell_moves_the_page_and_the_verdict_never_start_up(
    release: str, cut: Cut
) -> None:
    arch, name, column = cut
    matrix = release_matrix(release)
    row = matrix.row(arch, name)
    assert row is not None
    old = row.cells[column]
    new = flipped(old)
    mutated = with_cell(matrix, cut, new)

    try:
        changed = _cells(render_page(mutated, release=release))
    except ExampleCheckError as error:
        assert f"the {name} example" in str(error), error  # the page is not built, visibly
    else:
        base = _tables(release)
        moved = {key: (base[key], changed[key]) for key in base if base[key] != changed.get(key)}
        label = f"{row.display_name} [`{name}`]"
        header = matrix.header(arch, column)
        assert moved == {(HEADINGS[arch], label, header): (old.symbol, new.symbol)}

    differs = False
    for config in launches(release, cut):
        before, after = check(config, matrix), check(config, mutated)
        assert startup(before) == startup(after), (release, cut, config)
        differs = differs or verdict(before) != verdict(after)
    if matrix.column(column).phases & matrix.backend(name).phases:
        assert differs, f"{release}: no launch's verdict follows {name}'s {column.value} cell"


def test_every_release_flips_cells_it_brought_and_every_column() -> None:
    """The search is not empty: each release has cuts, later releases their own cells too."""
    counts = {release: len(_cuts(release)) for release in RELEASE_NAMES}
    columns = {release: {cut[2] for cut in _cuts(release)} for release in RELEASE_NAMES}
    for release in RELEASE_NAMES:
        matrix = release_matrix(release)
        assert columns[release] == {c for t in matrix.tables for c in t.columns}
    assert counts["0.5.19"] > counts["0.5.18"]  # the two MiniCPM rows read from code


@pytest.mark.parametrize("release", ["0.5.7", "0.5.16", "0.5.23"])
def test_the_flashmla_fp4_cell_never_moves_what_sglang_starts(release: str) -> None:
    """The case of the issue: flashmla's FP4 cell flipped, in any release's page, moves
    the documented verdict of an FP4 launch on it and never the predicted start-up."""
    matrix = release_matrix(release)
    cut = (Arch.MLA, "flashmla", ColumnId.FP4_KV)
    row = matrix.row(Arch.MLA, "flashmla")
    assert row is not None
    mutated = with_cell(matrix, cut, flipped(row.cells[ColumnId.FP4_KV]))
    rules = RELEASES[release]
    for dtype in (d for d in rules.kv_choices if KV_DTYPE_SPELLINGS[d].is_fp4):
        config = AttentionConfig(
            attention_arch="mla", attention_backend="flashmla", kv_cache_dtype=dtype,
            platform="cuda", compute_capability=(10, 0), sglang_version=release,
        )  # fmt: skip
        before, after = check(config, matrix), check(config, mutated)
        assert startup(before) == startup(after)
        fp4 = [{f.backend for f in r.findings if f.rule == "fp4-kv"} for r in (before, after)]
        assert fp4[0] != fp4[1], "the documented verdict follows the cell"
        if dtype in rules.kv4.spellings:  # what the release's own KV4 check says
            assert before.refused_at_startup is ("flashmla" not in rules.kv4.single[Arch.MLA])
