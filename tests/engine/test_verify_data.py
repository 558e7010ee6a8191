"""Each release's verify gap is what its wheel says, and what its code does.

`tools/verify_gaps.py` reads the chain from the wheels into compat/releases/verify_data.py,
with where NGRAM's and the EAGLE family's workers switch to `TARGET_VERIFY`. These tests
read the wheels again (the data is the tool's reading; each cited switch sets the mode),
then run the release's own code (tools/conformance/verify.py): the common
`AttentionBackend.forward` on a `TARGET_VERIFY` batch of a torch_native backend raises where
the data says, through the lines it cites; given the field, the same run gets past that
read; and the hybrid backend runs the verify where the data's `select` says. Without a
wheel (no cache, no network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.verify import verify_runtime
from conformance.wheel import wheel_path
from kernels.wheels import read_text
from verify_gaps import release_data

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.verify import EAGLE_FAMILY, NGRAM_FAMILY
from compat.releases.verify_data import VERIFY_GAPS

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheel(release: str) -> None:
    require_source(release)
    assert release_data(release) == VERIFY_GAPS.get(release)


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in VERIFY_GAPS])
def test_the_wheels_own_verify_pass_raises_where_the_data_says(release: str) -> None:
    require_source(release)
    data = VERIFY_GAPS[release]
    with verify_runtime(release) as runtime:
        raised, frames = runtime.verify_frames()
        assert raised == "AttributeError", (release, frames)
        cited = [data[name] for name in ("dispatch", "passes", "reads")]
        # A traceback names the function; the data, its class too.
        assert frames == [(file, where.rsplit(".", 1)[1], line) for file, where, line in cited]

        class _Lens:  # the field a prefill batch carries
            shape = (1,)

        _, given = runtime.verify_frames(_Lens())
        assert given[-1][2] > data["reads"][2] and given[-1][0] == data["reads"][0], given
        assert (runtime.verify_backend("prefill"), runtime.verify_backend("decode")) == (
            "prefill",
            "decode",
        )


def test_each_release_has_a_gap_per_algorithm_whose_workers_switch_the_wheel_shows() -> None:
    for release, rules in RELEASES.items():
        data = VERIFY_GAPS.get(release)
        if data is None:
            continue
        expected = {rules.ngram} | set(rules.eagle_family)
        assert {gap.algorithm for gap in rules.verify.gaps} == expected, release
        for gap in rules.verify.gaps:
            family = NGRAM_FAMILY if gap.algorithm == rules.ngram else EAGLE_FAMILY
            assert (gap.verify.file, gap.verify.function, gap.verify.line) == tuple(
                data["verify"][family]
            )
            assert gap.backends == frozenset(data["backends"]), release
            sites = (gap.unset, gap.select, gap.dispatch, gap.passes, gap.reads)
            assert all(site.package == "sglang" and site.version == release for site in sites)


@pytest.mark.parametrize("release", CHOSEN)
def test_each_workers_switch_sets_target_verify_on_its_line(release: str) -> None:
    """The cited line of each family's switch is the assignment of the batch's mode, and
    it names `ForwardMode.TARGET_VERIFY` (within the statement it starts)."""
    require_source(release)
    for file, _, line in VERIFY_GAPS[release]["verify"].values():
        text = read_text(wheel_path(release), file).splitlines()
        statement = " ".join(text[line - 1 : line + 4])
        assert "forward_mode =" in statement and "ForwardMode.TARGET_VERIFY" in statement
