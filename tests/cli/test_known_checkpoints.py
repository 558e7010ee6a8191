"""`--model-path ORG/NAME` of a checkpoint the package knows, with no local config and no
Hugging Face cache, is judged from the published config the zoo holds (#43)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from refusals import cli, refused

from compat.inputs.zoo import ZOO

LAUNCH = ["--", "python3", "-m", "sglang.launch_server", "--model-path"]


@pytest.fixture(autouse=True)
def _no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hf-home").mkdir()
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)  # no ORG/NAME directory here either


def test_the_readme_example_is_judged_from_the_published_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(
        ["check", "--gpu", "B200", *LAUNCH, "deepseek-ai/DeepSeek-R1",
         "--attention-backend", "trtllm_mla"],
        capsys,
    )  # fmt: skip
    assert code in (0, 1), err
    assert code == (0 if out.startswith("compatible") else 1)
    assert "runs as: MLA model" in out
    assert "model config: deepseek-ai/DeepSeek-R1's published config.json" in out
    assert "yours may differ" in out


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_known_checkpoint_is_judged_with_the_verdict_as_exit_code(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = ZOO[name].source
    code, out, err = cli(["check", "--json", "--gpu", "H100", *LAUNCH, source], capsys)
    assert code in (0, 1), err
    report = json.loads(out)
    assert code == (0 if report["ok"] else 1)
    assert report["published_config"] == source
    assert report["model_config"].startswith(source)


def test_an_unknown_repository_still_needs_its_architecture(
    capsys: pytest.CaptureFixture[str],
) -> None:
    refused(
        ["check", "--gpu", "H100", *LAUNCH, "acme/unknown-model"],
        capsys,
        "the model's attention architecture is unknown",
    )
