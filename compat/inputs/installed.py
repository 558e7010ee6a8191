"""Installed distributions' versions, read from their metadata (never imported): SGLang's,
this package's own, and those of the code that builds its site."""

from __future__ import annotations

from functools import cache


def installed_version(distribution: str) -> str | None:
    """The installed `distribution`'s version, or None when there is none."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@cache
def installed_sglang_version() -> str | None:
    """The installed `sglang` distribution's version, or None when there is none."""
    return installed_version("sglang")
