"""Each release's gap in flashinfer's sliding-window verify is what its wheel says, and what
its code does.

`tools/window_gaps.py` reads the chain from the wheels into compat/releases/window_data.py:
the backend's branch for `TARGET_VERIFY` that hands its prefill updater `prefix_lens=None`,
the updater's switch to its sliding-window method, the subtraction that fails, and the model
classes that define a window. These tests read the wheels again (the data is the tool's
reading), then run the release's own updater (tools/conformance/verify.py): built by its own
`__init__` for a runner with a window and called as that branch calls it, it raises
TypeError on the cited line where the data has an entry, and nowhere where it has none
(0.5.14 on); given the lengths, it gets past the subtraction. Without a wheel (no cache, no
network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.verify import StandIn, verify_runtime
from conformance.wheel import wheel_path
from kernels.wheels import read_text
from window_gaps import release_data

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.verify_data import VERIFY_GAPS
from compat.releases.window_data import WINDOW_GAPS

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheel(release: str) -> None:
    require_source(release)
    assert release_data(release) == WINDOW_GAPS.get(release)


@pytest.mark.parametrize("release", CHOSEN)
def test_the_wheels_own_updater_fails_exactly_where_the_data_says(release: str) -> None:
    require_source(release)
    data = WINDOW_GAPS.get(release)
    with verify_runtime(release) as runtime:
        raised, frames = runtime.window_frames()
        given = runtime.window_frames(prefix_lens=StandIn())  # the lengths a prefill carries
    assert given == ("", [])
    if data is None:
        assert (raised, frames) == ("", []), (release, frames)
        return
    file, where, line = data["reads"]
    assert raised == "TypeError" and frames[-1] == (file, where.rsplit(".", 1)[1], line)


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in WINDOW_GAPS])
def test_each_cited_line_says_what_the_data_says_of_it(release: str) -> None:
    require_source(release)
    data = WINDOW_GAPS[release]
    text = read_text(wheel_path(release), data["reads"][0]).splitlines()
    assert "prefix_lens=None" in text[data["passes"][2] - 1]
    assert "self.update = self.update_sliding_window" in text[data["window"][2] - 1]
    assert "- prefix_lens" in text[data["reads"][2] - 1]


def test_each_release_with_a_window_gap_has_it_for_each_algorithm_that_verifies() -> None:
    """The gaps follow the workers' switches of verify_data.py; a release without an entry
    (its updater asks whether the lengths are None) has none."""
    for release, rules in RELEASES.items():
        data = WINDOW_GAPS.get(release)
        gaps = rules.verify.window_gaps
        if data is None:
            assert gaps == () or release not in VERIFY_GAPS, release
            continue
        assert [g.algorithm for g in gaps] == [g.algorithm for g in rules.verify.gaps], release
        for window, plain in zip(gaps, rules.verify.gaps, strict=True):
            assert (window.verify, window.select) == (plain.verify, plain.select)
            assert window.architectures == frozenset(data["architectures"])
            assert window.backends == frozenset(data["backends"])
