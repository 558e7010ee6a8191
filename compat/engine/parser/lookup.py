"""The launch flags of an SGLang release, as its own parser accepts them.

The flag lists are data (`compat.engine.parser.data`, generated from each release's own parser
by `tools/flags.py`): the first release whole, then what each later one changes,
folded out the first time a release is asked for. SGLang's parser is a plain
`argparse.ArgumentParser`, so, as there, an unambiguous prefix of a flag names the flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from compat.engine.parser.data import BASE, BASE_RELEASE, CHANGES
from compat.engine.parser.encoding import apply, changes
from compat.vocab.spelling import closest, did_you_mean

RELEASES = (BASE_RELEASE, *CHANGES)
"""Every release with a flag list, oldest first."""
RELEASE = BASE_RELEASE
"""The release whose flags `release_flags` and `canonical_flag` use unless another is named."""


class UnknownFlagError(ValueError):
    """A flag the release's parser would refuse; the message names it and a close match."""

    def __init__(self, flag: str, release: str, close: str | None, ambiguous: tuple[str, ...]):
        self.flag, self.release, self.did_you_mean = flag, release, close
        if ambiguous:
            text = f"{flag} is ambiguous in SGLang {release}: it could be {', '.join(ambiguous)}"
        else:
            text = f"SGLang {release} has no flag {flag}{did_you_mean(close)}"
        super().__init__(text)


@cache
def release_flags(release: str = RELEASE) -> dict[str, str]:
    """Every flag of `release` mapped to its arity (switch, value, optional or list)."""
    if release == BASE_RELEASE:
        return apply({}, BASE)
    if release not in CHANGES:
        raise ValueError(f"no flag list for SGLang {release}; known: {', '.join(RELEASES)}")
    # Each release is the one before it plus its changes; the cache keeps every fold.
    return apply(release_flags(RELEASES[RELEASES.index(release) - 1]), CHANGES[release])


def stand_in(release: str, flags: Mapping[str, str], after: str) -> None:
    """For `tools/intake.py` only: `release` declares `flags` (read from its own parser)
    and comes right after `after`, for the rest of this process; the lists of releases
    after `after` are set aside (see `compat.releases.stand_in`)."""
    global RELEASES
    if after not in RELEASES:
        raise ValueError(f"no flag list for SGLang {after}; known: {', '.join(RELEASES)}")
    delta = changes(release_flags(after), flags)
    for later in RELEASES[RELEASES.index(after) + 1 :]:
        del CHANGES[later]
    CHANGES[release] = delta
    RELEASES = (BASE_RELEASE, *CHANGES)
    release_flags.cache_clear()


def canonical_flag(flag: str, release: str = RELEASE) -> str:
    """The flag `flag` names in `release` (itself, or the one flag it is a prefix of)."""
    flags = release_flags(release)
    if flag in flags:
        return flag
    starting = tuple(name for name in flags if name.startswith(flag))
    if len(starting) == 1:
        return starting[0]
    raise UnknownFlagError(flag, release, closest(flag, flags, cutoff=0.75), starting)
