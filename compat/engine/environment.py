"""The environment SGLang's start-up code reads next to the flags: the variables modelled.

Some start-up decisions read an environment variable, not a flag. A launch's variables are
an input of the replay (`Launch.environment`); one it does not set is assumed unset, which
is what the official images ship for the variables modelled here (the ROCm image sets
others, `SGLANG_USE_AITER=1` among them: docs/contributing.md lists them). Which
variables each release's start-up code reads, and where, is data read from its wheel by
`python tools/env_vars.py` (`compat/engine/env_data.py`); this module says which of them
the replay models and how SGLang parses each.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from compat.engine.env_reads import EnvRead
from compat.engine.preshuffle import AOT_GLUON, DSA_DISABLE, NSA_DISABLE, USE_AITER
from compat.vocab.terms import Platform

if TYPE_CHECKING:
    from compat.engine.launch import Launch


AITER_KV_CACHE_LAYOUT = "SGLANG_AITER_KV_CACHE_LAYOUT"
"""`EnvStr("nhd")`: `vectorized_5d` (any case: SGLang lower-cases it) makes 64 the default
page size on ROCm (`_handle_page_size`, from 0.5.15 `_page_size_default`), where the
default is otherwise 1."""
VECTORIZED_5D = "vectorized_5d"

_ROCM = frozenset({Platform.ROCM})
READ_ON: dict[str, frozenset[Platform]] = {
    AITER_KV_CACHE_LAYOUT: _ROCM,
    # `aiter_can_use_preshuffle_paged_mqa()` returns False off ROCm before reading any.
    USE_AITER: _ROCM,
    DSA_DISABLE: _ROCM,
    NSA_DISABLE: _ROCM,
    AOT_GLUON: _ROCM,
}
"""Each variable the replay reads, and the platforms where SGLang's code reads it (behind
`is_hip()`, ...): elsewhere it cannot move a decision. The others a release's start-up
reads are listed, with their lines, in docs/contributing.md as not modelled yet. The
preshuffle ones are read outside the files `env_data` scans (`compat.engine.preshuffle`):
a release reads them where its rules hold `preshuffle`."""
MODELLED: frozenset[str] = frozenset(READ_ON)
SCANNED: frozenset[str] = frozenset({AITER_KV_CACHE_LAYOUT})
"""Those a release reads where `env_data` says (the others: where its rules say)."""

Environment = tuple[tuple[str, str], ...]
"""A launch's variables as (name, value) pairs, sorted by name: unset ones are absent."""


def value_of(environment: Environment, name: str) -> str | None:
    """The value `environment` sets `name` to, or None where it leaves it unset."""
    for key, value in environment:
        if key == name:
            return value
    return None


@functools.cache
def reads(release: str) -> tuple[EnvRead, ...]:
    """The reads of `release`'s start-up code where it decides attention (none for a
    release the data does not hold)."""
    # Imported here: the data is large and only a launch that names a variable needs it.
    from compat.engine.env_data import ENV_READS

    return ENV_READS.get(release, ())


@functools.cache
def modelled(release: str, also: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The variables `release`'s start-up reads that the replay models, sorted (`also`: those
    its rules read besides, the preshuffle check's)."""
    return tuple(sorted(SCANNED & {read.name for read in reads(release)} | set(also)))


@functools.cache
def releases_reading(name: str) -> tuple[str, ...]:
    """The releases whose start-up reads `name` (one the replay models), oldest first."""
    from compat.engine.env_data import ENV_READS

    return tuple(release for release in ENV_READS if name in modelled(release))


def read_on(release: str, platform: Platform, also: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The variables `release`'s start-up reads on `platform` that the replay models."""
    return tuple(name for name in modelled(release, also) if platform in READ_ON[name])


def where(release: str, name: str) -> EnvRead:
    """The first read of `name` in `release`'s start-up (one `modelled` names)."""
    return next(read for read in reads(release) if read.name == name)


def default_page_size(launch: Launch, release: str) -> int:
    """The page size `_handle_page_size` (`_page_size_default`) gives a launch without one:
    64 on ROCm under `SGLANG_AITER_KV_CACHE_LAYOUT=vectorized_5d` where the release reads
    it, else 1 (MUSA's 64 is no platform the package models)."""
    layout = value_of(launch.environment, AITER_KV_CACHE_LAYOUT)
    if (
        layout is not None
        and layout.lower() == VECTORIZED_5D
        and launch.platform in READ_ON[AITER_KV_CACHE_LAYOUT]
        and AITER_KV_CACHE_LAYOUT in modelled(release)
    ):
        return 64
    return 1
