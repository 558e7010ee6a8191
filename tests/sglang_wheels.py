"""Fetch a released SGLang wheel (without its dependencies) into a cache, once.

The cache is `COMPAT_SGLANG_WHEELS`, else `~/.cache/attention-compat/sglang-wheels`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def wheel_cache() -> Path:
    explicit = os.environ.get("COMPAT_SGLANG_WHEELS")
    if explicit:
        return Path(explicit).expanduser()
    return Path.home() / ".cache" / "attention-compat" / "sglang-wheels"


def sglang_wheel(release: str) -> Path:
    """The wheel of `release`, downloaded with `pip download --no-deps` when not cached."""
    cache = wheel_cache()
    found = sorted(cache.glob(f"sglang-{release}-*.whl"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", f"sglang=={release}", "-d", cache],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found = sorted(cache.glob(f"sglang-{release}-*.whl"))
    if result.returncode != 0 or not found:
        raise RuntimeError(f"cannot download sglang=={release}: {result.stderr[-2000:]}")
    return found[0]
