"""Incremental site builds: a page's Markdown is converted once until something it reads changes.

Converting the site's pages (the release pages' large tables above all) is most of a site
build once the finder's data is cached, and a page rarely changes between two builds: a
prose edit to one page rebuilt every other. A conversion is a function of what
`mkdocs.structure.pages.Page.render` reads: the page's Markdown (after every hook), where
the page and every other file of the site live (links are resolved and validated against
them), the Markdown extensions and their settings, the link validation settings, the log
level (which decides which messages are made at all) and the versions of the code
that converts. Their digest keys an entry holding what `render` leaves on the page: the
HTML, the table of contents, the title found in the content, the anchors the page holds and
the links it makes to other pages' anchors (MkDocs checks those after every page is
rendered, so a broken anchor is still reported from a stored page).

A conversion that logs anything (a broken link, say) is not stored: the next build converts
the page again and says it again, and `--strict` still fails. Entries live in the cache
directory of the finder's data (`compat.publish.finder_cache`), in `pages/`, under the same
checks: only the user's own files, each matching its digest, are read. Set
`COMPAT_NO_PAGE_CACHE` to convert every page on every build.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink, get_toc

from compat.inputs.installed import installed_version
from compat.publish.finder_cache import Untrusted, cache_dir, read_entry, write_entry

DISABLE_VARIABLE = "COMPAT_NO_PAGE_CACHE"
"""Set (to anything) to convert every page on every build."""
PAGES = "pages"
"""The folder of the cache directory that holds converted pages."""
PAGES_KEEP = 600
"""The converted pages kept, the most recently used: a few dozen states of every page of
the site (a release page takes about 90 KB)."""
FORMAT = 1
"""What an entry's `meta` holds (bumped when that changes, so that older entries miss)."""
_PARTS = ("content", "meta")
_CONVERTERS = ("mkdocs", "markdown", "pymdown-extensions", "pygments")
"""The distributions whose code converts a page: a new version converts afresh."""
Say = Callable[[str], None]


def convert_once(page: Page, say: Say | None = None) -> None:
    """Make `page.render` read a stored conversion when there is one, and store the
    conversion it makes otherwise. Called by the `on_page_markdown` hook, just before
    MkDocs renders the page; `say` gets one line when an entry is found but not trusted."""
    if os.environ.get(DISABLE_VARIABLE):
        return
    convert = page.render

    def render(config: MkDocsConfig, files: Files) -> None:
        try:
            root = cache_dir()
        except Untrusted:  # no place for a cache: the finder's build says so once
            convert(config, files)
            return
        key = conversion_key(page, config, files)
        try:
            stored = read_entry(root, key, _PARTS, kind=PAGES)
        except Untrusted as error:
            stored = None
            if say is not None:
                say(f"page cache not used for {page.file.src_uri}: {error}")
        if stored is not None and _restore(page, dict(stored), files):
            return
        with _logged() as records:
            convert(config, files)
        if not records:
            # Unwritable: the next build converts the page again, to the same site.
            with suppress(OSError, Untrusted):
                write_entry(root, key, _stored(page), kind=PAGES, keep=PAGES_KEEP)

    # An attribute of this page alone: MkDocs calls `page.render(config, files)` next.
    page.render = render  # type: ignore[method-assign]


def conversion_key(page: Page, config: MkDocsConfig, files: Files) -> str:
    """A digest of everything `Page.render` reads for `page` (this module's docstring)."""
    assert page.markdown is not None, "the page's Markdown is read before it is rendered"
    described = {
        "format": FORMAT,
        "python": sys.version,
        "converters": _converter_versions(),
        "page": [page.file.src_uri, page.file.url],
        "files": sorted((f.src_uri, f.url) for f in files),
        "extensions": [_named(e) for e in config.markdown_extensions],
        "extension settings": config.mdx_configs,
        "validation": config.validation,
        "use_directory_urls": config.use_directory_urls,
        # The level decides which messages are made at all (`-q` makes no warning), and
        # whether links to anchors are collected: each level keeps its own entries.
        "log level": logging.getLogger("mkdocs").getEffectiveLevel(),
    }
    digest = hashlib.sha256(json.dumps(described, sort_keys=True, default=repr).encode())
    digest.update(b"\0" + page.markdown.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@cache
def _converter_versions() -> tuple[str, ...]:
    return tuple(f"{name} {installed_version(name)}" for name in _CONVERTERS)


def _named(extension: object) -> str:
    if isinstance(extension, str):
        return extension
    return f"{type(extension).__module__}.{type(extension).__qualname__}"


def _stored(page: Page) -> list[tuple[str, str]]:
    meta = {
        "toc": [_token(item) for item in page.toc],
        "title": page._title_from_render,
        "anchors": list(page.present_anchor_ids or ()),  # a set: its order does not matter
        "links to anchors": (
            None
            if page.links_to_anchors is None
            else {to.src_uri: links for to, links in page.links_to_anchors.items()}
        ),
    }
    assert page.content is not None
    return [("content", page.content), ("meta", json.dumps(meta, ensure_ascii=False))]


def _token(item: AnchorLink) -> dict[str, Any]:
    """An entry of the table of contents as Python-Markdown's `toc` extension wrote it."""
    return {
        "level": item.level,
        "id": item.id,
        "name": item.title,
        "children": [_token(child) for child in item.children],
    }


def _restore(page: Page, stored: dict[str, str], files: Files) -> bool:
    """Leave on `page` what its conversion left; False, leaving the page as it was, when
    the entry does not read as this module writes it or names a page the site does not
    have (its key says it does): the page is then converted afresh."""
    try:
        meta = json.loads(stored["meta"])
        links = meta["links to anchors"]
        targets = {uri: files.get_file_from_path(uri) for uri in links or ()}
        toc, title, anchors = get_toc(meta["toc"]), meta["title"], set(meta["anchors"])
    except (KeyError, TypeError, ValueError):
        return False
    if any(target is None for target in targets.values()):
        return False
    if links is not None:
        page.links_to_anchors = {targets[uri]: found for uri, found in links.items()}  # type: ignore[misc]
    page.content = stored["content"]
    page.toc = toc
    page._title_from_render = title
    page.present_anchor_ids = anchors
    return True


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _logged() -> Iterator[list[logging.LogRecord]]:
    """What is logged meanwhile: MkDocs' loggers do not pass their records on to the root
    logger, the Markdown extensions' do."""
    handler = _Records()
    loggers = (logging.getLogger("mkdocs"), logging.getLogger())
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
