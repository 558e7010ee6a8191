"""The page cache: a page is converted once until what its conversion reads changes, and a
site built from stored conversions is the site built without them, warnings included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT
from sample_site import build_sample_site

from compat.publish import finder_cache, page_cache

# A hook that says each conversion MkDocs makes (one line per page actually converted).
HOOKS = """\
import sys

import markdown

from compat.publish.page_cache import convert_once

_convert = markdown.Markdown.convert


def _said(self, text):
    print("CONVERTED", file=sys.stderr)
    return _convert(self, text)


markdown.Markdown.convert = _said


def on_page_markdown(markdown, page, config, files):
    convert_once(page, say=lambda line: print(line, file=sys.stderr))
    return markdown
"""
CONFIG = """\
site_name: cached pages
strict: true
theme:
  name: material
  font: false
validation:
  anchors: warn
markdown_extensions:
  - admonition
  - tables
  - pymdownx.superfences
  - toc:
      permalink: true
hooks:
  - hooks.py
"""
PAGES = {
    "index.md": "# Home\n\n## First part\n\nSee [the table](table.md#numbers).\n",
    "table.md": (
        "# Table\n\n## Numbers\n\n| a | b |\n|---|---|\n| `1` | **2** |\n\n"
        '!!! note\n    A note.\n\n```python\nprint("hi")\n```\n'
    ),
    "other.md": "# Other\n\n### Deep heading\n\nText with [home](index.md#first-part).\n",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(page_cache.DISABLE_VARIABLE, raising=False)
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    for name, text in PAGES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (root / "hooks.py").write_text(HOOKS, encoding="utf-8")
    return root


def _build(project: Path, site: str, **env: str) -> tuple[int, str, int]:
    """(exit code, output, pages converted)."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", str(project / site)],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT), **env},
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    return result.returncode, output, output.count("CONVERTED")


def _pages(site: Path) -> dict[str, str]:
    return {
        path.relative_to(site).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(site.rglob("*"))
        if path.suffix in (".html", ".json", ".xml")
    }


def test_a_second_build_converts_nothing_and_writes_the_same_site(project: Path) -> None:
    code, output, converted = _build(project, "first")
    assert code == 0 and converted == len(PAGES), output
    code, output, converted = _build(project, "second")
    assert code == 0 and converted == 0, output
    first, second = _pages(project / "first"), _pages(project / "second")
    assert "table/index.html" in first and "search/search_index.json" in first
    assert first == second
    # The stored table of contents still lists the headings, permalinks and all.
    assert 'href="#deep-heading"' in second["other/index.html"]


def test_an_edited_page_alone_is_converted_again(project: Path) -> None:
    assert _build(project, "first")[2] == len(PAGES)
    page = project / "docs" / "other.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA new line.\n", encoding="utf-8")
    code, output, converted = _build(project, "second")
    assert code == 0 and converted == 1, output
    assert "A new line." in (project / "second" / "other" / "index.html").read_text("utf-8")
    # A new page changes where links may point: every page is converted again.
    (project / "docs" / "new.md").write_text("# New\n", encoding="utf-8")
    assert _build(project, "third")[2] == len(PAGES) + 1


@pytest.mark.parametrize(
    ("link", "said"),
    [
        ("[gone](missing.md)", "'missing.md', but the target is not found"),
        ("[nowhere](table.md#no-such-part)", "does not contain an anchor '#no-such-part'"),
    ],
)
def test_a_broken_link_is_reported_by_every_build(project: Path, link: str, said: str) -> None:
    """A link to a missing page is said while converting (such a page is not stored); a link
    to a missing anchor is checked after every page is rendered, from the stored links too."""
    (project / "docs" / "other.md").write_text(f"# Other\n\n{link}\n", encoding="utf-8")
    for site in ("first", "second"):
        code, output, _ = _build(project, site)
        assert said in output, output
        assert code != 0, output  # strict: a warning fails the build
    # Only the broken page with a missing target was converted twice.
    assert _build(project, "third")[2] == (1 if "missing" in link else 0)


def test_a_changed_entry_is_not_used(project: Path) -> None:
    assert _build(project, "first")[2] == len(PAGES)
    entries = sorted((project.parent / "cache" / page_cache.PAGES).glob("*.json"))
    assert len(entries) == len(PAGES)
    for entry in entries:
        stored = json.loads(entry.read_text(encoding="utf-8"))
        stored["files"][0][1] = stored["files"][0][1].replace("<h1", "<h1 data-planted")
        entry.write_text(json.dumps(stored), encoding="utf-8")
    code, output, converted = _build(project, "second")
    assert code == 0 and converted == len(PAGES), output
    assert output.count("does not match its digest") == len(PAGES)
    assert _pages(project / "first") == _pages(project / "second")


def test_an_entry_that_does_not_read_as_written_is_converted_afresh(project: Path) -> None:
    """An entry whose digest matches but whose record of the page is not this module's
    (written by another version of it, say) is converted again, never a traceback."""
    assert _build(project, "first")[2] == len(PAGES)
    for entry in (project.parent / "cache" / page_cache.PAGES).glob("*.json"):
        stored = json.loads(entry.read_text(encoding="utf-8"))
        key = stored["sources"]
        files = [("content", stored["files"][0][1]), ("meta", '{"toc": 3}')]
        digest = finder_cache.content_digest(key, files)
        entry.write_text(json.dumps({**stored, "digest": digest, "files": files}), "utf-8")
    code, output, converted = _build(project, "second")
    assert code == 0 and converted == len(PAGES), output
    assert _pages(project / "first") == _pages(project / "second")


def test_the_cache_can_be_turned_off(project: Path) -> None:
    off = {page_cache.DISABLE_VARIABLE: "1"}
    assert _build(project, "first", **off)[2] == len(PAGES)
    assert _build(project, "second", **off)[2] == len(PAGES)
    assert not (project.parent / "cache" / page_cache.PAGES).exists()


def test_the_site_from_stored_pages_is_the_site_converted_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's own site, built from the page cache (a first build fills it) and with
    every page converted afresh, is the same, byte for byte."""
    for site in ("filling", "stored"):
        built = build_sample_site(tmp_path / site)
        assert built.returncode == 0, built.stdout + built.stderr
    monkeypatch.setenv(page_cache.DISABLE_VARIABLE, "1")
    fresh = build_sample_site(tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    built, converted = _pages(tmp_path / "stored"), _pages(tmp_path / "fresh")
    assert "releases/0.5.7/index.html" in built
    assert built == converted
