"""The vocabulary: how compute capabilities are written, the KV dtype families, alternatives."""

from __future__ import annotations

import pytest

from compat.vocab.hardware import CapabilityRange, ComputeCapability
from compat.vocab.spelling import closest, did_you_mean, join_or
from compat.vocab.terms import KV_DTYPE_SPELLINGS, KvDtype, KvFamily


@pytest.mark.parametrize(
    ("text", "major", "minor"),
    [("10.0", 10, 0), ("sm100", 10, 0), ("100", 10, 0), ("sm_90", 9, 0), ("9", 9, 0),
     ("86", 8, 6), ("8.6", 8, 6), ("12", 12, 0), ("sm120", 12, 0)],
)  # fmt: skip
def test_every_spelling_of_a_compute_capability_parses(text: str, major: int, minor: int) -> None:
    assert ComputeCapability.parse(text) == ComputeCapability(major, minor)


@pytest.mark.parametrize("text", ["", "sm", "ten", "10.0.1", "-9"])
def test_a_bad_compute_capability_says_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match=r"10\.0, sm100 or 100"):
        ComputeCapability.parse(text)


def test_a_range_holds_its_majors_and_nothing_else() -> None:
    hopper_to_blackwell = CapabilityRange(9, 10)
    assert ComputeCapability(9, 0) in hopper_to_blackwell
    assert ComputeCapability(10, 3) in hopper_to_blackwell
    assert ComputeCapability(8, 9) not in hopper_to_blackwell
    assert ComputeCapability(12, 0) not in hopper_to_blackwell
    assert "sm90" not in hopper_to_blackwell
    assert hopper_to_blackwell.label == "sm9x to sm10x"
    assert CapabilityRange(8).label == "sm8x and newer"


def test_both_bf16_spellings_are_one_dtype_and_families_group_the_quantized() -> None:
    assert KV_DTYPE_SPELLINGS["bf16"] is KV_DTYPE_SPELLINGS["bfloat16"] is KvDtype.BF16
    assert {d for d in KvDtype if d.family is KvFamily.FP4} == {
        KvDtype.FP4_E2M1,
        KvDtype.NVFP4,
        KvDtype.FP4_MX_BLOCK16,
    }
    assert KvDtype.NVFP4.same_family(KvDtype.FP4_E2M1)
    assert not KvDtype.FP8_E5M2.same_family(KvDtype.FP8_E4M3)
    assert KvDtype.AUTO.family is None and KvDtype.BF16.family is None


def test_alternatives_read_as_the_tables_write_them() -> None:
    assert join_or([]) == ""
    assert join_or(["a"]) == "a"
    assert join_or(["a", "b"]) == "a or b"
    assert join_or(["a", "b", "c"]) == "a, b or c"


def test_did_you_mean_offers_only_a_close_choice() -> None:
    assert closest("trtllm_mh", ["trtllm_mha", "triton"]) == "trtllm_mha"
    assert closest("zzz", ["trtllm_mha", "triton"]) is None
    assert did_you_mean("fa3") == "; did you mean fa3?"
    assert did_you_mean("fa3", quoted=True) == "; did you mean 'fa3'?"
    assert did_you_mean(None) == ""
