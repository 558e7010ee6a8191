"""A draft whose config.json cannot be read: an EAGLE3 draft runs as the EAGLE3 draft classes
the release registers run, where they agree; otherwise, and for other algorithms, the draft
is taken to be the target's. `--draft-attention-arch` and a readable config win."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.engine.models.eagle3_drafts import eagle3_attention, eagle3_drafts
from compat.inputs.assemble import LaunchRequest, assemble
from compat.inputs.unread_draft import is_eagle3
from compat.releases import RELEASE_NAMES

LAUNCH = ("python3", "-m", "sglang.launch_server", "--model-path", "org/model")
DRAFT = "org/not-a-local-draft"
# The releases whose EAGLE3 draft classes all run with one attention, and those that do not.
AGREED = [release for release in RELEASE_NAMES if eagle3_attention(release) is not None]
DIFFER = [release for release in RELEASE_NAMES if eagle3_attention(release) is None]


@pytest.fixture(autouse=True)
def _nothing_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache


def _assemble(
    release: str, algorithm: str = "EAGLE3", *flags: str, **model: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    command = (*LAUNCH, "--speculative-algorithm", algorithm, *flags)
    if "--speculative-draft-model-path" not in flags:
        command += ("--speculative-draft-model-path", DRAFT)
    request = LaunchRequest(
        command=command,
        detect=False,
        gpu="B200",
        sglang_version=release,
        model={"attention_arch": "mla", **model},
    )
    assembled = assemble(request)
    return vars(assembled.config), assembled.context


def _note(context: dict[str, Any]) -> str:
    (note,) = [n for n in context["launch_notes"] if DRAFT in n]
    assert "--draft-model-config PATH" in note and "--draft-attention-arch" in note
    return str(note)


def test_the_releases_split_as_their_wheels_do() -> None:
    assert "0.5.10" in AGREED and {"0.5.12", "0.5.23"} <= set(DIFFER)


@pytest.mark.parametrize("release", AGREED)
def test_an_eagle3_draft_runs_as_the_release_s_only_eagle3_attention(release: str) -> None:
    config, context = _assemble(release)
    (row,) = eagle3_drafts(release)  # one class (LlamaForCausalLMEagle3) up to 0.5.11
    assert row.attention is not None
    value, line = row.attention
    assert config["draft_attention_arch"] == value.lower() == "mha"
    source = context["draft_model_config"]
    assert source["flag"] == "--speculative-draft-model-path"
    assert f"SGLang {release}" in source["source"] and row.where in source["source"]
    assert "was not read" in source["source"]
    assert source["architecture"] == row.architecture
    assert f"configs/model_config.py:{line} sets attention_arch MHA" in source["why"]
    note = _note(context)
    assert "taken to run as MHA" in note and row.architecture in note and row.where in note


@pytest.mark.parametrize("release", DIFFER)
def test_where_the_classes_differ_the_draft_is_the_target_s(release: str) -> None:
    config, context = _assemble(release)
    assert config["draft_attention_arch"] is None
    assert "draft_model_config" not in context
    note = _note(context)
    assert "assumed to be the target's" in note and "the checkpoint decides" in note
    rows = eagle3_drafts(release)
    assert len(rows) == 2 and all(f"{r.architecture} ({r.where}" in note for r in rows)


def test_the_algorithm_is_read_as_the_release_reads_it() -> None:
    # Argparse compares the spelling up to 0.5.11; later start-up upper-cases it.
    assert is_eagle3("EAGLE3", "0.5.10") and not is_eagle3("eagle3", "0.5.10")
    assert is_eagle3("eagle3", "0.5.12") and is_eagle3("Eagle3", "0.5.23")
    assert not any(is_eagle3(name, "0.5.12") for name in ("EAGLE", "NEXTN", "STANDALONE"))
    assert not is_eagle3("EAGLE3", "0.4.0")  # not a release the package models
    _, context = _assemble("0.5.12", "eagle3")
    assert "EAGLE3 draft classes" in _note(context)


@pytest.mark.parametrize("algorithm", ["EAGLE", "STANDALONE", "NEXTN"])
def test_other_algorithms_take_the_target_s_architecture(algorithm: str) -> None:
    config, context = _assemble("0.5.10", algorithm)
    assert config["draft_attention_arch"] is None
    assert "draft_model_config" not in context
    note = _note(context)
    assert "assumed to be the target's" in note and "Eagle3" not in note


def test_the_stated_draft_architecture_wins() -> None:
    config, context = _assemble("0.5.10", draft_attention_arch="mla")
    assert config["draft_attention_arch"] == "mla"
    assert "draft_model_config" not in context
    (note,) = [n for n in context["launch_notes"] if DRAFT in n]
    assert "--draft-attention-arch mla is used" in note


def test_a_readable_draft_config_wins(tmp_path: Path) -> None:
    mla = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
    (tmp_path / "config.json").write_text(json.dumps({**mla, "kv_lora_rank": 512}))
    path = ("--speculative-draft-model-path", str(tmp_path))
    config, context = _assemble("0.5.10", "EAGLE3", *path)
    assert config["draft_attention_arch"] == "mla"
    assert context["draft_model_config"]["source"] == str(tmp_path / "config.json")
    assert not any(str(tmp_path) in note for note in context.get("launch_notes", ()))
