"""Find and read a model's `config.json`: a file, or a directory holding one; never a FIFO,
a device or a loop of links (never opened, so never blocking), and never more than
`compat.inputs.bounded_json` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compat.inputs.bounded_json import BoundedJsonError, load_object

CONFIG_FILE = "config.json"


class ModelConfigError(ValueError):
    """The model config cannot be read: missing, not JSON, or a field of the wrong type."""


def config_file(path: Path) -> Path:
    try:
        return _existing_config_file(path)
    except OSError as error:  # e.g. a name too long for the file system
        raise ModelConfigError(f"{path}: {error.strerror or error}") from None


def _existing_config_file(path: Path) -> Path:
    if path.is_dir():
        candidate = path / CONFIG_FILE
        if candidate.is_file():
            return candidate
        if candidate.exists():  # a FIFO, a socket, a directory: never opened, so never blocks
            raise ModelConfigError(f"{candidate}: not a regular file")
        raise ModelConfigError(f"{path}: directory has no {CONFIG_FILE}")
    if not path.exists():
        if path.is_symlink():
            raise ModelConfigError(f"{path}: a symbolic link that loops or points nowhere")
        raise ModelConfigError(f"{path}: no such file or directory")
    if not path.is_file():
        raise ModelConfigError(f"{path}: not a regular file")
    return path


def read_object(file: Path) -> dict[str, Any]:
    try:
        return load_object(file)
    except BoundedJsonError as error:
        raise ModelConfigError(f"{file}: {error}") from None
