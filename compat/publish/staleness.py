"""Whether a committed generated file is fresh: compared byte for byte with a fresh render,
without writing; when it is not, a diff that says how (UTF-8 broken, line endings, a size
too large to show)."""

from __future__ import annotations

import difflib
import stat
from dataclasses import dataclass
from pathlib import Path

from compat.publish.outputs import OutputError, failure, kind_of, read_head

# A generated file larger than this is not read for a diff: it is stale, and said to be.
MAX_DIFF_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Staleness:
    path: Path
    diff: str
    """A unified diff from the file on disk to the fresh content; empty when fresh."""

    @property
    def fresh(self) -> bool:
        return not self.diff


def staleness(path: Path, content: str, label: str | None = None) -> Staleness:
    """Compare the committed file with a fresh render, byte for byte, without writing."""
    name = label or str(path)
    expected = content.encode("utf-8")
    try:
        status = path.stat()
    except FileNotFoundError:
        return Staleness(path, f"{name} does not exist\n" + _diff(name, "", content))
    except OSError as error:
        raise failure("read", path, error) from None
    if not stat.S_ISREG(status.st_mode):
        raise OutputError(
            f"cannot read {path}: it is {kind_of(status.st_mode)}, not a regular file; "
            "remove it and regenerate it"
        )
    if status.st_size > MAX_DIFF_BYTES:
        return Staleness(
            path,
            f"{name} is {status.st_size} bytes, a fresh render is {len(expected)}: "
            "too large to show a diff\n",
        )
    try:
        current = read_head(path, MAX_DIFF_BYTES + 1)
    except OSError as error:
        raise failure("read", path, error) from None
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
