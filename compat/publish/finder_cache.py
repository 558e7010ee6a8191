"""A disk cache for the finder's data, so that repeated site builds compute it once.

The site build stores each part (a release and a model) under a key of what that part reads
(`compat.publish.finder_keys`, driven by `compat.publish.finder_build`); `cached` keys a
whole set of files by every Python source of the package and the Python version instead
(the tests' sample). Entries live under `$COMPAT_CACHE_DIR` (default
`$XDG_CACHE_HOME/attention-compat`, else `~/.cache/attention-compat`; the user's own link
to their own directory is followed), in `finder/`. With no place for it (no `HOME`, a user
id without a home directory) the build computes everything and says so in one line.

What a cache entry holds is published on the site, so an entry is used only when nobody
else could have written it and it is what its key promises:

- the cache directory and `finder/` are directories (not links, but for the user's own
  link to the cache directory) owned by the user, and neither is writable by the group or
  others; the entry is a regular file owned by the user, not writable by others (opened
  without blocking or following links: a FIFO or a directory is refused, never waited on);
- the entry names exactly the files the finder generates (relative paths inside the site:
  never a path outside it, never the finder's own script);
- the entry says which package sources it was computed from (the key), and a digest of the
  key and of every name and content matches what it holds.

Otherwise the build computes the data afresh and says why, in one line (`reason`). A
cache that cannot be read or written is skipped the same way. A write keeps only the most
recently used entries of its folder (`FINDER_KEEP` of the finder's): an edit to the package
would otherwise add an entry for good.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from compat.publish.outputs import PACKAGE_DIR

CACHE_VARIABLE = "COMPAT_CACHE_DIR"
DISABLE_VARIABLE = "COMPAT_NO_FINDER_CACHE"
"""Set (to anything) to compute the finder's data on every build."""
FORMAT = 2
"""The entry's layout: `{"format", "sources", "digest", "files": [[name, content], ...]}`."""

FINDER = "finder"
"""The folder of the cache directory that holds the finder's entries (the site's converted
pages have their own: `compat.publish.page_cache`)."""
FINDER_KEEP = 8
"""The finder's entries kept: one per state of the package's sources and set of releases
offered, the most recently used."""
PARTS = "parts"
"""The folder of the site build's entries, one per part (`compat.publish.finder_build`):
apart from `FINDER`'s, whose pruning keeps far fewer."""
PARTS_KEEP = 512
"""The parts kept, the most recently used: 187 make the whole site, so a few states of it."""
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json")

Files = list[tuple[str, str]]
Say = Callable[[str], None]


class Untrusted(Exception):
    """Why a cache entry is not used; the message is one line."""


class NoCacheDirectory(Untrusted):
    """There is no place for the cache: no `HOME`, and no home directory for the user id
    (an arbitrary-UID container); the build computes everything, with one line."""


def cache_dir() -> Path:
    """Where the cache lives; NoCacheDirectory when no place can be named."""
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError) as error:
            raise NoCacheDirectory(
                f"no cache directory: HOME is unset and user id {os.getuid()} has no home "
                f"directory ({error}); set {CACHE_VARIABLE}"
            ) from None
    return Path(base) / "attention-compat"


def usable_root(root: Path) -> Path:
    """`root`, or where it leads when it is the user's own symbolic link (a cache directory
    kept elsewhere on purpose): the target is then checked as the directory itself would be.
    A link that someone else made is not followed (`_trusted_directory` refuses it)."""
    try:
        info = os.lstat(root)
    except OSError:
        return root
    if stat.S_ISLNK(info.st_mode) and info.st_uid == os.getuid():
        return Path(os.path.realpath(root))
    return root


def source_digest(package: Path = PACKAGE_DIR) -> str:
    """A digest of the package's Python sources (paths and contents) and Python's version."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def entry_key(names: Collection[str], package: Path = PACKAGE_DIR) -> str:
    """The key of the entry holding `names`: the package's sources and which files (a build
    that offers fewer releases keeps its own entry)."""
    listed = "\0".join(sorted(names))
    return hashlib.sha256(f"{source_digest(package)}\0{listed}".encode()).hexdigest()


def content_digest(key: str, files: Files) -> str:
    """What an entry's `digest` must be: the key, then every name and content, in order."""
    digest = hashlib.sha256(f"{FORMAT}\0{key}\0".encode())
    for name, content in files:
        for text in (name, content):
            data = text.encode("utf-8", "surrogatepass")
            digest.update(f"{len(data)}\0".encode() + data)
    return digest.hexdigest()


