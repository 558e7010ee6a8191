"""Find a model's `config.json` from SGLang's `--model-path`, without the network.

`--model-path` is a local directory or a Hugging Face repository id. An id is looked up in
the local Hugging Face cache only (`HF_HUB_CACHE`, else `HF_HOME/hub`, else
`~/.cache/huggingface/hub`), in its snapshot layout:
`models--ORG--NAME/snapshots/REVISION/config.json`, the revision that `refs/main` names
first, else the most recently written snapshot. `refs/main` is read as a revision only: a
40-hex commit id or the name of a snapshot folder, never a path (`../..`, `/etc`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from compat.inputs.bounded_json import BoundedJsonError, read_bounded
from compat.inputs.config_file import CONFIG_FILE

_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Located:
    """Where a model path's config was found, or why it was not."""

    config: Path | None
    searched: str
    """What was looked at, for the output: a directory, or the cache folder of an id."""


def hub_cache() -> Path:
    explicit = os.environ.get("HF_HUB_CACHE")
    if explicit:
        return _user_path(explicit)
    home = os.environ.get("HF_HOME")
    return _user_path(home or "~/.cache/huggingface") / "hub"


def _user_path(text: str) -> Path:
    """`text` with a leading `~` or `~user` expanded, or as written where no home is known
    (`~0`, an unknown user; no HOME and no password entry): then it names no directory."""
    try:
        return Path(text).expanduser()
    except RuntimeError:  # "Could not determine home directory."
        return Path(text)


def locate_model_config(model_path: str) -> Located:
    """The config.json `model_path` names locally, or None with what was searched."""
    path = _user_path(model_path)
    try:
        if path.is_dir():
            candidate = path / CONFIG_FILE
            # One that is not a regular file (a FIFO) is returned, for the reader to refuse.
            return Located(candidate if candidate.exists() else None, str(path))
        if path.is_file():
            return Located(path, str(path))
    except OSError:  # a name the file system cannot hold: not a local path
        pass
    if not _REPO_ID.fullmatch(model_path):
        return Located(None, str(path))
    org, name = model_path.split("/")
    repo = hub_cache() / f"models--{org}--{name}"
    return Located(_snapshot_config(repo), str(repo))


def _snapshot_config(repo: Path) -> Path | None:
    snapshots = repo / "snapshots"
    try:  # bounded, and never blocking on a FIFO
        main = read_bounded(repo / "refs" / "main", 4096, "refs/main").decode("utf-8").strip()
    except (OSError, BoundedJsonError, UnicodeDecodeError):
        main = ""
    try:
        names = os.listdir(snapshots)  # a name here never holds a slash, nor is . or ..
        named = _COMMIT.fullmatch(main) is not None or main in names
        if named and (snapshots / main / CONFIG_FILE).is_file():
            return snapshots / main / CONFIG_FILE
        found = [snapshots / name / CONFIG_FILE for name in names]
        found = [file for file in found if file.is_file()]
    except OSError:
        return None
    return max(found, key=lambda file: file.stat().st_mtime, default=None)
