"""Every disputed cell (`compat audit`) is marked on its release's page, with a tooltip that
says what the code does and where, and the page lists it under "Where this page and the
code disagree"."""

from __future__ import annotations

import html

import pytest
from markdown_tables import read_tables, table_under
from paths import ROOT

from compat.guard.audit import audit
from compat.releases import NEWEST, RELEASE_NAMES
from compat.vocab.terms import Arch

SECTION = "Where this page and the code disagree"


def _page(release: str) -> str:
    return (ROOT / "docs" / "releases" / f"{release}.md").read_text(encoding="utf-8")


def _marks(page: str) -> dict[tuple[Arch, str, str], str]:
    """(architecture, backend, column header) -> the marker's tooltip, read from the page."""
    found = {}
    for arch in Arch:
        table = table_under(page, f"{arch.label} backends")
        for (row, column), title in table.marks.items():
            backend = table.rows[row][0].rsplit("[`", 1)[1].rstrip("`]")
            found[arch, backend, table.header[column]] = html.unescape(title)
    return found


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_audit_row_is_marked_on_its_page_and_nothing_else_is(release: str) -> None:
    page = _page(release)
    marks = _marks(page)
    disputes = audit(release)
    assert set(marks) == {(d.arch, d.backend, d.header) for d in disputes}
    for dispute in disputes:
        title = marks[dispute.arch, dispute.backend, dispute.header]
        assert title.startswith(f"Disputed: the page says {dispute.documented}")
        assert dispute.verdict.value in title or "runs it" in title
        for _, site in dispute.sites:
            assert site is not None and site in title  # what the code does, and where
    section = [t for t in read_tables(page) if t.heading == SECTION]
    if disputes:
        (table,) = section
        assert [row[1] for row in table.rows] == [
            f"{d.display_name} (`{d.backend}`)" for d in disputes
        ]
    else:
        assert section == [] and f"## {SECTION}" in page


def test_the_main_page_marks_the_newest_release_s_disputes() -> None:
    main = (ROOT / "docs" / "attention_backend.md").read_text(encoding="utf-8")
    assert _marks(main) == _marks(_page(NEWEST))
    assert len(_marks(main)) == len(audit(NEWEST)) > 0
