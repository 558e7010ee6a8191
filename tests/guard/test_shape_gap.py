"""The guard reports where the first prefill fails compiling a kernel over the model's
shapes, after the weights load.

The case is SGLang's own report sglang#25672 (0.5.12, MI325X, GLM-5-FP8 with
`--attention-backend aiter`): the weights loaded, then the first forward pass died
compiling the Triton kernel that concatenates the MHA keys, whose range over
`qk_nope_head_dim` (192) is not a power of two. The engine replays each release's gap
(`compat.engine.shapes`, read from the wheels and run there: tests/engine/test_shape_data.py);
nothing fails off aiter's prefill, off ROCm, or with shapes that are powers of two.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.engine.shapes import SHAPE_RULE
from compat.guard.report import Enforcement, Report
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES

GLM_5: dict[str, Any] = {
    "model_architecture": "GlmMoeDsaForCausalLM",
    "attention_arch": "mla",
    "q_heads": 64,
    "qk_nope_head_dim": 192,
    "qk_rope_head_dim": 64,
    "platform": "rocm",
    "tp_size": 8,
}


def _report(release: str, **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **(GLM_5 | kwargs)))


def _shape_errors(report: Report) -> list[str]:
    return [f.backend or "" for f in report.errors if f.rule == SHAPE_RULE]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_glm_5_on_aiter_starts_then_fails_its_first_prefill(release: str) -> None:
    report = _report(release, attention_backend="aiter")
    gaps = RELEASES[release].shapes.gaps
    if not gaps or "GlmMoeDsaForCausalLM" not in gaps[0].architectures:
        assert _shape_errors(report) == [], release
        return
    assert report.startup_reasons == ()  # SGLang starts it
    [failure] = [f for f in report.errors if f.rule == SHAPE_RULE]
    assert failure.enforced is Enforcement.WARMUP and failure.backend == "aiter"
    nope = gaps[0].nope
    assert failure.raised_at == f"{nope.file}:{nope.line} ({nope.function})"
    assert "qk_nope_head_dim 192" in failure.message
    assert failure.flags == ("--attention-backend",)


@pytest.mark.parametrize(
    "change",
    [
        {"attention_backend": "triton"},  # the ROCm branch of another backend slices
        {"attention_backend": None},  # SGLang's default for the model (its DSA backend)
        {"qk_nope_head_dim": 128},  # DeepSeek-V3's shapes
        {"qk_nope_head_dim": None},  # not known: nothing predicted
        {"model_architecture": "MiniCPM3ForCausalLM"},  # MLA of its own attention
    ],
)
def test_nothing_fails_off_the_kernel_or_with_powers_of_two(change: dict[str, Any]) -> None:
    aiter = {"attention_backend": "aiter"}
    assert _shape_errors(_report("0.5.12", **aiter)) == ["aiter"]
    assert _shape_errors(_report("0.5.12", **(aiter | change))) == []


def test_the_heads_per_rank_are_the_attentions_tensor_parallel_share() -> None:
    """96 heads at TP 8 are 12 per rank, which the launcher pads from 0.5.18; with DP
    attention over 2, the attention's TP is 4 (24 per rank)."""
    twelve = {"q_heads": 96, "qk_nope_head_dim": 128, "attention_backend": "aiter"}
    [failure] = [f for f in _report("0.5.17", **twelve).errors if f.rule == SHAPE_RULE]
    assert "12 heads per rank" in failure.message
    assert _shape_errors(_report("0.5.18", **twelve)) == []
    # The padding kernel takes the 12 heads, and fails on its own range over GLM-5's dim.
    [failure] = [f for f in _report("0.5.18", **(twelve | {"qk_nope_head_dim": 192})).errors
                 if f.rule == SHAPE_RULE]  # fmt: skip
    assert failure.raised_at is not None and "concat_and_cast_mha_k_pad_kernel" in failure.raised_at
    dp = twelve | {"q_heads": 64, "dp_size": 2, "enable_dp_attention": True}
    assert _shape_errors(_report("0.5.17", **dp)) == []  # 64 / 4 = 16
    split = {"prefill_attention_backend": "aiter", "decode_attention_backend": "triton"}
    [failure] = [f for f in _report("0.5.12", **split).errors if f.rule == SHAPE_RULE]
    assert failure.flags == ("--prefill-attention-backend",)


def test_compat_explain_names_the_gap_of_the_newest_release() -> None:
    from compat import MATRIX
    from compat.cli.explain import explain_lines

    aiter = "\n".join(explain_lines(MATRIX, "aiter"))
    assert "When its first prefill runs" in aiter
    nope = RELEASES[NEWEST].shapes.gaps[0].nope
    assert f"{nope.file}:{nope.line}" in aiter and "qk_nope_head_dim" in aiter
    assert "When its first prefill runs" not in "\n".join(explain_lines(MATRIX, "triton"))
