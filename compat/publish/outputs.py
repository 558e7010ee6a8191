"""Generated files: write them atomically and only when changed, or show how they are stale.

Files are compared as bytes, so a hand edit that breaks UTF-8 or changes line endings is
stale too, and a write always repairs it. Every failure of the file system is an
`OutputError` whose message is one line: what, where, and what to do.
"""

from __future__ import annotations

import difflib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]

# A generated file larger than this is not read for a diff: it is stale, and said to be.
MAX_DIFF_BYTES = 16 * 1024 * 1024
# The part of a file name kept in its temporary sibling's name (file names stop at 255 bytes).
_TEMP_NAME_CHARS = 80


class OutputError(Exception):
    """A generated file cannot be read or written; the message is one line."""


def project_root() -> Path:
    """The checkout this package was installed from (editable install), else the cwd."""
    candidate = PACKAGE_DIR.parent
    if (candidate / "templates").is_dir() and (candidate / "pyproject.toml").is_file():
        return candidate
    return Path.cwd()


def is_directory(path: Path) -> bool:
    """Whether `path` is a directory a command can use (a name too long, ...: it is not)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def package_templates() -> Path:
    """The templates this package renders the page with: in the wheel, or in its checkout.

    Never the current directory's: a template is code, and a read-only command such as
    `compat docs --check` must not run code from whatever tree it is pointed at.
    """
    shipped = PACKAGE_DIR / "templates"
    if shipped.is_dir():
        return shipped
    return PACKAGE_DIR.parent / "templates"


@dataclass(frozen=True)
class Staleness:
    path: Path
    diff: str
    """A unified diff from the file on disk to the fresh content; empty when fresh."""

    @property
    def fresh(self) -> bool:
        return not self.diff


# -- errors --------------------------------------------------------------------------------

_HINTS = {
    errno.EACCES: "check the permissions of the file and its directory",
    errno.EPERM: "check the permissions of the file and its directory",
    errno.EROFS: "the file system is read-only; write somewhere else",
    errno.ENOSPC: "free some disk space and run it again",
    errno.EDQUOT: "free some disk space and run it again",
    errno.ENAMETOOLONG: "use a shorter name",
    errno.ENOTDIR: "a file is in the way of a directory; move it",
    errno.EEXIST: "a file is in the way of a directory; move it",
    errno.EISDIR: "a directory is in the way; move it",
    errno.ELOOP: "a symbolic link loops; fix or remove it",
    errno.EFBIG: "the file size limit (ulimit -f) is too small; raise it",
}


def _failure(doing: str, path: Path, error: OSError) -> OutputError:
    reason = error.strerror or type(error).__name__
    hint = _HINTS.get(error.errno or 0, "")
    return OutputError(f"cannot {doing} {path}: {reason}" + (f" ({hint})" if hint else ""))


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolve(path: Path) -> Path:
    """`path.resolve()`, with a symlink loop as the OSError it is (pathlib raises RuntimeError)."""
    try:
        return path.resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None


# -- writing ---------------------------------------------------------------------------------


def write_if_changed(
    path: Path, content: str, *, root: Path | None = None, follow_symlinks: bool = False
) -> bool:
    """Write `content` to `path` through a temporary file and a rename; False when unchanged.

    With `root`, nothing is written outside it (a `docs` symlink out of the tree is
    refused). A symlink at `path` is followed when it points into the directory holding it
    (or into `root`), or anywhere with `follow_symlinks`. Anything that exists and is not a
    regular file (a directory, a FIFO, a device) is refused, never replaced.
    """
    return bool(write_all_if_changed([(path, content)], root=root, follow_symlinks=follow_symlinks))


def write_all_if_changed(
    files: Sequence[tuple[Path, str]], *, root: Path | None = None, follow_symlinks: bool = False
) -> list[Path]:
    """Write every changed file, or none: the paths written.

    Each changed file's content is first written in full to a temporary sibling; only when
    all of them are written (the disk did not fill up) are they renamed over their files.
    A failure removes every temporary file and leaves every file as it was. Temporary
    files that a killed writer left beside a file are removed, changed or not.
    """
    staged: list[tuple[Path, Path, Path]] = []  # (path, target, temporary)
    try:
        for path, content in files:
            data = content.encode("utf-8")
            try:
                target = _target(path, root, follow_symlinks)
                _remove_abandoned_temporaries(target)
                current = _regular_file_size(target)
                if current == len(data) and _read(target, len(data) + 1) == data:
                    continue
                if current is None:
                    _make_parent(target, root)
                staged.append((path, target, _stage(target, data)))
            except OSError as error:
                raise _failure("write", path, error) from None
        for path, target, temp in staged:
            try:
                os.replace(temp, target)
            except OSError as error:
                raise _failure("write", path, error) from None
    except BaseException:
        for _, _, temp in staged:
            temp.unlink(missing_ok=True)
        raise
    return [path for path, _, _ in staged]


def _target(path: Path, root: Path | None, follow_symlinks: bool) -> Path:
    """The file to write: `path`, or the file its symlink points to when that is allowed."""
    if root is not None and not _within(_resolve(path.absolute().parent), _resolve(root)):
        raise OutputError(
            f"refusing to write {path}: its directory resolves outside {root} "
            "(a symbolic link leads out of the tree); replace the link with a directory"
        )
    if not path.is_symlink():
        return path
    real = _resolve(path)
    trees = [_resolve(path.absolute().parent)]
    if root is not None:
        trees.append(_resolve(root))
    if not follow_symlinks and not any(_within(real, tree) for tree in trees):
        raise OutputError(
            f"refusing to write {path}: it is a symbolic link to {real}, outside "
            f"{trees[-1]}; pass --follow-symlinks to write there"
        )
    return real


def _regular_file_size(path: Path) -> int | None:
    """The size of the regular file at `path`; None when there is none. Refuses other kinds."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        raise OutputError(
            f"refusing to write {path}: it exists and is {_kind(status.st_mode)}, not a "
            "regular file; remove it or choose another path"
        )
    return status.st_size


