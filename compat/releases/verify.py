"""Each release's verify gaps (`compat.engine.verify`), built from the data the wheels gave
(`compat.releases.verify_data`, written by `tools/verify_gaps.py`;
`compat.releases.window_data`, by `tools/window_gaps.py`; and
`compat.releases.draft_window_data`, by `tools/draft_window_gaps.py`)."""

from __future__ import annotations

from collections.abc import Iterable

from compat.engine.build import DRAFT_ALGORITHMS
from compat.engine.kernels import Site, sglang_site
from compat.engine.verify import DraftWindowGap, VerifyGap, VerifyRules, WindowGap
from compat.releases.draft_window_data import DRAFT_WINDOW_GAPS
from compat.releases.verify_data import VERIFY_GAPS
from compat.releases.window_data import WINDOW_GAPS

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
    shared = {name: sglang_site(release, data[name]) for name in _SHARED}
    backends = frozenset(data["backends"])
    switches = data["verify"]
    algorithms = [
        (algorithm, sglang_site(release, switches[family]))
        for algorithm, family in [
            (ngram, NGRAM_FAMILY),
            *((name, EAGLE_FAMILY) for name in sorted(eagle_family)),
        ]
        if family in switches
    ]
    gaps = tuple(
        VerifyGap(algorithm, backends, switch, **shared) for algorithm, switch in algorithms
    )
    windows = _window_gaps(release, algorithms, shared["select"])
    return VerifyRules(gaps, windows, _draft_window_gaps(release))


def _window_gaps(
    release: str, algorithms: list[tuple[str, Site]], select: Site
) -> tuple[WindowGap, ...]:
    """The release's gaps in flashinfer's sliding-window path: the same workers' verify,
    over the links its wheel shows (none from 0.5.14, whose updater asks first)."""
    data = WINDOW_GAPS.get(release)
    if data is None:
        return ()
    backends, architectures = frozenset(data["backends"]), frozenset(data["architectures"])
    sites = {name: sglang_site(release, data[name]) for name in ("passes", "window", "reads")}
    hybrid = frozenset(data["hybrid"])
    return tuple(
        WindowGap(algorithm, backends, architectures, switch, select, **sites, hybrid=hybrid)
        for algorithm, switch in algorithms
    )


def _draft_window_gaps(release: str) -> tuple[DraftWindowGap, ...]:
    """The release's gap in the Triton backend's draft-extend capture (none from 0.5.23,
    which fills the window's indices for that mode)."""
    data = DRAFT_WINDOW_GAPS.get(release)
    if data is None:
        return ()
    sites = {name: sglang_site(release, data[name]) for name in ("runner", "capture", "reads", "kernel")}
    backends, targets = frozenset(data["backends"]), frozenset(data["targets"])
    drafts = frozenset(data["drafts"])
    return (DraftWindowGap(DRAFT_ALGORITHMS, backends, targets, drafts, **sites),)
