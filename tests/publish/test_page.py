"""The rendered page: the baseline tables cell by cell, freshness, and facts derived from cells.

`test_tables_match_the_baseline_cell_by_cell` pins the PR #14467 baseline (the page of SGLang
0.5.7) and is meant to fail on any cell change, even a deliberate one. Every other test here
checks a mechanism and passes after any single-cell change: it picks its cells from the live
matrix or pins them in an in-memory copy.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jinja2
import msgspec.structs
import pytest
from cells import fp4_partner_candidate, opposite, with_cell
from markdown_tables import MarkdownTable, read_tables, table_under
from paths import FIXTURES, ROOT

from compat.claim.baseline import MATRIX
from compat.claim.cells import Cell, CellKind
from compat.claim.columns import ColumnId
from compat.publish.pages import PAGE_PATH, RELEASE_DIR, TEMPLATE_NAME, render_page
from compat.releases import ENTRIES, NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.terms import Arch

PAGE = ROOT / PAGE_PATH
BASELINE = RELEASE_NAMES[0]
BASELINE_PAGE = ROOT / "docs" / RELEASE_DIR / f"{BASELINE}.md"
TEMPLATES = ROOT / "templates"
FIXTURE = FIXTURES / "baseline_tables.md"
TABLE_HEADINGS = ("MHA backends", "MLA backends")


def _page_text() -> str:
    return PAGE.read_text(encoding="utf-8")


def _baseline_text() -> str:
    return BASELINE_PAGE.read_text(encoding="utf-8")


# Rows the baseline release adds to PR #14467's tables, read from its own code (its entry's
# page changes): the upstream page never had them, so the oracle does not either.
CODE_READ_ROWS = frozenset(
    new.row.backend for change in ENTRIES[BASELINE].doc_changes for new in change.rows
)


def _plain_labels(table: MarkdownTable) -> list[list[str]]:
    """The page writes `Name [`flag`]`; the oracle writes `Name [flag]`. Rows read from
    the code, not from PR #14467's page, are left out."""
    return [
        [row[0].replace("`", ""), *row[1:]]
        for row in table.rows
        if not any(row[0].endswith(f"[`{name}`]") for name in CODE_READ_ROWS)
    ]


def _note(page: str, title: str) -> str:
    """The body of the `!!! note "title"` admonition."""
    lines = page.splitlines()
    start = lines.index(f'!!! note "{title}"')
    body = []
    for line in lines[start + 1 :]:
        if line and not line.startswith("    "):
            break
        body.append(line)
    return "\n".join(body)


# == The PR #14467 baseline: fails on purpose when a cell changes; then record the new baseline in
# tests/fixtures/baseline_tables.md.


@pytest.mark.parametrize("heading", TABLE_HEADINGS)
def test_tables_match_the_baseline_cell_by_cell(heading: str) -> None:
    expected = table_under(FIXTURE.read_text(encoding="utf-8"), heading)
    actual = table_under(_baseline_text(), heading)
    assert actual.header == expected.header
    assert [row[0] for row in _plain_labels(actual)] == [row[0] for row in expected.rows]
    for got, want in zip(_plain_labels(actual), expected.rows, strict=True):
        assert len(got) == len(expected.header), got
        for column, (cell, oracle) in enumerate(zip(got, want, strict=True)):
            assert cell == oracle, (
                f"{want[0]} / {expected.header[column]}: the page says {cell!r}, the PR #14467 "
                f"baseline says {oracle!r}. If the matrix changed on purpose, record the new "
                "baseline in tests/fixtures/baseline_tables.md"
            )


def test_the_baseline_is_175_of_175_cells() -> None:
    """Every cell of both baseline tables, headers included, equals the upstream page's."""
    page, fixture = _baseline_text(), FIXTURE.read_text(encoding="utf-8")
    equal = total = 0
    for heading in TABLE_HEADINGS:
        actual, expected = table_under(page, heading), table_under(fixture, heading)
        got = [actual.header, *_plain_labels(actual)]
        want = [expected.header, *expected.rows]
        total += sum(len(row) for row in want)
        equal += sum(
            a == b for g, w in zip(got, want, strict=True) for a, b in zip(g, w, strict=False)
        )
    assert (equal, total) == (175, 175)


