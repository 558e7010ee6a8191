"""The package's model zoo as operators name it: `compat check --model NAME` and
`AttentionConfig.from_known_model` judge a published checkpoint from its own config.json."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat import AttentionConfig, check
from compat.inputs.zoo import (
    ZOO,
    UnknownModelError,
    known_model,
    known_model_facts,
    launch_fields,
)
from compat.releases import NEWEST, RELEASES


def _compat(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.mark.parametrize("name", list(ZOO))
def test_a_known_model_is_its_config_read_as_a_file(name: str, tmp_path: Path) -> None:
    """The same facts as `--model-config` on the published config.json, written to disk."""
    model = ZOO[name]
    (tmp_path / "config.json").write_text(json.dumps(model.config))
    models = RELEASES[NEWEST].models
    from_file = AttentionConfig.from_model_config(tmp_path, sglang_version=NEWEST)
    known = AttentionConfig.from_known_model(name, sglang_version=NEWEST)
    expected = dataclasses.replace(from_file, **launch_fields(model))
    assert known == expected
    assert known_model_facts(name, models).config_fields().items() <= vars(known).items()


def test_a_model_is_named_by_its_key_or_repository_in_any_case() -> None:
    assert known_model("GPT-OSS-120B") == ("gpt-oss-120b", ZOO["gpt-oss-120b"])
    assert known_model("openai/gpt-oss-120b")[0] == "gpt-oss-120b"
    assert known_model(" moonshotai/kimi-k2-instruct ")[0] == "Kimi-K2-Instruct"


def test_an_unknown_model_gets_a_did_you_mean_and_every_choice() -> None:
    with pytest.raises(UnknownModelError) as error:
        known_model("gpt-os-120b")
    message = str(error.value)
    assert "'gpt-os-120b'; did you mean gpt-oss-120b?" in message
    assert all(name in message for name in ZOO) and "--model-config" in message
    # Not a string, or a very long one: named, cut to one line, never a traceback.
    for bad in (123, None, "x" * 500):
        with pytest.raises(UnknownModelError, match="no known model") as error:
            AttentionConfig.from_known_model(bad)  # type: ignore[arg-type]
        assert len(str(error.value).split(" (known models")[0]) < 120


def test_the_flags_of_the_model_card_come_with_the_model() -> None:
    """Kimi-K2's config names remote code; its card launches it with --trust-remote-code,
    without which SGLang refuses it."""
    kimi = AttentionConfig.from_known_model("Kimi-K2-Instruct", sglang_version=NEWEST)
    assert kimi.remote_code and kimi.trust_remote_code
    assert launch_fields(ZOO["gpt-oss-120b"]) == {}
    # Explicit keyword arguments win over what the model implies.
    plain = AttentionConfig.from_known_model(
        "Kimi-K2-Instruct", sglang_version=NEWEST, trust_remote_code=False
    )
    assert not plain.trust_remote_code


def test_compat_check_model_applies_the_gpt_oss_backend_list_on_b200() -> None:
    """gpt-oss on B200 with flashinfer: SGLang's own GPT-OSS branch refuses it; the fixes
    name the backends the branch allows."""
    result = _compat(
        "check", "--sglang-version", NEWEST, "--model", "gpt-oss-120b", "--gpu", "B200",
        "--attention-backend", "flashinfer",
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[startup-gpt-oss-backends]" in result.stdout
    assert "openai/gpt-oss-120b's published config.json (--model gpt-oss-120b)" in result.stdout
    assert "--attention-backend trtllm_mha" in result.stdout
    # The generic MHA launch on the same machine passes: the refusal is the model's own.
    assert check(
        AttentionConfig(
            sglang_version=NEWEST, attention_arch="mha", platform="cuda",
            compute_capability=(10, 0), attention_backend="flashinfer",
        )
    ).ok  # fmt: skip


def test_compat_check_model_refuses_a_typo_and_a_second_model_source(tmp_path: Path) -> None:
    typo = _compat("check", "--model", "gpt-os-120b", "--gpu", "B200")
    assert typo.returncode == 2
    assert "did you mean gpt-oss-120b?" in typo.stderr
    (tmp_path / "config.json").write_text(json.dumps(ZOO["Qwen3-8B"].config))
    both = _compat("check", "--model", "gpt-oss-120b", "--model-config", str(tmp_path))
    assert both.returncode == 2
    assert "--model and --model-config both name the model; give one" in both.stderr
