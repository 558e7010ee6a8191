"""Whole launch commands, GPU names and input errors, as an operator meets them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from paths import MODELS

from compat import AttentionConfig, IncompatibleConfigError, check, enforce
from compat.inputs.gpus import GPUS, gpu_named
from compat.vocab.terms import Platform

# triton's FP4 ❌ is undisputed (flashmla's is a disputed cell, a warning: `compat audit`).
DEEPSEEK = (
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 8 "
    "--attention-backend triton --kv-cache-dtype fp4_e2m1 --page-size 64 "
    "--speculative-algorithm EAGLE --speculative-eagle-topk 4"
)


def compat(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def hf_cache(tmp_path: Path) -> dict[str, str]:
    """An offline Hugging Face cache holding DeepSeek-R1's config in the snapshot layout."""
    repo = tmp_path / "hub" / "models--deepseek-ai--DeepSeek-R1"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd\n")
    shutil.copy(MODELS / "deepseek-r1" / "config.json", snapshot / "config.json")
    return {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}


def test_the_deepseek_command_gets_multi_flag_fixes_that_pass(hf_cache: dict[str, str]) -> None:
    result = compat("check", "--gpu", "b200", "--json", "--", *shlex.split(DEEPSEEK), env=hf_cache)
    assert result.returncode == 1, result.stdout
    data = json.loads(result.stdout)
    assert data["model_config"].endswith("snapshots/0123abcd/config.json")
    assert data["from_model_config"]["attention_arch"]["value"] == "mla"
    assert not any("--model-path" in flag for flag in data["ignored_flags"])
    multi = [s for s in data["suggestions"] if 2 <= s["changes"] <= 3]
    assert multi, data["suggestions"]
    for suggestion in data["suggestions"]:
        fixed = shlex.split(suggestion["command"])
        rerun = compat("check", "--gpu", "b200", "--", *fixed, env=hf_cache)
        assert rerun.returncode == 0, (suggestion, rerun.stdout)
    text = compat("check", "--gpu", "b200", "--", *shlex.split(DEEPSEEK), env=hf_cache)
    assert "corrected launch commands" in text.stdout
    assert "model config: " in text.stdout and "0123abcd" in text.stdout


def test_a_typo_in_the_launch_command_is_invalid() -> None:
    command = shlex.split(DEEPSEEK.replace("--attention-backend", "--atention-backend"))
    result = compat("check", "--gpu", "b200", "--attention-arch", "mla", "--", *command)
    assert result.returncode == 2
    assert "did you mean --attention-backend" in result.stderr


def test_a_hub_id_missing_from_the_cache_says_where_it_looked(tmp_path: Path) -> None:
    env = {"HF_HUB_CACHE": str(tmp_path)}
    result = compat("check", "--gpu", "h100", "--", *shlex.split(DEEPSEEK), env=env)
    assert result.returncode in (0, 1), result.stderr  # a checkpoint the package knows (#43)
    assert "model config: deepseek-ai/DeepSeek-R1's published config.json" in result.stdout
    with_arch = compat(
        "check", "--gpu", "h100", "--attention-arch", "mla", "--", *shlex.split(DEEPSEEK), env=env
    )
    assert "no local config.json in " in with_arch.stdout
    assert str(tmp_path) in with_arch.stdout


@pytest.mark.parametrize("model_path", ["~0", "~no-such-user-here/model"])
def test_a_model_path_with_an_unknown_home_is_not_found_locally(model_path: str) -> None:
    # `~user` of a user the machine does not have: Python cannot expand it (a fuzzer found
    # this as an internal error); it is a path that holds no config, as for SGLang.
    launch = ["--model-path", model_path, "--attention-backend", "fa3"]
    result = compat("check", "--gpu", "h100", "--attention-arch", "mha", "--", *launch)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    assert f"no config.json found locally (looked in {model_path})" in result.stdout


def test_flags_that_contradict_the_model_config_are_reported() -> None:
    result = compat(
        "check",
        "--gpu",
        "b200",
        "--model-config",
        str(MODELS / "deepseek-r1"),
        "--attention-arch",
        "mha",
        "--json",
    )
    data = json.loads(result.stdout)
    conflicts = [w for w in data["warnings"] if w["rule"] == "model-config-conflict"]
    assert len(conflicts) == 1
    assert conflicts[0]["value"] == "mha" and conflicts[0]["allowed"] == ["mla"]
    assert "kv_lora_rank" in conflicts[0]["message"]


