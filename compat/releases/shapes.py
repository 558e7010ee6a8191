"""Each release's kernels that need power-of-two shapes (`compat.engine.shapes`), built from
the data the wheels gave (`compat.releases.shape_data`, written by `tools/shape_gaps.py`)."""

from __future__ import annotations

from compat.engine.kernels import sglang_site
from compat.engine.shapes import PowerOfTwoGap, ShapeRules
from compat.releases.shape_data import SHAPE_GAPS

AITER = frozenset({"aiter"})
"""The prefill backend whose handler the concatenation's aiter branch serves: the branch
tests `current_attention_backend == "aiter"` (`tools/shape_gaps.py` reads it)."""


def shape_rules(release: str, before: ShapeRules) -> ShapeRules:
    """`release`'s gaps; a release the wheels were not read for (a stand-in for a newer one)
    has `before`'s."""
    data = SHAPE_GAPS.get(release)
    if data is None:
        return before
    heads, nope, rope = (sglang_site(release, where) for where in data["ranges"])
    sites = {name: sglang_site(release, data[name]) for name in ("handler", "branch", "launch")}
    pad = [sglang_site(release, where) for where in data["padded"]]  # none before 0.5.18
    padded = (pad[0], pad[1]) if pad else None
    gap = PowerOfTwoGap(AITER, frozenset(data["architectures"]), padded, **sites, heads=heads,
                        nope=nope, rope=rope)  # fmt: skip
    return ShapeRules((gap,))
