"""Every `<a href>` of a built site, checked: an internal link resolves to a built file (and
its anchor to an id there), an external one is a well-formed https URL, and no link's text
says that what it opens could not be read (issue 44: a link that reads "its tag could not
be read")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

PLACEHOLDERS = re.compile(r"example\.(com|org)|\bTODO\b|\bTBD\b|\bFIXME\b|XXX|<|>|\{|\}|\s")
"""What never belongs in an external link's URL."""
UNREADABLE = re.compile(r"could not be read|not reachable|unavailable|broken link", re.I)
"""Words a link's text must not say of its own target."""


@dataclass
class _Link:
    href: str
    text: str = ""


@dataclass
class _Page(HTMLParser):
    ids: set[str] = field(default_factory=set)
    links: list[_Link] = field(default_factory=list)
    _open: list[_Link] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if attributes.get(name):
                self.ids.add(str(attributes[name]))
        if tag == "a" and attributes.get("href") is not None:
            link = _Link(str(attributes["href"]))
            self.links.append(link)
            self._open.append(link)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for link in self._open:
            link.text += data


def _parsed(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """Each bad link of the site's HTML pages, as "page: href (why)"; empty when all are good."""
    pages = {path: _parsed(path) for path in sorted(site.rglob("*.html"))}
    bad = []
    for path, page in pages.items():
        where = path.relative_to(site)
        for link in page.links:
            why = _why(site, path, link, pages)
            if why:
                bad.append(f"{where}: {link.href} ({why})")
    return bad


def _why(site: Path, page: Path, link: _Link, pages: dict[Path, _Page]) -> str:
    if UNREADABLE.search(link.text):
        return f"its text says it cannot be read: {link.text.strip()!r}"
    url = urlsplit(link.href)
    if url.scheme or url.netloc:
        if url.scheme == "mailto":
            return "" if "@" in url.path else "no address"
        if url.scheme != "https" or not url.netloc or "." not in url.netloc:
            return "not a well-formed https URL"
        return "a placeholder" if PLACEHOLDERS.search(link.href) else ""
    # Internal: relative to the page, or to the site's root (the 404 page's links).
    base = site if url.path.startswith("/") else page.parent
    target = (base / unquote(url.path).lstrip("/")) if url.path else page
    if target.is_dir():
        target = target / "index.html"
    if not target.resolve().is_relative_to(site.resolve()):
        return "outside the site"
    if not target.is_file():
        return "no such file"
    if url.fragment and target.suffix == ".html":
        ids = pages[target].ids if target in pages else _parsed(target).ids
        if unquote(url.fragment) not in ids:
            return f"no anchor #{url.fragment}"
    return ""
