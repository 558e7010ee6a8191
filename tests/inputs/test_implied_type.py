"""A launch given only an architecture gets its config type from the release's own code.

SGLang's backend build keys on the model's config class (the hybrid GDN allow-list on
Blackwell); `--model-architecture NAME` alone has no config.json to say which. The type the
release's model for NAME takes (`compat.engine.models.config_types`, read from each wheel
by tools/arch_types.py and held against it by tests/engine/test_config_types.py) stands in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat import check
from compat.engine.models.config_types import config_type
from compat.guard.build_words import is_build_finding
from compat.guard.report import Report
from compat.inputs.assemble import Assembled, LaunchRequest, assemble
from compat.inputs.zoo import ZOO, launch_fields
from compat.releases import RELEASE_NAMES, RELEASES

LAUNCHER = ("python3", "-m", "sglang.launch_server")
# Hopper, SM100- and SM103-class Blackwell, an SM120-class part: where the allow-lists differ.
GPUS = ("H200", "B200", "B300", "RTX PRO 6000")


def _assembled(release: str, gpu: str, flags: tuple[str, ...], **model: Any) -> Assembled:
    request = LaunchRequest(
        command=(*LAUNCHER, *flags), gpu=gpu, detect=False, sglang_version=release, **model
    )
    return assemble(request)


def _build(report: Report) -> list[tuple[str, str]]:
    return [(f.rule, f.message) for f in report.errors if is_build_finding(f)]


def _typed_zoo() -> list[tuple[str, str, str]]:
    """(zoo model, its architecture, release) wherever the release's code types it."""
    cases = []
    for name, model in ZOO.items():
        architecture = model.config["architectures"][0]
        cases += [
            (name, architecture, release)
            for release in RELEASE_NAMES
            if config_type(release, architecture) is not None
        ]
    return cases


TYPED_ZOO = _typed_zoo()


def test_some_zoo_model_is_typed_by_its_architecture() -> None:
    # Qwen3-Next is a hybrid GDN model in every release.
    assert {name for name, _, _ in TYPED_ZOO} >= {"Qwen3-Next-80B-A3B"}


@pytest.mark.parametrize(("name", "architecture", "release"), TYPED_ZOO)
def test_the_architecture_alone_builds_as_the_published_config_does(
    name: str, architecture: str, release: str
) -> None:
    model = ZOO[name]
    # What the release's code types the architecture as is what the checkpoint ships.
    typed = config_type(release, architecture)
    assert typed is not None and typed.model_type == model.config["model_type"]
    card = tuple(f"--{key.replace('_', '-')}" for key in launch_fields(model))
    failing = 0
    for gpu in GPUS:
        for backend in RELEASES[release].backend_choices:
            flags = ("--attention-backend", backend, *card)
            published = check(_assembled(release, gpu, flags, known_model=name).config)
            alone = _assembled(release, gpu, flags, model={"model_architecture": architecture})
            assert alone.config.model_type == model.config["model_type"]
            assert _build(check(alone.config)) == _build(published), (gpu, backend)
            failing += bool(_build(published))
    # Blackwell refuses some backend for a hybrid GDN model in every release.
    assert failing


def _answer(release: str, gpu: str, backend: str, architecture: str) -> Report:
    flags = ("--attention-backend", backend)
    return check(_assembled(release, gpu, flags, model={"model_architecture": architecture}).config)


def test_issue_35080_qwen3_5_moe_on_a_b300_fails_building_flashinfer_and_runs_triton() -> None:
    # sgl-project/sglang#35080: Qwen/Qwen3.5-35B-A3B on a B300 (sm103), SGLang 0.5.18.
    architecture = "Qwen3_5MoeForConditionalGeneration"
    flashinfer = _answer("0.5.18", "B300", "flashinfer", architecture)
    assert not flashinfer.refused_at_startup
    assert [rule for rule, _ in _build(flashinfer)] == ["build-hybrid-gdn-blackwell"]
    assert "attention_registry.py:398" in _build(flashinfer)[0][1]
    assert flashinfer.sglang_fails
    triton = _answer("0.5.18", "B300", "triton", architecture)
    assert not _build(triton) and not triton.sglang_fails


