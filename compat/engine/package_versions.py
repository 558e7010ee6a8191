"""Kernel packages' versions as SGLang's start-up compares them (`packaging.version`).

The package does not depend on `packaging`: a version is checked against PEP 440's own
pattern (its appendix), and compared as `Version(Version(v).base_version) >= Version(m)`
compares it: the epoch, then the release numbers padded with zeros; pre-, post-, dev-
and local parts dropped.
"""

from __future__ import annotations

import re

_PEP440 = re.compile(
    r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?
    (?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?
    (?:[-_.]?dev[-_.]?[0-9]*)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)


def is_version(text: str) -> bool:
    """Whether `text` is a PEP 440 version (as `packaging.version.Version` accepts it)."""
    return _PEP440.match(text) is not None


def at_least(text: str, minimum: tuple[int, ...]) -> bool:
    """`Version(Version(text).base_version) >= Version(minimum)`; False for a version
    `packaging` could not read (SGLang's `except Exception: return False`)."""
    match = _PEP440.match(text)
    if match is None:
        return False
    if int(match["epoch"] or 0) > 0:
        return True
    release = tuple(int(part) for part in match["release"].split("."))
    width = max(len(release), len(minimum))
    pad = (0,) * width
    return (release + pad)[:width] >= (minimum + pad)[:width]
