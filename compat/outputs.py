"""Generated files: write them atomically and only when changed, or show how they are stale."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path:
    """The checkout this package was installed from (editable install), else the cwd."""
    candidate = PACKAGE_DIR.parent
    if (candidate / "templates").is_dir() and (candidate / "pyproject.toml").is_file():
        return candidate
    return Path.cwd()


@dataclass(frozen=True)
class Staleness:
    path: Path
    diff: str
    """A unified diff from the file on disk to the fresh content; empty when fresh."""

    @property
    def fresh(self) -> bool:
        return not self.diff


def write_if_changed(path: Path, content: str) -> bool:
    """Write `content` to `path` through a temporary file and a rename; False when unchanged."""
    if path.is_file() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(content)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return True


def staleness(path: Path, content: str, label: str | None = None) -> Staleness:
    """Compare the committed file with a fresh render, without writing anything."""
    name = label or str(path)
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    if current == content:
        return Staleness(path, "")
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        content.splitlines(keepends=True),
        fromfile=f"{name} (committed)",
        tofile=f"{name} (fresh render)",
    )
    text = "".join(diff)
    if not path.is_file():
        text = f"{name} does not exist\n" + text
    return Staleness(path, text or f"{name} differs only in line endings\n")