def _trusted_directory(path: Path) -> None:
    """Raise Untrusted unless `path` is the user's own directory that only they can write."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise Untrusted(f"{path} is not a directory")
    _owned(path, info, "directory")


def _owned(path: Path, info: os.stat_result, what: str) -> None:
    if info.st_uid != os.getuid():
        raise Untrusted(f"the {what} {path} belongs to user id {info.st_uid}, not to you")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(info.st_mode)
        raise Untrusted(f"the {what} {path} is writable by others (mode {mode:o})")


def _entry_path(root: Path, key: str, kind: str) -> Path:
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise Untrusted(f"the key {key!r} is not a digest")
    return root / kind / f"{key}.json"


def read_entry(root: Path, key: str, names: Collection[str], kind: str = FINDER) -> Files | None:
    """The entry for `key` if it exists and passes every check; None if there is none;
    Untrusted (with the reason) if it exists and fails one. `kind` is the folder of
    `root` that holds such entries."""
    root = usable_root(root)
    path = _entry_path(root, key, kind)
    try:
        _trusted_directory(root)
        _trusted_directory(path.parent)
        handle = _open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Untrusted(f"cannot read {error.filename or path}: {error.strerror}") from None
    with os.fdopen(handle, "rb") as stream:
        _owned(path, os.fstat(stream.fileno()), "entry")
        try:
            entry = json.loads(stream.read().decode("utf-8"))
        except (OSError, ValueError) as error:
            raise Untrusted(f"{path} is not a readable entry ({type(error).__name__})") from None
        files = _checked(path, entry, key, names)
        # Used now: the last to be pruned (`write_entry` keeps the most recently used).
        with suppress(OSError, NotImplementedError):
            os.utime(stream.fileno())
    return files


def _open_regular(path: Path, flags: int, mode: int = 0o600) -> int:
    """A descriptor of `path` opened with `flags`, never blocking (a FIFO planted as an entry
    would wait for a writer forever) nor following a link; Untrusted unless it is a regular
    file (a directory or a device is refused before anything reads it)."""
    extra = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(path, flags | extra, mode)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise Untrusted(f"{path} is not a regular file")
    except BaseException:
        os.close(handle)
        raise
    return handle


def _checked(path: Path, entry: object, key: str, names: Collection[str]) -> Files:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise Untrusted(f"{path} is not an entry of format {FORMAT}")
    raw = entry.get("files")
    if not isinstance(raw, list) or not all(
        isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in raw
    ):
        raise Untrusted(f"{path} does not hold a list of [name, content] pairs")
    files = [(name, content) for name, content in raw]
    listed = [name for name, _ in files]
    strange = sorted(set(listed) - set(names))
    if strange:
        raise Untrusted(f"{path} names a file the entry may not hold: {strange[0]!r}")
    if sorted(listed) != sorted(names):
        raise Untrusted(f"{path} does not hold each of its files exactly once")
    if entry.get("sources") != key:
        raise Untrusted(f"{path} was computed from other package sources")
    if entry.get("digest") != content_digest(key, files):
        raise Untrusted(f"{path} does not match its digest (its files were changed)")
    return files


def write_entry(
    root: Path, key: str, files: Files, kind: str = FINDER, keep: int = FINDER_KEEP
) -> None:
    """Store `files` under `key`, creating the user's own directories (mode 0700) if need be,
    then delete all but the `keep` most recently used entries of `kind` (the cache would
    otherwise grow by an entry at every edit); raises OSError or Untrusted when the place
    cannot be trusted."""
    root = made_directories(root, kind)
    path = _entry_path(root, key, kind)
    entry = {"format": FORMAT, "sources": key, "digest": content_digest(key, files)}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump({**entry, "files": files}, stream, ensure_ascii=False)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _prune(path.parent, keep)


def made_directories(root: Path, kind: str) -> Path:
    """Create the cache directory and its `kind` folder (the user's own, mode 0700) where
    they are missing, check both, and return the cache directory (a link the user made
    resolved); OSError or Untrusted when the place cannot be trusted."""
    root = usable_root(root)
    for directory in (root, root / kind):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        _trusted_directory(directory)
    return root


def _prune(folder: Path, keep: int) -> None:
    """Delete all but the `keep` most recently used entries of `folder` (and their locks),
    as far as it can: another build may be reading or pruning them too."""
    used: list[tuple[float, Path]] = []
    for path in folder.iterdir():
        if _ENTRY_NAME.fullmatch(path.name):
            with suppress(OSError):
                used.append((path.lstat().st_mtime, path))
    for _, path in sorted(used, reverse=True)[keep:]:
        with suppress(OSError):
            path.unlink()
            (folder / f".{path.stem}.lock").unlink(missing_ok=True)


def cached(
    compute: Callable[[], Files],
    names: Collection[str],
    key: str | None = None,
    say: Say | None = None,
) -> Files:
    """`compute()`'s files (exactly `names`), from the cache when an entry for the package's
    current sources passes every check; `say` gets one line when the cache is not used."""
    if os.environ.get(DISABLE_VARIABLE):
        return compute()
    tell = say or (lambda line: None)
    try:
        root = cache_dir()
    except NoCacheDirectory as error:
        tell(f"finder cache not used: {error}")
        return compute()
    key = key or entry_key(names)
    with computing(root, f".{key}.lock"):
        return _cached(compute, names, root, key, tell)


@contextmanager
def computing(root: Path, lock: str, kind: str = FINDER) -> Iterator[None]:
    """Hold the lock `lock` of the `kind` folder while entries are read, computed and
    written, so that builds running side by side (the tests' workers, two builds) compute
    them once; without a usable lock each computes on its own. The directories are made
    first: two first builds would otherwise both find none, and neither would lock."""
    try:
        import fcntl

        folder = made_directories(root, kind) / kind
        handle = _open_regular(folder / lock, os.O_RDWR | os.O_CREAT)
    except (ImportError, OSError, Untrusted):
        yield
        return
    try:
        # Non-blocking descriptor, but flock itself waits: the other build is computing.
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def _cached(
    compute: Callable[[], Files], names: Collection[str], root: Path, key: str, tell: Say
) -> Files:
    try:
        found = read_entry(root, key, names)
    except Untrusted as error:
        tell(f"finder cache not used: {error}; computing the finder's data afresh")
        found, told = None, True
    else:
        told = False
    if found is not None:
        return found
    files = compute()
    try:
        # A bad entry in the user's own directory is replaced; an untrusted directory
        # refuses the write as it refused the read.
        write_entry(root, key, files)
    except (OSError, Untrusted) as error:
        if not told:
            tell(f"finder cache not written: {error}")
    return files
