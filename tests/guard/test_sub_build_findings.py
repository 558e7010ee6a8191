"""The guard words a sub-backend SGLang refuses while it builds the launch, and fixes it.

The finding names the flag as the release spells it, the value, the release's `file:line`
and function, and the fix; it is enforced at the backend build (`--parity` refuses it); the
fixes offered change the flag and each passes the guard.
"""

from __future__ import annotations

import pytest

from compat import check
from compat.engine.build import BuildCheck
from compat.guard.report import Enforcement, Finding
from compat.guard.sub_fixes import accepted_here
from compat.inputs.config import AttentionConfig
from compat.releases import RELEASES

B200 = {"platform": "cuda", "compute_capability": "10.0"}
VISION = {"attention_arch": "mha", "multimodal": True, "attention_backend": "triton"}


def _sub_findings(config: AttentionConfig) -> list[Finding]:
    return [f for f in check(config).findings if f.rule == BuildCheck.SUB_BACKEND.rule]


@pytest.mark.parametrize("version", ["0.5.7", "0.5.12", "0.5.23"])
def test_fa3_for_the_vision_encoder_on_blackwell_is_a_build_error(version: str) -> None:
    config = AttentionConfig(sglang_version=version, mm_attention_backend="fa3", **B200, **VISION)
    report = check(config)
    (finding,) = [f for f in report.findings if f.rule == BuildCheck.SUB_BACKEND.rule]
    line = next(c.line for c in RELEASES[version].build.sub_checks if c.value == "fa3")
    assert finding.enforced is Enforcement.BACKEND_BUILD
    assert finding.flags == ("--mm-attention-backend",) and finding.value == "fa3"
    assert f"sglang/srt/layers/attention/vision.py:{line}" in finding.message
    assert "VisionAttention._determine_attention_backend" in finding.message
    assert "leave --mm-attention-backend unset" in finding.message
    assert report.sglang_fails
    # The fixes change the flag, and each passes.
    assert report.suggestions
    for suggestion in report.suggestions:
        touched = {flag for flag, _ in suggestion.flags} | set(suggestion.removes)
        assert "--mm-attention-backend" in touched
        fields = {"mm_attention_backend": dict(suggestion.flags).get("--mm-attention-backend")}
        fixed = AttentionConfig(sglang_version=version, **B200, **{**VISION, **fields})
        assert not check(fixed).errors


def test_the_dsa_finding_names_the_older_spelling_where_the_release_has_only_it() -> None:
    # 0.5.16 takes both spellings; its finding names the modelled one.
    dsa = {"attention_arch": "mla", "sparse_attention": True, "attention_backend": "dsa"}
    config = AttentionConfig(sglang_version="0.5.16", dsa_prefill_backend="flashmla_sparse_q8",
                             **B200, **dsa)  # fmt: skip
    (finding,) = _sub_findings(config)
    assert "--dsa-prefill-backend flashmla_sparse_q8 needs a sm9x GPU" in finding.message
    assert "DeepseekSparseAttnBackend.__init__" in finding.message


def test_the_names_a_fix_may_set_are_those_no_check_refuses_here() -> None:
    config = AttentionConfig(sglang_version="0.5.23", mm_attention_backend="fa3", **B200, **VISION)
    accepted = accepted_here(config.parsed, "mm_attention_backend")
    choices = RELEASES["0.5.23"].sub_choices["mm_attention_backend"]
    assert "fa3" not in accepted and "aiter_attn" not in accepted
    assert {"sdpa", "triton_attn", "fa4"} <= set(accepted) < set(choices)


def test_a_launch_without_the_part_has_no_sub_backend_finding() -> None:
    no_vision = {**VISION, "multimodal": False}
    config = AttentionConfig(
        sglang_version="0.5.23", mm_attention_backend="fa3", **B200, **no_vision
    )
    assert _sub_findings(config) == []


def test_a_start_up_refusal_of_a_sub_backend_names_flag_value_line_and_fix() -> None:
    h200 = {"attention_arch": "mha", "platform": "cuda", "compute_capability": "9.0"}
    config = AttentionConfig(sglang_version="0.5.23", linear_attn_decode_backend="flashkda", **h200)
    report = check(config)
    (finding,) = [f for f in report.findings if f.rule == "startup-linear-decode-flashkda"]
    at = next(
        a for a in RELEASES["0.5.23"].sub_refusals if a.check.value == "linear-decode-flashkda"
    )
    assert finding.enforced is Enforcement.STARTUP
    assert finding.flags == ("--linear-attn-decode-backend",) and finding.value == "flashkda"
    assert f"{at.file}:{at.line}" in finding.message and at.function in finding.message
    assert "leave --linear-attn-decode-backend unset" in finding.message
    assert report.refused_at_startup
    # A verified fix unsets or changes the flag.
    assert report.suggestions
    assert any("--linear-attn-decode-backend" in s.removes for s in report.suggestions)
