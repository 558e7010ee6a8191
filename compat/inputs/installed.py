"""The installed SGLang release, read from its distribution's metadata (never imported)."""

from __future__ import annotations

from functools import cache


@cache
def installed_sglang_version() -> str | None:
    """The installed `sglang` distribution's version, or None when there is none."""
    from importlib import metadata

    try:
        return metadata.version("sglang")
    except metadata.PackageNotFoundError:
        return None
