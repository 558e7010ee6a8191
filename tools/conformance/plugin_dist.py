"""Make this project's SGLang plugin visible to `importlib.metadata`, as `pip install` would.

`install(root, version)` writes two `.dist-info` directories under `root`: `sglang` at
`version` (what the plugin reads to pick its hook) and `attention-compat` with the entry
point of pyproject.toml. Put `root` first on `sys.path`, and SGLang's own `load_plugins()`
finds the plugin; named as the project is, it shadows an installed copy's metadata.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from compat.inputs.installed import installed_sglang_version
from compat.sglang_plugin import ENTRY_POINT

GROUP = "sglang.srt.plugins"
ENTRY = f"{ENTRY_POINT} = compat.sglang_plugin:register"


def install(root: Path, version: str) -> None:
    _dist_info(root, "sglang", version)
    _dist_info(root, "attention-compat", "0.1.0", f"[{GROUP}]\n{ENTRY}\n")
    importlib.invalidate_caches()
    installed_sglang_version.cache_clear()  # memoised per process: read the new one


def install_raw(root: Path, version: bytes) -> None:
    """`install`, with `version` written as is into sglang's METADATA (a NUL byte, bytes that
    are not UTF-8, nothing at all): the directory's name holds a placeholder version."""
    directory = root / "sglang-0.0.0.dist-info"
    directory.mkdir(parents=True)
    (directory / "METADATA").write_bytes(
        b"Metadata-Version: 2.1\nName: sglang\nVersion: " + version + b"\n"
    )
    _dist_info(root, "attention-compat", "0.1.0", f"[{GROUP}]\n{ENTRY}\n")
    importlib.invalidate_caches()
    installed_sglang_version.cache_clear()


def _dist_info(root: Path, name: str, version: str, entry_points: str = "") -> None:
    directory = root / f"{name.replace('-', '_')}-{version}.dist-info"
    directory.mkdir(parents=True)
    (directory / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    )
    if entry_points:
        (directory / "entry_points.txt").write_text(entry_points)
