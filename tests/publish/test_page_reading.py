"""The backend pages as a reader meets them (issue #22): the committed Markdown, converted by
Python-Markdown with the site's extensions, as MkDocs converts it.

Every page: the main one and one per release. The list of accepted values is a list, not
words run into the paragraph before it; each release page's title names its release; each
page links to the finder and leaves the site's navigation column alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
import yaml
from paths import ROOT

from compat.releases import NEWEST, RELEASE_NAMES

DOCS = ROOT / "docs"
MAIN = DOCS / "attention_backend.md"
RELEASE_PAGES = {name: DOCS / "releases" / f"{name}.md" for name in RELEASE_NAMES}
PAGES = [MAIN, *RELEASE_PAGES.values()]
EXTENSIONS = ["admonition", "attr_list", "pymdownx.details", "pymdownx.superfences", "tables"]
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def html(page: Path) -> str:
    text = _FRONT_MATTER.sub("", page.read_text(encoding="utf-8"))
    return markdown.markdown(text, extensions=EXTENSIONS)


def title(page: Path) -> str:
    """What MkDocs titles the page with: the front matter's title, else the first H1."""
    text = page.read_text(encoding="utf-8")
    matter = _FRONT_MATTER.match(text)
    meta = yaml.safe_load(matter.group(1)) if matter else {}
    if isinstance(meta, dict) and "title" in meta:
        return str(meta["title"])
    return next(line[2:] for line in text.splitlines() if line.startswith("# "))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_accept_list_is_a_list_not_run_into_its_paragraph(page: Path) -> None:
    rendered = html(page)
    assert "<li><code>--attention-backend</code> (and the phase flags) accept:" in rendered
    assert "<li><code>--kv-cache-dtype</code> accepts:" in rendered
    # The words a list item starts with never sit inside a paragraph.
    for paragraph in re.findall(r"<p>(.*?)</p>", rendered, re.DOTALL):
        assert "- <code>--attention-backend</code>" not in paragraph, paragraph[-200:]


def test_release_page_titles_say_the_release() -> None:
    titles = {name: title(page) for name, page in RELEASE_PAGES.items()}
    for name, text in titles.items():
        assert text == f"Attention backends in SGLang {name}", text
    every = [title(MAIN), *titles.values()]
    assert len(set(every)) == len(every), every  # search tells the pages apart
    assert title(MAIN) == "Attention backends"
    assert NEWEST in titles


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_backend_page_links_to_the_finder_and_shows_the_navigation(page: Path) -> None:
    rendered = html(page)
    links = re.findall(r'<a href="([^"]+)">compatibility finder</a>', rendered)
    assert links, "no link to the finder"
    assert all((page.parent / link).resolve() == DOCS / "finder.md" for link in links), links
    matter = _FRONT_MATTER.match(page.read_text(encoding="utf-8"))
    hidden = (yaml.safe_load(matter.group(1)) or {}).get("hide", []) if matter else []
    assert "navigation" not in hidden