def _make_parent(target: Path, root: Path | None) -> None:
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        # mkdir says "exists" for a file (or a dangling link) where the directory belongs.
        raise OutputError(
            f"cannot write {target}: {parent} exists and is not a directory; move it"
        ) from None
    if root is not None and not _within(_resolve(parent), _resolve(root)):
        raise OutputError(f"refusing to write {target}: {parent} resolves outside {root}")


def _stage(target: Path, data: bytes) -> Path:
    """Write `data` to a new temporary sibling of `target`, with the mode `target` would get;
    never leave it behind on a failure."""
    prefix = f".{target.name[:_TEMP_NAME_CHARS]}."
    temp = target.with_name(f"{prefix}{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # 0o666 through open(): the umask applies, exactly as for a file written normally.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            existing = target.stat().st_mode
        except FileNotFoundError:
            existing = None
        if existing is not None:  # a rewrite keeps the file's mode, as an in-place write does
            os.fchmod(fd, stat.S_IMODE(existing))
        with os.fdopen(fd, "wb") as handle:
            fd = -1
            handle.write(data)
    except BaseException:
        if fd != -1:
            os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    return temp


def _remove_abandoned_temporaries(target: Path) -> None:
    """Delete temporary siblings left by a writer that was killed (its process is gone)."""
    if os.name != "posix":
        return
    prefix = f".{target.name[:_TEMP_NAME_CHARS]}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        parts = name[len(prefix) :].split(".")
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        if not _process_alive(int(parts[0])):
            (target.parent / name).unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # a sibling thread's; this process removes its own on failure
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


# -- reading ---------------------------------------------------------------------------------


def _read(path: Path, limit: int) -> bytes:
    # O_NONBLOCK: a FIFO swapped in after the type check must not hang the read.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)


def staleness(path: Path, content: str, label: str | None = None) -> Staleness:
    """Compare the committed file with a fresh render, byte for byte, without writing."""
    name = label or str(path)
    expected = content.encode("utf-8")
    try:
        status = path.stat()
    except FileNotFoundError:
        return Staleness(path, f"{name} does not exist\n" + _diff(name, "", content))
    except OSError as error:
        raise _failure("read", path, error) from None
    if not stat.S_ISREG(status.st_mode):
        raise OutputError(
            f"cannot read {path}: it is {_kind(status.st_mode)}, not a regular file; "
            "remove it and regenerate it"
        )
    if status.st_size > MAX_DIFF_BYTES:
        return Staleness(
            path,
            f"{name} is {status.st_size} bytes, a fresh render is {len(expected)}: "
            "too large to show a diff\n",
        )
    try:
        current = _read(path, MAX_DIFF_BYTES + 1)
    except OSError as error:
        raise _failure("read", path, error) from None
    if current == expected:
        return Staleness(path, "")
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError as error:
        line = current.count(b"\n", 0, error.start) + 1
        return Staleness(
            path,
            f"{name} is not valid UTF-8 (byte 0x{current[error.start]:02x} on line {line})\n"
            + _diff(name, current.decode("utf-8", errors="replace"), content),
        )
    if _newlines(text) == content:
        endings = "CRLF" if "\r\n" in text else "CR"
        return Staleness(path, f"{name} differs only in line endings ({endings} instead of LF)\n")
    return Staleness(path, _diff(name, text, content) or f"{name} differs in its bytes\n")


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _diff(name: str, current: str, content: str) -> str:
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            content.splitlines(keepends=True),
            fromfile=f"{name} (committed)",
            tofile=f"{name} (fresh render)",
        )
    )
