"""Each release's verify gaps (`compat.engine.verify`), built from the data the wheels gave
(`compat.releases.verify_data`, written by `tools/verify_gaps.py`)."""

from __future__ import annotations

from collections.abc import Iterable

from compat.engine.kernels import Site
from compat.engine.verify import VerifyGap, VerifyRules
from compat.releases.verify_data import VERIFY_GAPS

_SHARED = ("unset", "select", "dispatch", "passes", "reads")
NGRAM_FAMILY, EAGLE_FAMILY = "NGRAM", "EAGLE"
"""The data's keys for the families of workers (`tools/verify_gaps.py` writes them): NGRAM's,
and the EAGLE family's (one set of workers)."""


def verify_rules(
    release: str, before: VerifyRules, ngram: str, eagle_family: Iterable[str]
) -> VerifyRules:
    """`release`'s verify gaps: one per algorithm whose workers' switch to `TARGET_VERIFY`
    its wheel shows (NGRAM, the release's name `ngram`; each of `eagle_family`), over the
    chain they share. A release the wheels were not read for (a stand-in for a newer one)
    has `before`'s."""
    data = VERIFY_GAPS.get(release)
    if data is None:
        return before
    shared = {name: _site(release, data[name]) for name in _SHARED}
    backends = frozenset(data["backends"])
    switches = data["verify"]
    algorithms = [(ngram, NGRAM_FAMILY), *((name, EAGLE_FAMILY) for name in sorted(eagle_family))]
    return VerifyRules(
        tuple(
            VerifyGap(algorithm, backends, _site(release, switches[family]), **shared)
            for algorithm, family in algorithms
            if family in switches
        )
    )


def _site(release: str, where: tuple[str, str, int]) -> Site:
    return Site("sglang", release, *where)
