"""Each release's page, read back as Markdown: its rows are that release's backends.

The oracle is the release's own start-up data (what `--attention-backend` and
`--kv-cache-dtype` accept), never the documented matrix: the tables are read from the
committed pages with the tests' own Markdown reader. A backend the release accepts has a row
(an alias aside: the page lists it with the backend it stands for), a backend it refuses has
none, and no line outside the release's list of changes speaks of a value it removed.
"""

from __future__ import annotations

import re

import pytest
from markdown_tables import read_tables
from paths import ROOT

from compat.releases import NEWEST, RELEASE_NAMES, RELEASES

TABLE_HEADINGS = ("MHA backends", "MLA backends")
_FLAG = re.compile(r"\[`([a-z0-9_]+)`\]$")
_CODE = re.compile(r"`([^`]+)`")
_ACCEPTS = re.compile(r"^- `--[a-z-]+`( \(and the phase flags\))? accepts?: ")


def _page(release: str) -> str:
    return (ROOT / "docs" / "releases" / f"{release}.md").read_text(encoding="utf-8")


def _rows(page: str) -> dict[str, list[str]]:
    """Table heading -> the `--attention-backend` value of each row, in page order."""
    found: dict[str, list[str]] = {}
    for table in read_tables(page):
        if table.heading in TABLE_HEADINGS:
            flags = [_FLAG.search(row[0]) for row in table.rows]
            assert all(flags), f"a row of {table.heading} names no backend"
            found[table.heading] = [flag.group(1) for flag in flags if flag]
    assert set(found) == set(TABLE_HEADINGS)
    return found


def _note_items(page: str, title: str) -> list[str]:
    """The list items of the `!!! note "title"` admonition (empty when the page has none)."""
    lines = page.splitlines()
    if f'!!! note "{title}"' not in lines:
        return []
    start = lines.index(f'!!! note "{title}"')
    items = []
    for line in lines[start + 1 :]:
        if line and not line.startswith("    "):
            break
        if line.startswith("    - "):
            items.append(line.removeprefix("    - "))
    return items


def _aliases(page: str) -> dict[str, str]:
    """The page's other names for a backend: name -> the backend whose row judges it."""
    found = {}
    for item in _note_items(page, "Other names for a backend"):
        name, backend = _CODE.findall(item)
        found[name] = backend
    return found


def _rowless(page: str) -> list[str]:
    return [_CODE.findall(item)[0] for item in _note_items(page, "Backends without a table row")]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_rows_are_the_backends_the_release_accepts(release: str) -> None:
    page = _page(release)
    rules = RELEASES[release]
    rows = _rows(page)
    with_row = {name for names in rows.values() for name in names}
    accepted = set(rules.backend_choices)
    aliases = _aliases(page)
    # What start-up rewrites to another backend is an alias; the page must say so.
    assert set(rules.backend_aliases) <= set(aliases)
    for name, backend in aliases.items():
        assert name in accepted and name not in with_row, (release, name)
        assert backend in with_row, f"{release}: {name} stands for {backend}, which has no row"
    refused = with_row - accepted
    assert not refused, f"{release}'s page has rows for backends it refuses: {sorted(refused)}"
    missing = accepted - set(aliases) - with_row
    assert not missing, f"{release}'s page has no row for {sorted(missing)}"
    assert _rowless(page) == []
    for heading, names in rows.items():
        assert len(names) == len(set(names)), f"{release}: a backend has two rows in {heading}"


def _removed(release: str) -> set[str]:
    """Backends and KV dtypes an earlier release accepted that `release` does not."""
    index = RELEASE_NAMES.index(release)
    rules = RELEASES[release]
    earlier = [RELEASES[r] for r in RELEASE_NAMES[:index]]
    backends = {n for r in earlier for n in r.backend_choices} - set(rules.backend_choices)
    dtypes = {d for r in earlier for d in r.kv_choices} - set(rules.kv_choices)
    return backends | dtypes


def _current_lines(page: str, release: str) -> list[str]:
    """The page's lines, without the release's lists of what changed (which name what left)."""
    lines = page.splitlines()
    start = lines.index(f"## SGLang {release} {{ #release }}")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    changes = [
        i
        for i in range(start, end)
        if lines[i].lstrip().startswith("- ") and not _ACCEPTS.match(lines[i])
    ]
    return [line for i, line in enumerate(lines) if i not in changes]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_no_line_presents_a_removed_value_as_current(release: str) -> None:
    removed = _removed(release)
    pages = [_page(release)]
    if release == NEWEST:
        pages.append((ROOT / "docs" / "attention_backend.md").read_text(encoding="utf-8"))
    for page in pages:
        for line in _current_lines(page, release):
            named = set(re.findall(r"[a-z0-9_]+", line)) & removed
            assert not named, f"{release}: {sorted(named)} presented as current: {line[:160]}"


def test_removals_are_seen_by_the_check() -> None:
    """The check has teeth: releases that removed values exist, and their pages say so."""
    assert "fp4_e2m1" in _removed("0.5.21") and "cutlass_mla" in _removed("0.5.20")
    page = _page("0.5.21")
    assert any("fp4_e2m1" in line for line in page.splitlines())
    assert not any("fp4_e2m1" in line for line in _current_lines(page, "0.5.21"))


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_fp4_column_speaks_the_release_spellings(release: str) -> None:
    """The legend's FP4 column names exactly the FP4 values the release's KV4 check keys on."""
    page = _page(release)
    legend = next(t for t in read_tables(page) if t.heading == "Legend" and t.header[0] == "Column")
    (fp4,) = [row for row in legend.rows if row[0].startswith("FP4 KV Cache")]
    spelled = set(_CODE.findall(fp4[1]))
    assert spelled == set(RELEASES[release].kv4.spellings)
    assert spelled <= set(RELEASES[release].kv_choices)