def test_a_gpu_name_is_all_the_hardware_needed() -> None:
    result = compat(
        "check", "--gpu", "b200", "--attention-arch", "mla", "--attention-backend", "trtllm_mla"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "on cuda sm100;" in result.stdout and "(detected)" not in result.stdout


@pytest.mark.parametrize(
    ("value", "where"),
    [("9.0", "on cuda sm90;"), ("H100", "on cuda sm90;"), ("mi300x", "on rocm;")],
)
def test_a_compute_capability_alone_implies_its_platform(value: str, where: str) -> None:
    result = compat("check", "--compute-capability", value, "--attention-arch", "mha")
    assert result.returncode in (0, 1), result.stderr
    assert where in result.stdout and "(detected)" not in result.stdout


def test_unknown_gpu_gets_a_did_you_mean() -> None:
    result = compat("check", "--gpu", "b20O", "--attention-arch", "mla")
    assert result.returncode == 2
    assert "did you mean B200" in result.stderr


def test_gpu_names_cover_the_data_centre_lineup() -> None:
    for name in ("H100", "H200", "H20", "B200", "B300", "GB200", "RTX PRO 6000", "RTX 5090"):
        gpu = gpu_named(name.lower())
        assert gpu.platform is Platform.CUDA and gpu.capability is not None
    assert str(gpu_named("rtx-pro-6000").capability) == "sm120"
    assert str(gpu_named("B300").capability) == "sm103"
    assert {gpu_named(n).platform for n in ("MI300X", "MI355X")} == {Platform.ROCM}
    assert len({gpu.name.lower() for gpu in GPUS}) == len(GPUS)


def test_version() -> None:
    result = compat("--version")
    assert result.returncode == 0 and result.stdout.startswith("compat ")


@pytest.mark.parametrize(
    "args",
    [
        ("--attention-arch", "mla", "--kv-cache-dtype", "fp8"),
        ("--attention-arch", "mla", "--platform", "cuda", "--bogus"),
        ("--attention-arch", "mla", "--gpu", "nope"),
    ],
)
def test_json_errors_go_to_stdout(args: tuple[str, ...]) -> None:
    result = compat("check", *args, "--json")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["message"]


def test_a_dtype_prefix_names_both_choices() -> None:
    result = compat("check", "--attention-arch", "mla", "--gpu", "h100", "--kv-cache-dtype", "fp8")
    assert result.returncode == 2
    assert "did you mean fp8_e5m2 or fp8_e4m3" in result.stderr


def test_explain_prints_plain_text() -> None:
    result = compat("explain", "fa4")
    assert result.returncode == 0
    assert "kv4-fa4-decode-partner" in result.stdout and "`" not in result.stdout


def test_enforce_error_says_what_would_run() -> None:
    args = SimpleNamespace(attention_backend="triton", kv_cache_dtype="fp4_e2m1")
    with pytest.raises(IncompatibleConfigError) as raised:
        enforce(args, attention_arch="mla", platform="cuda", compute_capability=(10, 0))
    assert "runs as: MLA model on cuda sm100; backend triton; KV fp4_e2m1" in str(raised.value)


def test_suggestions_are_ranked_by_size_then_sglang_preference() -> None:
    # triton's FP4 ❌ is undisputed (flashmla's is a disputed cell: a warning, `compat audit`)
    report = check(
        AttentionConfig(
            attention_arch="mla",
            attention_backend="triton",
            kv_cache_dtype="fp4_e2m1",
            speculative_algorithm="EAGLE",
            speculative_eagle_topk=4,
            platform="cuda",
            compute_capability=(10, 0),
        )
    )
    sizes = [s.changes for s in report.suggestions]
    assert sizes == sorted(sizes) and min(sizes) >= 2
    # SGLang's own default for MLA on sm100 leads the backend changes
    unset = AttentionConfig(attention_arch="mla", platform="cuda", compute_capability=(10, 0))
    default = check(unset).resolved.prefill_backend
    first = report.suggestions[0]
    assert ("--attention-backend", default) in first.flags


@pytest.mark.parametrize(
    "args", [("explain", "fa5", "--json"), ("matrix", "--kv-cache-dtype", "fp8", "--json")]
)
def test_other_commands_print_json_errors_too(args: tuple[str, ...]) -> None:
    result = compat(*args)
    assert result.returncode == 2
    assert "did you mean" in json.loads(result.stdout)["error"]["message"]
