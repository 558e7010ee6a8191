"""enforce()'s refusal: what it carries, and what it costs to raise."""

from __future__ import annotations

import json
from pathlib import Path
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


def _glm_flash_mtp(release: str, **paths: str) -> SimpleNamespace:
    """GLM-4.7-Flash's ServerArgs with its MTP draft (NEXTN) on trtllm_mla."""
    return SimpleNamespace(
        attention_backend="trtllm_mla",
        speculative_algorithm="NEXTN",
        speculative_eagle_topk=1,
        speculative_num_steps=3,
        speculative_num_draft_tokens=4,
        page_size=64,
        **paths,
    )


_GLM_FLASH = {
    "attention_arch": "mla",
    "model_architecture": "Glm4MoeLiteForCausalLM",
    "platform": "cuda",
    "compute_capability": (10, 0),
}


def test_enforce_runs_a_draft_of_the_target_checkpoint_as_the_release_renames_it() -> None:
    # SGLang 0.5.10 builds the MTP draft from the target's checkpoint as
    # Glm4MoeForCausalLMNextN, an MHA model: the inherited trtllm_mla refuses it after the
    # weights load. The ServerArgs name the checkpoints: no draft path of its own (or the
    # target's) is the target's checkpoint, as `compat check` reads a launch command.
    for paths in ({"model_path": "zai-org/GLM-4.7-Flash"},
                  {"model_path": "zai-org/GLM-4.7-Flash",
                   "speculative_draft_model_path": "zai-org/GLM-4.7-Flash"}):  # fmt: skip
        args = _glm_flash_mtp("0.5.10", **paths)
        with pytest.raises(IncompatibleConfigError, match="for the draft model"):
            enforce(args, parity=True, log=False, sglang_version="0.5.10", **_GLM_FLASH)
        report = enforce(args, log=False, sglang_version="0.5.13", **_GLM_FLASH)
        assert report.config.draft_attention_arch == "mla"
    # Stated, the draft's attention wins; without the paths nothing says whose the draft is.
    args = _glm_flash_mtp("0.5.10", model_path="zai-org/GLM-4.7-Flash")
    enforce(args, parity=True, log=False, sglang_version="0.5.10", draft_attention_arch="mla",
            **_GLM_FLASH)  # fmt: skip
    enforce(_glm_flash_mtp("0.5.10"), parity=True, log=False, sglang_version="0.5.10", **_GLM_FLASH)


def test_enforce_reads_the_config_of_a_draft_of_its_own(tmp_path: Path) -> None:
    # An EAGLE3 draft with its own checkpoint: its config.json says MHA, so the MLA
    # target's trtllm_mla, which the draft inherits, fails building it.
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
                    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096})
    )  # fmt: skip
    args = SimpleNamespace(
        attention_backend="trtllm_mla", speculative_algorithm="EAGLE3", speculative_eagle_topk=1,
        speculative_num_steps=3, speculative_num_draft_tokens=4, page_size=64,
        model_path="deepseek-ai/DeepSeek-R1", speculative_draft_model_path=str(draft),
    )  # fmt: skip
    mla = {"attention_arch": "mla", "model_architecture": "DeepseekV3ForCausalLM"}
    machine = {"platform": "cuda", "compute_capability": (10, 0), "sglang_version": "0.5.11"}
    with pytest.raises(IncompatibleConfigError, match="for the draft model"):
        enforce(args, parity=True, log=False, **mla, **machine)
    args.speculative_draft_attention_backend = "flashinfer"
    assert enforce(args, parity=True, log=False, **mla, **machine).config.draft_attention_arch == (
        "mha"
    )