def test_the_report_says_where_the_type_came_from() -> None:
    architecture = "Qwen3_5MoeForConditionalGeneration"
    assembled = _assembled("0.5.18", "B300", (), model={"model_architecture": architecture})
    fact = assembled.context["from_model_config"]["model_type"]
    assert fact["value"] == "qwen3_5_moe"
    assert "sglang/srt/models/qwen3_5.py:" in fact["why"]
    assert "sglang/srt/configs/qwen3_5.py:" in fact["why"]
    assert assembled.context["model_config"].startswith("none; SGLang 0.5.18's own code")


def test_qwen3_5_is_not_typed_before_the_release_that_serves_it() -> None:
    # 0.5.8 has no Qwen3.5 model: the architecture is not served, so not typed either.
    assert config_type("0.5.8", "Qwen3_5MoeForConditionalGeneration") is None
    assert config_type("0.5.9", "Qwen3_5MoeForConditionalGeneration") is not None


@pytest.mark.parametrize(
    "architecture",
    [
        "LlamaForCausalLM",  # typed, but no build check reads llama: not kept
        "MiniCPMForCausalLM",  # an untyped `config`: MiniCPM's own and its hybrid one
        "InternS2PreviewForConditionalGeneration",  # inherits its parent's __init__
    ],
)
def test_an_architecture_without_one_kept_type_adds_nothing(architecture: str) -> None:
    assembled = _assembled("0.5.23", "B200", (), model={"model_architecture": architecture})
    assert assembled.config.model_type is None
    assert "model_type" not in assembled.context["from_model_config"]
    assert "model_config" not in assembled.context


def test_a_stated_type_or_a_read_config_is_never_replaced(tmp_path: Path) -> None:
    architecture = "Qwen3NextForCausalLM"
    stated = {"model_architecture": architecture, "model_type": "llama"}
    assert _assembled("0.5.23", "B200", (), model=stated).config.model_type == "llama"
    # A config.json without a model_type is what it is: the file, not the code, is read.
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": [architecture], "num_key_value_heads": 2}))
    read = _assembled("0.5.23", "B200", (), model_config=str(config))
    assert read.config.model_architecture == architecture and read.config.model_type is None
    assert "model_type" not in read.context["from_model_config"]


def test_a_newer_release_is_answered_by_the_newest_wheel_read() -> None:
    newest = RELEASE_NAMES[-1]
    major, minor, patch = newest.split(".")
    newer = config_type(f"{major}.{minor}.{int(patch) + 1}", "Qwen3NextForCausalLM")
    assert newer == config_type(newest, "Qwen3NextForCausalLM")
    assert newer is not None and newer.release == newest
    assert config_type("0.5.6", "Qwen3NextForCausalLM") is None


def test_glm5_alone_is_sparse_attention_as_its_config_class_says() -> None:
    # sgl-project/sglang#26087: GLM-5.1 on RTX PRO 6000s, 0.5.12. SGLang's DSA test is the
    # architecture and `index_topk`; the transformers 0.5.12 pins defaults it.
    architecture = "GlmMoeDsaForCausalLM"
    assembled = _assembled("0.5.12", "RTX PRO 6000", (), model={"model_architecture": architecture})
    assert assembled.config.sparse_attention is True
    fact = assembled.context["from_model_config"]["sparse_attention"]
    assert "configuration_glm_moe_dsa.py:" in fact["why"] and "transformers 5.6.0" in fact["why"]
    assert assembled.config.model_type == "glm_moe_dsa"
    stated = {"model_architecture": architecture, "sparse_attention": False}
    assert _assembled("0.5.12", "B200", (), model=stated).config.sparse_attention is False


def test_an_architecture_whose_class_defaults_no_indexer_stays_dense() -> None:
    model = {"model_architecture": "Qwen3NextForCausalLM"}
    assembled = _assembled("0.5.23", "B200", (), model=model)
    assert not assembled.config.sparse_attention
    assert "sparse_attention" not in assembled.context["from_model_config"]


def test_a_stated_type_without_an_indexer_says_no_code_was_read() -> None:
    # Nothing added from the release's code: the provenance line stays unsaid.
    stated = {"model_architecture": "Qwen3NextForCausalLM", "model_type": "qwen3_next"}
    assembled = _assembled("0.5.23", "B200", (), model=stated)
    assert "model_config" not in assembled.context
    said = assembled.context["from_model_config"]
    assert "model_type" not in said and "sparse_attention" not in said
