"""Each release's NGRAM verify gap is what its wheel says, and what its code does.

`tools/verify_gaps.py` reads the chain from the wheels into compat/releases/verify_data.py.
These tests read the wheels again (the data is the tool's reading), then run the release's
own code (tools/conformance/verify.py): the common `AttentionBackend.forward` on a
`TARGET_VERIFY` batch of a torch_native backend raises where the data says, through the
lines it cites; given the field, the same run gets past that read; and the hybrid backend
runs the verify where the data's `select` says. Without a wheel (no cache, no network) they
skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.verify import verify_runtime
from verify_gaps import release_data

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.verify_data import NGRAM_VERIFY

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheel(release: str) -> None:
    require_source(release)
    assert release_data(release) == NGRAM_VERIFY.get(release)


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in NGRAM_VERIFY])
def test_the_wheels_own_verify_pass_raises_where_the_data_says(release: str) -> None:
    require_source(release)
    data = NGRAM_VERIFY[release]
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


def test_every_release_with_the_data_predicts_it_for_ngram_alone() -> None:
    for release, rules in RELEASES.items():
        gaps = rules.verify.gaps
        if release not in NGRAM_VERIFY:
            continue
        assert [gap.algorithm for gap in gaps] == [rules.ngram], release
        assert gaps[0].backends == frozenset(NGRAM_VERIFY[release]["backends"]), release
        assert all(site.package == "sglang" and site.version == release for site in (
            gaps[0].verify, gaps[0].unset, gaps[0].select, gaps[0].dispatch, gaps[0].passes,
            gaps[0].reads,
        ))  # fmt: skip
