"""A site build's record that the committed pages and export were found fresh.

Every build compares each generated page and the export with a fresh render of the matrix
(`mkdocs_hooks.on_pre_build`), which renders every release's page: a third of a build whose
pages come from the page cache. A build that found them fresh leaves a record keyed by a
digest of everything the comparison read: the package's sources and Python's version
(`finder_cache.source_digest`), the templates, Jinja's version, and every file of the docs
folder (a prose edit too: a record is only ever for the exact bytes compared). A later
build with the same digest skips the render. Records live in the cache directory of the
finder's data, in `verified/`, under the same checks: only the user's own files are read.
`COMPAT_NO_PAGE_CACHE` turns them off with the page cache.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from pathlib import Path

from compat.inputs.installed import installed_version
from compat.publish.finder_cache import (
    Untrusted,
    cache_dir,
    read_entry,
    source_digest,
    write_entry,
)
from compat.publish.outputs import package_templates
from compat.publish.page_cache import DISABLE_VARIABLE

VERIFIED = "verified"
"""The folder of the cache directory that holds the records."""
FORMAT = 1
KEEP = 64
"""The records kept, the most recently used (each a few hundred bytes)."""


def record_key(docs_dir: Path) -> str | None:
    """The key of the record for the comparison this build is about to make (None when
    records are turned off)."""
    if os.environ.get(DISABLE_VARIABLE):
        return None
    return comparison_key(docs_dir)


def found_fresh(key: str) -> bool:
    """Whether a build found fresh what `key` digests."""
    try:
        return read_entry(cache_dir(), key, (), kind=VERIFIED) is not None
    except Untrusted:
        return False  # compared afresh, which is what a record only ever saves


def remember(key: str) -> None:
    """Record that this build found fresh what `key` digests."""
    with suppress(OSError, Untrusted):  # unwritable: the next build compares again
        write_entry(cache_dir(), key, [], kind=VERIFIED, keep=KEEP)


def comparison_key(docs_dir: Path) -> str:
    """A digest of everything the comparison reads (this module's docstring)."""
    digest = hashlib.sha256(f"{FORMAT}\0{source_digest()}\0".encode())
    digest.update(f"jinja2 {installed_version('jinja2')}\0".encode())
    for label, folder in (("templates", package_templates()), ("docs", docs_dir)):
        digest.update(f"{label}\0".encode())
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            name = path.relative_to(folder).as_posix().encode("utf-8", "surrogateescape")
            digest.update(name + b"\0" + f"{len(data)}\0".encode() + data)
    return digest.hexdigest()
