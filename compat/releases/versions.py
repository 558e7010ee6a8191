"""Release names as PEP 440 versions: parsed, ordered, and matched to the releases modelled.

An installed SGLang is not always spelled X.Y.Z: 0.6, 1.0, 0.5.23.1, 0.5.23.post1,
0.5.23+local, 0.5.24rc1, 1!0.1. This reads them all as PEP 440 does (`packaging` is not a
dependency of this package, so this is the part of it that is needed). A version whose
release segment is a modelled release's (trailing zeros aside) is that release, whatever its
pre, post, dev or local part: 0.5.23.post1 and 0.5.23+cu128 run 0.5.23's code.
"""

from __future__ import annotations

import re
from functools import cache

import msgspec

# PEP 440, appendix B, as `packaging.version` spells it; compiled when a version is first
# read (the plugin's start-up path imports this module, and most launches never read one).
_PEP440 = (
    r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """
)


@cache
def _pep440() -> re.Pattern[str]:
    return re.compile(_PEP440, re.VERBOSE | re.IGNORECASE)
# Longer than any real version; it also keeps int() below Python's digit limit (4300).
MAX_VERSION_CHARS = 256
# Pre-release letters in PEP 440 order, each spelling with its normal form's rank.
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

SortKey = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, int], tuple[int, int]]


class Version(msgspec.Struct, frozen=True):
    """A PEP 440 version: `release` without trailing zeros (0.5.23.0 is 0.5.23)."""

    epoch: int
    release: tuple[int, ...]
    pre: tuple[int, int] | None
    """(rank of a, b or rc; its number)."""
    post: int | None
    dev: int | None
    local: str | None

    @property
    def public(self) -> tuple[int, tuple[int, ...]]:
        """The release this version is a pre, post, dev or local version of."""
        return self.epoch, self.release

    @property
    def key(self) -> SortKey:
        """PEP 440 order (a local label sorts as its public version: it is that release)."""
        if self.pre is not None:
            pre: tuple[int, ...] = (1, *self.pre)
        elif self.post is None and self.dev is not None:
            pre = (0,)  # 1.0.dev0 comes before 1.0a0
        else:
            pre = (2,)
        post = (0, 0) if self.post is None else (1, self.post)
        dev = (1, 0) if self.dev is None else (0, self.dev)
        return self.epoch, self.release, pre, post, dev


def parse_version(text: str) -> Version | None:
    """`text` as a PEP 440 version (surrounding spaces allowed), or None when it is not one."""
    if len(text) > MAX_VERSION_CHARS:
        return None
    match = _pep440().fullmatch(text.strip())
    if match is None:
        return None
    release = tuple(int(part) for part in match["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    pre = None
    if match["pre_l"] is not None:
        pre = (_PRE_RANK[match["pre_l"].lower()], int(match["pre_n"] or 0))
    post = None
    if match["post"] is not None:
        post = int(match["post_n1"] or match["post_n2"] or 0)
    dev = int(match["dev_n"] or 0) if match["dev"] is not None else None
    return Version(int(match["epoch"] or 0), release, pre, post, dev, match["local"])