# == Mechanisms: pass after any single-cell change ==============================================


def test_committed_page_equals_a_fresh_render() -> None:
    assert _page_text() == render_page(), "docs/attention_backend.md is stale: run `compat docs`"


def test_a_typo_in_the_template_is_an_error(tmp_path: Path) -> None:
    template = (TEMPLATES / TEMPLATE_NAME).read_text(encoding="utf-8")
    broken = template.replace("page.notes.cuda_graph_off", "page.notes.cuda_graph_of", 1)
    assert broken != template
    (tmp_path / TEMPLATE_NAME).write_text(broken, encoding="utf-8")
    with pytest.raises(jinja2.UndefinedError):
        render_page(template_dir=tmp_path)


def test_no_myst_fences() -> None:
    offending = [line for line in _page_text().splitlines() if line.startswith("```{")]
    assert offending == []


def test_page_starts_with_h1_and_generated_comment() -> None:
    lines = _page_text().splitlines()
    if lines[0] == "---":  # front matter (page options for MkDocs Material)
        lines = lines[lines.index("---", 1) + 1 :]
    assert lines[0] == "# Attention backends"
    assert lines[1].startswith("<!--")
    comment = "\n".join(lines[1 : lines.index("-->") + 1]) if "-->" in lines else lines[1]
    assert "do not edit" in comment.lower()
    assert "compat/claim/baseline.py" in comment and "compat/releases/" in comment
    assert "compat docs" in comment
    assert sum(1 for line in lines if line.startswith("# ")) == 1


def test_exactly_one_trailing_newline() -> None:
    text = _page_text()
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


def test_render_is_deterministic() -> None:
    assert render_page() == render_page()


def test_admonitions_use_material_syntax() -> None:
    text = _page_text()
    assert '!!! note "' in text
    assert ":white_check_mark:" not in text and ":x:" not in text


def test_headings_are_unique() -> None:
    headings = [line for line in _page_text().splitlines() if line.startswith("#")]
    assert len(headings) == len(set(headings))


def _listed(names: tuple[str, ...]) -> str:
    """`a`, `a` or `b`, `a`, `b` or `c`: how the note lists backends."""
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def test_one_cell_change_moves_that_cell_and_the_fp4_partners() -> None:
    # An MLA FP4 cell that decides whether its backend is a decode partner of fa4, picked
    # from the live matrix and flipped whichever way it points today.
    row = fp4_partner_candidate(Arch.MLA)
    old = row.cells[ColumnId.FP4_KV]
    new = opposite(old)
    before = render_page(MATRIX, release=BASELINE)
    changed = with_cell(MATRIX, Arch.MLA, row.backend, ColumnId.FP4_KV, new)
    after = render_page(changed, release=BASELINE)

    differences = []
    for heading in TABLE_HEADINGS:
        old_table, new_table = table_under(before, heading), table_under(after, heading)
        assert old_table.header == new_table.header
        for old_row, new_row in zip(old_table.rows, new_table.rows, strict=True):
            for column, (old_cell, new_cell) in enumerate(zip(old_row, new_row, strict=True)):
                if old_cell != new_cell:
                    differences.append(
                        (heading, old_row[0], old_table.header[column], old_cell, new_cell)
                    )
    label = f"{row.display_name} [`{row.backend}`]"
    header = MATRIX.header(Arch.MLA, ColumnId.FP4_KV)
    assert differences == [("MLA backends", label, header, old.symbol, new.symbol)]

    (rule,) = MATRIX.pairing_rules
    title = f"{rule.kv_family.value.upper()} KV cache with {rule.prefill_backend}"
    old_note, new_note = _note(before, title), _note(after, title)
    old_partners = tuple(
        r.backend
        for r in MATRIX.table(Arch.MLA).rows
        if r.backend in MATRIX.decode_partners(rule, Arch.MLA)
    )
    # The flipped backend joins or leaves the list; nothing else moves.
    new_partners = tuple(
        r.backend for r in MATRIX.table(Arch.MLA).rows if (r.backend in old_partners) != (r is row)
    )
    assert (row.backend in old_partners) is (old.kind is CellKind.SUPPORTED)
    assert f" for MHA models and {_listed(old_partners)} for MLA models" in old_note
    assert f" for MHA models and {_listed(new_partners)} for MLA models" in new_note


