"""Each release's verify gaps (`compat.engine.verify`), built from the data the wheels gave
(`compat.releases.verify_data`, written by `tools/verify_gaps.py`)."""

from __future__ import annotations

from compat.engine.kernels import Site
from compat.engine.verify import VerifyGap, VerifyRules
from compat.releases.verify_data import NGRAM_VERIFY

_SITES = ("verify", "unset", "select", "dispatch", "passes", "reads")


def verify_rules(release: str, before: VerifyRules, ngram: str) -> VerifyRules:
    """`release`'s verify gaps: NGRAM's (the release's name for it, `ngram`) where its wheel
    shows the chain. A release the wheels were not read for (a stand-in for a newer one)
    has `before`'s."""
    data = NGRAM_VERIFY.get(release)
    if data is None:
        return before
    sites = {name: Site("sglang", release, *data[name]) for name in _SITES}
    return VerifyRules((VerifyGap(ngram, frozenset(data["backends"]), **sites),))
