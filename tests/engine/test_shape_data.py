"""Each release's kernel that needs power-of-two shapes (the MLA key concatenation on ROCm
with aiter) is what its wheel says, and what its code does.

`tools/shape_gaps.py` reads the chain from the wheels into compat/releases/shape_data.py:
aiter's handler's MHA path for a prefill, the concatenation's aiter branch and its launch,
each `tl.arange` of the kernel, whether the launcher pads the heads, and the classes that
run the attention. These tests read the wheels again (the data is the tool's reading), then
run the release's own concatenation, launcher and kernels (tools/conformance/shapes.py,
Triton's `tl.arange` refusing a range that is not a power of two as its compiler does):
GLM-5's shapes fail on the cited line of the nope dim, 12 heads per rank on the heads' line
until the launcher pads them (0.5.18), DeepSeek-V3's compile. Without a wheel (no cache, no
network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.shapes import concat_frames
from conformance.wheel import wheel_path
from kernels.wheels import read_text
from shape_gaps import release_data

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.shape_data import SHAPE_GAPS

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]
GLM_5 = (8, 192, 64)
"""GLM-5 at TP 8: heads per rank, qk_nope_head_dim, qk_rope_head_dim."""
DEEPSEEK_V3 = (16, 128, 64)
TWELVE_HEADS = (12, 128, 64)
"""96 heads at TP 8 (Kimi-K3's, for which 0.5.18 pads the heads)."""


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheel(release: str) -> None:
    require_source(release)
    assert release_data(release) == SHAPE_GAPS.get(release)


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in SHAPE_GAPS])
def test_the_wheels_own_kernel_fails_exactly_where_the_data_says(release: str) -> None:
    require_source(release)
    data = SHAPE_GAPS[release]
    heads, nope, _ = data["ranges"]
    launch = data["launch"]
    raised, frames = concat_frames(release, *GLM_5)
    assert raised == "CompilationError" and frames[-1] == (nope[0], nope[1], nope[2])
    assert frames[0] == (launch[0], launch[1].rsplit(".", 1)[1], launch[2])
    assert concat_frames(release, *DEEPSEEK_V3) == ("", [])
    raised, frames = concat_frames(release, *TWELVE_HEADS)
    if data["padded"]:
        assert (raised, frames) == ("", [])
        # With GLM-5's dims too, the padding kernel's own range fails.
        raised, frames = concat_frames(release, 12, 192, 64)
        assert raised == "CompilationError" and frames[-1] == tuple(data["padded"][0])
    else:
        assert raised == "CompilationError" and frames[-1] == (heads[0], heads[1], heads[2])


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in SHAPE_GAPS])
def test_each_cited_line_says_what_the_data_says_of_it(release: str) -> None:
    require_source(release)
    data = SHAPE_GAPS[release]
    wheel = wheel_path(release)

    def line(site: tuple[str, str, int]) -> str:
        return read_text(wheel, site[0]).splitlines()[site[2] - 1]

    assert "AttnForwardMethod.MHA" in line(data["handler"])
    assert '"aiter"' in line(data["branch"])
    assert "concat_and_cast_mha_k_triton(" in line(data["launch"])
    for site, dim in zip(data["ranges"], ("head_cnt", "nope_dim", "rope_dim"), strict=True):
        assert f"tl.arange(0, {dim})" in line(site)
    for site, dim in zip(data["padded"], ("nope_dim", "rope_dim"), strict=False):
        assert f"tl.arange(0, {dim})" in line(site) and site[1].endswith("pad_kernel")


def test_each_release_serves_glm_5_through_the_gap_from_the_release_that_serves_it() -> None:
    served = [r for r, rules in RELEASES.items() if any(
        "GlmMoeDsaForCausalLM" in gap.architectures for gap in rules.shapes.gaps)]  # fmt: skip
    assert served == list(RELEASE_NAMES[RELEASE_NAMES.index("0.5.9") :])
    for rules in RELEASES.values():
        assert all("DeepseekV3ForCausalLM" in gap.architectures for gap in rules.shapes.gaps)