def test_fixed_page_sizes_follow_the_cells() -> None:
    title = "Native and emulated paging"
    # Pinned in memory: fa4 (MHA) lists 128 without fixing it, flashmla (MLA) is fixed at 64.
    baseline = with_cell(
        with_cell(
            MATRIX,
            Arch.MHA,
            "fa4",
            ColumnId.NATIVE_PAGE_SIZES,
            Cell(CellKind.PAGE_SIZES, page_sizes=(128,)),
        ),
        Arch.MLA,
        "flashmla",
        ColumnId.NATIVE_PAGE_SIZES,
        Cell(CellKind.PAGE_SIZES, page_sizes=(64,), fixed=True),
    )
    before = _note(render_page(baseline, release=BASELINE), title)
    assert "FA4 (FlashAttention 4) [`fa4`] (MHA)" not in before
    assert "FlashMLA [`flashmla`] (MLA): 64; any other page size becomes 64." in before

    fixed_fa4 = with_cell(
        baseline,
        Arch.MHA,
        "fa4",
        ColumnId.NATIVE_PAGE_SIZES,
        Cell(CellKind.PAGE_SIZES, page_sizes=(64, 128), fixed=True),
    )
    assert (
        "FA4 (FlashAttention 4) [`fa4`] (MHA): 64 or 128; any other page size becomes 128."
        in _note(render_page(fixed_fa4, release=BASELINE), title)
    )

    loose_flashmla = with_cell(
        baseline, Arch.MLA, "flashmla", ColumnId.NATIVE_PAGE_SIZES, Cell(CellKind.SUPPORTED)
    )
    assert "FlashMLA [`flashmla`]" not in _note(
        render_page(loose_flashmla, release=BASELINE), title
    )


def test_backends_without_rows_are_computed() -> None:
    rowless = [
        backend.name
        for backend in MATRIX.backends
        if all(MATRIX.row(table.arch, backend.name) is None for table in MATRIX.tables)
    ]
    assert rowless, "PR #14467's page has at least one backend without a row (nsa)"
    note = _note(render_page(MATRIX, release=BASELINE), "Backends without a table row")
    for name in rowless:
        assert f"`{name}`" in note


def test_phase_limited_backends_follow_backend_phases() -> None:
    note = _note(_baseline_text(), "Phase-limited backends")
    limited = [b for b in MATRIX.backends if len(b.phases) == 1]
    assert limited
    for backend in limited:
        assert f"`{backend.name}`" in note
    both = msgspec.structs.replace(
        MATRIX.backend("fa4"), phases=frozenset(MATRIX.backend("fa3").phases)
    )
    matrix = msgspec.structs.replace(
        MATRIX, backends=tuple(both if b.name == "fa4" else b for b in MATRIX.backends)
    )
    assert "`fa4`" not in _note(render_page(matrix, release=BASELINE), "Phase-limited backends")


def test_every_backend_and_source_is_listed() -> None:
    matrix = release_matrix(NEWEST)
    tables = {table.heading: table for table in read_tables(_page_text())}
    hardware = tables["Hardware requirements"]
    assert [row[0] for row in hardware.rows] == [f"`{b.name}`" for b in matrix.backends]
    sources = [row[0] for row in tables["Sources"].rows]
    assert len(sources) == len(set(sources))
    for evidence in matrix.sources:
        assert evidence.source in sources
    rules = [row[0] for row in tables["Cross-field rules"].rows]
    rule_ids = [
        *(rule.id for rule in matrix.pairing_rules),
        *(rule.id for rule in matrix.hybrid_caution_rules),
        *(rule.id for rule in matrix.spec_paged_rules),
        *(rule.id for rule in matrix.dtype_fallback_rules),
        *(requirement.rule_id for requirement in matrix.dtype_requirements),
    ]
    assert rule_ids
    for rule_id in rule_ids:
        assert f"`{rule_id}`" in rules
    defaults = tables["How SGLang chooses a backend"]
    newest = RELEASES[NEWEST]
    assert [row[3] for row in defaults.rows] == [f"`{d.backend}`" for d in newest.defaults]


def test_import_compat_does_not_load_jinja() -> None:
    code = "import sys, compat; print('jinja2' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
