"""Installed distributions' versions, read from their metadata (never imported): SGLang's,
this package's own, and those of the code that builds its site."""

from __future__ import annotations

from functools import cache


class UnreadableMetadataError(ValueError):
    """An installed distribution's metadata cannot be read; the message names the file."""


def installed_version(distribution: str) -> str | None:
    """The installed `distribution`'s version, or None when there is none.

    Raises UnreadableMetadataError when its metadata is not UTF-8 or cannot be read."""
    # Imported here: a command that names its release never pays for importlib.metadata.
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
    except (UnicodeDecodeError, OSError) as error:
        raise UnreadableMetadataError(
            f"cannot read the metadata of the installed {distribution} "
            f"({_metadata_file(distribution)}): {_reason(error)}"
        ) from None


def _metadata_file(distribution: str) -> str:
    from importlib import metadata

    try:
        found = metadata.distribution(distribution)
    except Exception:  # only named in a message: the failure being reported matters
        return "its METADATA"
    # `_path`: the .dist-info directory of a distribution found on sys.path (no public name).
    where = getattr(found, "_path", None)
    return f"{where}/METADATA" if where is not None else "its METADATA"


def _reason(error: UnicodeDecodeError | OSError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    return error.strerror or type(error).__name__


@cache
def installed_sglang_version() -> str | None:
    """The installed `sglang` distribution's version, or None when there is none."""
    return installed_version("sglang")
