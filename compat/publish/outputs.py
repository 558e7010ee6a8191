"""Generated files: write them atomically, only when changed, and only where it is safe.

Files are compared as bytes (`compat.publish.staleness` says how a file is stale), so a hand
edit that breaks UTF-8 or changes line endings is stale too, and a write repairs it. Every
generated file carries a marker (the page's "Generated file" comment, the export's
`generated_by`); an existing file without its marker was not written by this tool and is
never replaced. Under a project root nothing is written through a symbolic link: a branch
can carry a link such as `docs/changes.md -> ../README.md`. Every failure of the file system
is an `OutputError` whose message is one line: what, where, and what to do.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]

# The part of a file name kept in its temporary sibling's name (file names stop at 255 bytes).
_TEMP_NAME_CHARS = 80
# How much of an existing file is searched for its marker: every marker is in its first lines.
MARKER_WINDOW_BYTES = 64 * 1024


class OutputError(Exception):
    """A generated file cannot be read or written; the message is one line."""


def project_root() -> Path:
    """The checkout this package was installed from (an editable install).

    An installed wheel has no checkout: OutputError, naming `--root`. Never the current
    directory: `compat docs` run from anywhere would write its pages into that `docs/`.
    """
    candidate = PACKAGE_DIR.parent
    if (candidate / "templates").is_dir() and (candidate / "pyproject.toml").is_file():
        return candidate
    raise OutputError(
        f"this compat is installed in {PACKAGE_DIR.parent}, not run from a checkout of "
        "attention-compat: pass --root PATH, the project whose docs/ holds the generated files"
    )


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
class Generated:
    """A file this tool writes: where, its fresh content, and the marker that content holds."""

    path: Path
    content: str
    marker: str
    """Text every version of the file holds (in its first `MARKER_WINDOW_BYTES`): an existing
    file without it was not written by this tool, and is not replaced."""


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


def failure(doing: str, path: Path, error: OSError) -> OutputError:
    """`error` as one line: what could not be done, where, why, and what to do."""
    reason = error.strerror or type(error).__name__
    hint = _HINTS.get(error.errno or 0, "")
    return OutputError(f"cannot {doing} {path}: {reason}" + (f" ({hint})" if hint else ""))


def kind_of(mode: int) -> str:
    """What a file of `mode` is, in words (\"a FIFO\")."""
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


def write_if_changed(file: Generated, *, follow_symlinks: bool = False) -> bool:
    """Write `file` through a temporary file and a rename; False when it is unchanged.

    A symlink at its path is followed when it points into the directory holding it, or
    anywhere with `follow_symlinks`. Anything that exists and is not a regular file (a
    directory, a FIFO, a device) is refused, and so is a file without the marker.
    """
    return bool(write_all_if_changed([file], follow_symlinks=follow_symlinks))


def write_all_if_changed(
    files: Sequence[Generated], *, root: Path | None = None, follow_symlinks: bool = False
) -> list[Path]:
    """Write every changed file, or none: the paths written.

    With `root` (each path is under it), no file is written through a symbolic link, of
    the file or of a directory between `root` and it, unless the link leads to the file's
    own path. Every file is checked (its links, its kind, its marker) before anything is
    written; then each changed file's content is written in full to a temporary sibling,
    and only when all of them are written (the disk did not fill up) are they renamed over
    their files. A failure removes every temporary file and leaves every file as it was.
    Temporary files that a killed writer left beside a file are removed, changed or not.
    """
    planned: list[tuple[Generated, Path, bytes | None]] = []  # (file, target, data to write)
    for file in files:
        try:
            planned.append(_plan(file, root, follow_symlinks))
        except OSError as error:
            raise failure("write", file.path, error) from None
    staged: list[tuple[Path, Path, Path]] = []  # (path, target, temporary)
    try:
        for file, target, data in planned:
            try:
                _remove_abandoned_temporaries(target)
                if data is None:
                    continue
                if not target.exists():
                    _make_parent(target, root)
                staged.append((file.path, target, _stage(target, data)))
            except OSError as error:
                raise failure("write", file.path, error) from None
        for path, target, temp in staged:
            try:
                os.replace(temp, target)
            except OSError as error:
                raise failure("write", path, error) from None
    except BaseException:
        for _, _, temp in staged:
            temp.unlink(missing_ok=True)
        raise
    return [path for path, _, _ in staged]


def _plan(
    file: Generated, root: Path | None, follow_symlinks: bool
) -> tuple[Generated, Path, bytes | None]:
    """The file to write and its bytes (None: it is fresh), after every check; writes nothing."""
    data = file.content.encode("utf-8")
    if file.marker.encode("utf-8") not in data[:MARKER_WINDOW_BYTES]:
        # Whatever this tool writes must be replaceable by its next run.
        raise OutputError(
            f"refusing to write {file.path}: its fresh content lacks the marker "
            f"{file.marker!r}; keep that text in the template"
        )
    target = (
        _target_in(file.path, root) if root is not None else _target(file.path, follow_symlinks)
    )
    current = _regular_file_size(target)
    if current is None:
        return file, target, data
    if current == len(data) and read_head(target, len(data) + 1) == data:
        return file, target, None
    if file.marker.encode("utf-8") not in read_head(target, MARKER_WINDOW_BYTES):
        raise OutputError(
            f"refusing to replace {file.path}: it was not written by compat (it lacks "
            f"{file.marker!r}); move it away, or choose another path"
        )
    return file, target, data


def _target(path: Path, follow_symlinks: bool) -> Path:
    """The file to write: `path`, or the file its symlink points to when that is allowed."""
    if not path.is_symlink():
        return path
    real = _resolve(path)
    tree = _resolve(path.absolute().parent)
    if not follow_symlinks and not _within(real, tree):
        raise OutputError(
            f"refusing to write {path}: it is a symbolic link to {real}, outside "
            f"{tree}; pass --follow-symlinks to write there"
        )
    return real


def _target_in(path: Path, root: Path) -> Path:
    """`path` under `root`, refused when it or a directory between `root` and it is a
    symbolic link (`root` itself may be one), unless the link leads to `path`'s own place."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        raise OutputError(f"refusing to write {path}: it is not under {root}") from None
    step = root
    for part in relative.parts[:-1]:
        step = step / part
        if step.is_symlink():
            raise OutputError(
                f"refusing to write {path}: {step} is a symbolic link to {_resolve(step)}; "
                "generated files are never written through a link: replace it with a directory"
            )
    if not path.is_symlink():
        return path
    real = _resolve(path)
    if real == _resolve(root) / relative:
        return real
    raise OutputError(
        f"refusing to write {path}: it is a symbolic link to {real}; generated files are "
        "never written through a link: remove the link and run it again"
    )


def _regular_file_size(path: Path) -> int | None:
    """The size of the regular file at `path`; None when there is none. Refuses other kinds."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        raise OutputError(
            f"refusing to write {path}: it exists and is {kind_of(status.st_mode)}, not a "
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


def read_head(path: Path, limit: int) -> bytes:
    """Up to `limit` bytes from the start of the file at `path`, never blocking on a FIFO."""
    # O_NONBLOCK: a FIFO swapped in after the type check must not hang the read.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)
