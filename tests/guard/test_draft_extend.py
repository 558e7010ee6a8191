"""The guard reports where the draft's draft-extend CUDA-graph capture fails on the Triton
backend's sliding-window path, after the weights load.

The case is SGLang's own report sglang#24481 (0.5.11, four RTX PRO 6000, MiMo-V2.5 with
`--speculative-algorithm EAGLE --attention-backend triton`): the weights loaded, then the
capture of the multi-layer EAGLE draft-extend runner died, the MTP draft's window layer
handing the extend kernel window KV indices that were never filled. The engine replays each
release's gap (`compat.engine.verify.DraftWindowGap`, read from the wheels and run there:
tests/engine/test_draft_window_data.py); nothing fails where the launch leaves no window
to the draft, captures no graph, or drafts elsewhere.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.engine.verify import DRAFT_EXTEND_RULE
from compat.guard.report import Enforcement, Report
from compat.releases import RELEASE_NAMES, RELEASES

MIMO: dict[str, Any] = {
    "model_architecture": "MiMoV2ForCausalLM",
    "sliding_window": True,
    "platform": "cuda",
    "compute_capability": (12, 0),
    "tp_size": 4,
}
EAGLE_ON_TRITON: dict[str, Any] = {"attention_backend": "triton", "speculative_algorithm": "EAGLE"}


def _report(release: str, **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **(MIMO | kwargs)))


def _draft_errors(report: Report) -> list[str]:
    return [f.backend or "" for f in report.errors if f.rule == DRAFT_EXTEND_RULE]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_eagle_on_triton_for_a_windowed_mtp_draft_fails_its_capture(release: str) -> None:
    report = _report(release, **EAGLE_ON_TRITON)
    gaps = RELEASES[release].verify.draft_window_gaps
    if not gaps or "MiMoV2ForCausalLM" not in gaps[0].targets:
        assert _draft_errors(report) == [], release
        return
    assert report.startup_reasons == ()  # SGLang starts it
    [failure] = [f for f in report.errors if f.rule == DRAFT_EXTEND_RULE]
    assert failure.enforced is Enforcement.WARMUP and failure.backend == "triton"
    kernel = gaps[0].kernel
    assert failure.raised_at == f"{kernel.file}:{kernel.line} ({kernel.function})"
    assert f"{gaps[0].capture.file}:{gaps[0].capture.line}" in failure.message
    assert failure.flags == ("--attention-backend", "--speculative-algorithm",
                             "--disable-cuda-graph")  # fmt: skip


def test_the_gap_covers_the_releases_the_wheels_show() -> None:
    """MiMo-V2 (MiMoV2ForCausalLM) is served from 0.5.11; 0.5.23 fills the window."""
    failing = [r for r in RELEASE_NAMES if _draft_errors(_report(r, **EAGLE_ON_TRITON))]
    assert failing[0] == "0.5.11" and "0.5.22" in failing and "0.5.23" not in failing


@pytest.mark.parametrize(
    "change",
    [
        {"sliding_window": False},  # no window in the config: the runner's is None
        {"disable_cuda_graph": True},  # no capture (the multi-layer draft's eager pass fills it)
        {"disable_hybrid_swa_memory": True},  # the draft is no hybrid sliding-window model
        {"enable_hierarchical_cache": True},  # which turns the hybrid pool off for MiMo-V2
        {"draft_model_architecture": "LlamaForCausalLMEagle3"},  # a draft of its own
        {"attention_backend": "flashinfer"},  # the draft extends on another backend
        {"speculative_draft_attention_backend": "flashinfer"},
        {"prefill_attention_backend": "flashinfer"},  # the draft extends on the prefill's
        {"model_architecture": "Qwen3ForCausalLM"},  # a draft SGLang runs without a window
    ],
)
def test_nothing_fails_where_the_draft_has_no_window_or_no_capture_on_triton(
    change: dict[str, Any],
) -> None:
    assert _draft_errors(_report("0.5.11", **EAGLE_ON_TRITON)) == ["triton"]
    assert _draft_errors(_report("0.5.11", **(EAGLE_ON_TRITON | change))) == []


def test_the_draft_extends_on_the_decode_backend_under_decode_mode() -> None:
    split = {"prefill_attention_backend": "flashinfer", "decode_attention_backend": "triton"}
    assert _draft_errors(_report("0.5.12", speculative_algorithm="EAGLE", **split)) == []
    decode = _report("0.5.12", speculative_algorithm="EAGLE", **split,
                     speculative_attention_mode="decode")  # fmt: skip
    [failure] = [f for f in decode.errors if f.rule == DRAFT_EXTEND_RULE]
    assert failure.flags[0] == "--decode-attention-backend"
    own = _report("0.5.12", speculative_algorithm="EAGLE", attention_backend="flashinfer",
                  speculative_draft_attention_backend="triton")  # fmt: skip
    [failure] = [f for f in own.errors if f.rule == DRAFT_EXTEND_RULE]
    assert failure.flags[0] == "--speculative-draft-attention-backend"


def test_the_renamed_draft_is_what_the_gap_reads() -> None:
    """A launch that names its draft's architecture (the inputs read it from the draft's
    config, or from SGLang's rename of the target's) is judged by it."""
    named = _report("0.5.11", **EAGLE_ON_TRITON, draft_model_architecture="MiMoV2MTP")
    assert _draft_errors(named) == ["triton"]
