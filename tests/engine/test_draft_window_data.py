"""Each release's gap in the Triton backend's draft-extend capture is what its wheel says,
and what its code does.

`tools/draft_window_gaps.py` reads the chain from the wheels into
compat/releases/draft_window_data.py: the model runner's line that takes the config's window,
the capture metadata's draft-extend branch that leaves the window's KV indices None, the
read in `forward_extend` and the kernel call it reaches, and (running each release's own
`ModelConfig`) the MTP drafts that run with a window. These tests read the wheels again (the
data is the tool's reading), then run the release's own `TritonAttnBackend`
(tools/conformance/verify.py): its capture metadata for both draft-extend modes, then
`forward_extend` of a window layer, hands the kernel None on the cited line where the data
has an entry; 0.5.23, which fills the window's indices, hands it indices. Without a wheel
(no cache, no network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.verify import verify_runtime
from conformance.wheel import wheel_path
from draft_window_gaps import release_data
from kernels.wheels import read_text

from compat.engine.build import DRAFT_ALGORITHMS
from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.draft_window_data import DRAFT_WINDOW_GAPS

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]
MODES = ["DRAFT_EXTEND_V2", "DRAFT_EXTEND"]
"""The multi-layer EAGLE runner's mode (MiMo-V2 and Step-3.5 turn it on), and the EAGLE
worker's draft-extend runner's."""


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheel(release: str) -> None:
    require_source(release)
    assert release_data(release) == DRAFT_WINDOW_GAPS.get(release)


@pytest.mark.parametrize("release", CHOSEN)
def test_the_wheels_own_backend_hands_the_kernel_none_exactly_where_the_data_says(
    release: str,
) -> None:
    require_source(release)
    data = DRAFT_WINDOW_GAPS.get(release)
    with verify_runtime(release) as runtime:
        # The older mode is gone from 0.5.14 (its workers moved to the newer one).
        modes = [mode for mode in MODES if hasattr(runtime.forward_mode, mode)]
        outcomes = {mode: runtime.draft_window_frames(mode=mode) for mode in modes}
    assert "DRAFT_EXTEND_V2" in outcomes
    if release == "0.5.7":
        # Its capture serves the older mode alone: the newer one raises "Invalid forward
        # mode" first, so the data leaves the release out (it can only miss a failure).
        assert outcomes["DRAFT_EXTEND_V2"][0] == "ValueError"
        assert outcomes["DRAFT_EXTEND"][0] == "TypeError"
        assert data is None
        return
    for mode, (raised, frames) in outcomes.items():
        if data is None:  # 0.5.23 fills the window's indices for both
            assert (raised, frames) == ("", []), (release, mode, frames)
            continue
        file, where, line = data["kernel"]
        assert raised == "TypeError" and (file, where.rsplit(".", 1)[1], line) in frames, mode


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in DRAFT_WINDOW_GAPS])
def test_each_cited_line_says_what_the_data_says_of_it(release: str) -> None:
    require_source(release)
    data = DRAFT_WINDOW_GAPS[release]
    wheel = wheel_path(release)
    text = read_text(wheel, data["capture"][0]).splitlines()
    assert "window_kv_indices" in text[data["capture"][2] - 1]
    assert "None" in text[data["capture"][2] - 1]
    assert "= self.forward_metadata.window_kv_indices" in text[data["reads"][2] - 1]
    assert "(" in text[data["kernel"][2] - 1] and "extend" in text[data["kernel"][2] - 1]
    runner = read_text(wheel, data["runner"][0]).splitlines()
    assert "model_config.sliding_window_size" in runner[data["runner"][2] - 1]


def test_each_release_with_an_entry_has_one_gap_for_the_draft_workers() -> None:
    for release, rules in RELEASES.items():
        data = DRAFT_WINDOW_GAPS.get(release)
        gaps = rules.verify.draft_window_gaps
        if data is None:
            assert gaps == (), release
            continue
        [gap] = gaps
        assert gap.algorithms == DRAFT_ALGORITHMS
        assert gap.targets == frozenset(data["targets"]) and gap.drafts == frozenset(data["drafts"])
        assert "MiMoV2FlashForCausalLM" in gap.targets and "MiMoV2MTP" in gap.drafts
