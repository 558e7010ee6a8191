"""enforce()'s refusal: what it carries, and what it costs to raise."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compat import IncompatibleConfigError, enforce


def test_a_refusal_searches_its_fixes_only_when_its_message_is_read() -> None:
    """enforce()'s refusal words its fixes on first use: catching it costs no fix search
    (hundreds of guard runs), reading it gives every error and every fix."""
    args = SimpleNamespace(
        attention_backend="torch_native", speculative_algorithm="EAGLE",
        speculative_eagle_topk=1, speculative_num_steps=3, speculative_num_draft_tokens=4,
    )  # fmt: skip
    with pytest.raises(IncompatibleConfigError) as raised:
        enforce(args, attention_arch="mla", platform="cuda", compute_capability=(10, 0))
    report = raised.value.report
    assert "suggestions" not in vars(report)  # cached_property: not computed yet
    message = str(raised.value)
    assert "suggestions" in vars(report)
    assert report.suggestions and all(
        f"try: {s.summary}  ({s.reason})" in message for s in report.suggestions
    )
    assert all(f"[{f.rule}] {f.message}" in message for f in report.errors)
    assert message == str(raised.value) == raised.value.message


def test_enforce_builds_the_draft_for_the_draft_model_architecture() -> None:
    # SGLang's ServerArgs holds no draft ModelConfig: an MHA EAGLE3 draft of an MLA model
    # is stated, and with parity the draft's failing build on trtllm_mla refuses the launch.
    args = SimpleNamespace(
        attention_backend="trtllm_mla",
        speculative_algorithm="EAGLE3",
        speculative_eagle_topk=1,
        speculative_num_steps=3,
        speculative_num_draft_tokens=4,
        page_size=64,
    )
    machine = {"platform": "cuda", "compute_capability": (10, 0), "sglang_version": "0.5.11"}
    mla = {"attention_arch": "mla", "model_architecture": "DeepseekV3ForCausalLM", **machine}
    enforce(args, parity=True, log=False, **mla)
    with pytest.raises(IncompatibleConfigError, match="for the draft model"):
        enforce(args, parity=True, log=False, draft_attention_arch="mha", **mla)
    args.speculative_draft_attention_backend = "flashinfer"
    enforce(args, parity=True, log=False, draft_attention_arch="mha", **mla)
