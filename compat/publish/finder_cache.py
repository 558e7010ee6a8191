"""A disk cache for the finder's data, so that repeated site builds compute it once.

The data is a pure function of the package's code (matrix, releases, guard), so the cache
key is a digest of every Python source of the package and of the Python version: any edit
to the package computes afresh. Entries live under `$COMPAT_CACHE_DIR` (default
`$XDG_CACHE_HOME/attention-compat`, else `~/.cache/attention-compat`), in `finder/`. A cache
that cannot be read or written is skipped: the build then computes the data, as without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from compat.publish.outputs import PACKAGE_DIR

CACHE_VARIABLE = "COMPAT_CACHE_DIR"
DISABLE_VARIABLE = "COMPAT_NO_FINDER_CACHE"
"""Set (to anything) to compute the finder's data on every build."""

Files = list[tuple[str, str]]


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-compat"


def source_digest(package: Path = PACKAGE_DIR) -> str:
    """A digest of the package's Python sources (paths and contents) and Python's version."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(path: Path) -> Files | None:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entries, list) or not all(
        isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in entries
    ):
        return None
    return [(name, content) for name, content in entries]


def _write(path: Path, files: Files) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(files, stream, ensure_ascii=False)
        os.replace(temporary, path)
    except OSError:
        return


def cached(compute: Callable[[], Files], key: str | None = None) -> Files:
    """`compute()`'s files, from the cache when the package is unchanged since they were made."""
    if os.environ.get(DISABLE_VARIABLE):
        return compute()
    path = cache_dir() / "finder" / f"{key or source_digest()}.json"
    found = _read(path)
    if found is not None:
        return found
    files = compute()
    _write(path, files)
    return files
