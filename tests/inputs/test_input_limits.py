"""Input limits and input errors (#23 L8, L9, L12, L13, L14, L16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import MODELS
from refusals import cli

from compat import AttentionConfig, InvalidConfigError, ModelConfigError, enforce
from compat.inputs.bounded_json import MAX_BYTES, MAX_VALUES
from compat.inputs.hf_cache import locate_model_config

LLAMA = MODELS / "llama-3.1-8b-instruct" / "config.json"
ORG_MODEL = "acme/model"


def _cache(tmp_path: Path, refs_main: str) -> Path:
    """An HF cache holding acme/model with one snapshot, and a config outside it."""
    repo = tmp_path / "hub" / "models--acme--model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(LLAMA.read_text())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(refs_main)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text('{"architectures": ["Evil"]}')
    return repo


@pytest.mark.parametrize("refs_main", ["../../../outside", "{outside}", "/etc"])
def test_l8_refs_main_is_never_read_as_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refs_main: str
) -> None:
    repo = _cache(tmp_path, refs_main.format(outside=tmp_path / "outside"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    located = locate_model_config(ORG_MODEL)
    assert located.config == repo / "snapshots" / ("a" * 40) / "config.json"


def test_l8_refs_main_naming_a_commit_or_a_snapshot_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _cache(tmp_path, "b" * 40)
    newer = repo / "snapshots" / ("b" * 40)
    newer.mkdir()
    (newer / "config.json").write_text(LLAMA.read_text())
    os.utime(repo / "snapshots" / ("a" * 40) / "config.json", (2e9, 2e9))  # the newest file
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert locate_model_config(ORG_MODEL).config == newer / "config.json"


def test_l9_millions_of_tiny_arrays_under_16_mib_are_refused_fast(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    count = (MAX_BYTES - 64) // 4
    path.write_text('{"architectures": ["X"], "a": [' + ",".join(["[1]"] * count) + "]}")
    started = time.perf_counter()
    with pytest.raises(ModelConfigError, match=f"over the limit of {MAX_VALUES}"):
        AttentionConfig.from_model_config(path)
    assert time.perf_counter() - started < 2  # it took 11.4 s and 763 MB


def test_l9_commas_and_brackets_inside_strings_are_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    data = json.loads(LLAMA.read_text())
    data["note"] = "[{," * MAX_VALUES
    path.write_text(json.dumps(data))
    assert AttentionConfig.from_model_config(path).model_architecture == "LlamaForCausalLM"


@pytest.mark.parametrize("command", ["check", "matrix"])
def test_l12_an_empty_model_config_is_invalid_input_in_every_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli([command, "--model-config", "", "--platform", "cuda"], capsys)
    assert code == 2, out + err
    assert "--model-config: an empty path" in err


def test_l12_an_empty_model_config_is_refused_by_the_api() -> None:
    with pytest.raises(ModelConfigError, match="an empty path"):
        AttentionConfig.from_model_config("")


def test_l13_enforce_without_an_architecture_is_a_value_error_with_the_fix() -> None:
    with pytest.raises(InvalidConfigError) as raised:
        enforce({"attention_backend": "fa3"}, platform="cuda", compute_capability=(9, 0))
    assert isinstance(raised.value, ValueError)
    assert "attention_arch='mha' or 'mla'" in str(raised.value)
    assert raised.value.problems[0].choices == ("mha", "mla")


def test_l13_enforce_with_a_text_page_size_raises_what_the_contract_names() -> None:
    with pytest.raises(InvalidConfigError, match="--page-size: expected a positive integer"):
        enforce({"page_size": "sixteen"}, attention_arch="mha", platform="cuda")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--json", "--platform", "cuda", "--attention-arch", "mha", "--", "a\udcff b"],
        ["check", "--json", "--platform", "cuda", "--attention-arch", "mha", "--", "--x\udcff"],
        ["check", "--json", "--platform", "cuda", "--attention-backend", "fa3\udcfe"],
        ["matrix", "--json", "--attention-backend", "\udcff"],
    ],
)
def test_l14_json_output_is_valid_utf8_whatever_the_arguments(argv: list[str]) -> None:
    arguments = [os.fsencode(arg) for arg in argv]  # the raw bytes a shell passes
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"compat", *arguments],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONUTF8": "1"},
    )
    assert done.returncode in (0, 1, 2), done.stderr
    text = done.stdout.decode("utf-8")  # strict: raises on raw bytes
    json.loads(text)
    assert "\\udcff" in text or "\\udcfe" in text  # the byte, escaped: it reads back


def test_l16_a_bad_platform_is_reported_with_a_model_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    argv = ["check", "--platform", "cdua", "--model-config", str(missing)]
    code, _, err = cli([*argv, "--gpu", "H999", "--page-size", "x"], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    for needle in ("no such file", "--platform: unknown value 'cdua'", "did you mean cuda",
                   "--gpu: ", "--page-size: expected a positive integer"):  # fmt: skip
        assert needle in err, err


# Hostile bodies of 16 MiB: an unterminated string of escaped quotes (quadratic before #42
# M1: 143 s for 0.68 MB), of escaped quotes and commas, and commas in one string followed by
# millions of empty strings.
_HOSTILE_BODIES = {
    "escaped quotes": b'{"a": "' + b'\\"' * ((MAX_BYTES - 8) // 2),
    "escaped quotes and commas": b'{"a": "' + b'\\",' * ((MAX_BYTES - 8) // 3),
    "empty strings": b'{"a": "' + b"," * (MAX_VALUES + 1) + b'"' * (MAX_BYTES // 2),
}


@pytest.mark.parametrize("kind", sorted(_HOSTILE_BODIES))
def test_m1_a_16_mib_hostile_string_is_refused_in_one_linear_pass(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(_HOSTILE_BODIES[kind])
    started = time.perf_counter()
    with pytest.raises(ModelConfigError, match=r"not valid JSON|over the limit"):
        AttentionConfig.from_model_config(path)
    assert time.perf_counter() - started < 2  # generous: about 0.1-0.8 s on two busy cores
