"""Hostile and unlucky input to `compat check` and `compat launch`, round 4 (#42 M2, M7, M8,
L1-L4, L6, L10, L11): each is exit 2 with one line naming the bad value, or judged and said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from paths import MODELS
from refusals import MHA, cli, refused

LLAMA = MODELS / "llama-3.1-8b-instruct" / "config.json"
H100 = ["check", "--gpu", "H100", "--attention-backend", "fa3"]


def _config(tmp_path: Path, **fields: object) -> str:
    """A copy of the Llama config with `fields` replaced, as a path for --model-config."""
    data = json.loads(LLAMA.read_text())
    data.update(fields)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


# -- M8: --gpu with an unreadable --compute-capability -------------------------------------


@pytest.mark.parametrize("capability", ["nan", "0x10", "-1", "1e3", ""])
def test_m8_gpu_with_an_invalid_compute_capability_is_exit_2(
    capability: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(
        [*H100, "--attention-arch", "mha", "--compute-capability", capability], capsys
    )
    assert code == 2, err
    assert f"--compute-capability: invalid compute capability {capability!r}" in err
    assert "internal error" not in err


def test_m8_the_invalid_capability_is_listed_with_the_other_problems(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli(
        [*H100, "--attention-arch", "mha", "--compute-capability", "nan", "--page-size", "x"],
        capsys,
    )
    assert code == 2, err
    assert "--compute-capability" in err and "--page-size" in err


# -- L4: num_key_value_heads of the wrong type ------------------------------------------------


@pytest.mark.parametrize("heads", ["8", 8.0, 0, -1, float("nan"), [8], True])
def test_l4_a_wrong_num_key_value_heads_is_refused(
    heads: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, num_key_value_heads=heads)
    refused([*H100, "--model-config", path], capsys, "num_key_value_heads", "must be an integer")


def test_l4_a_good_num_key_value_heads_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli([*H100, "--json", "--model-config", _config(tmp_path)], capsys)
    assert code == 0, err
    assert json.loads(out)["from_model_config"]["kv_heads"]["value"] == 8


# -- L10: a config.json that is a FIFO ------------------------------------------------------


def test_l10_a_fifo_config_json_in_a_directory_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "config.json")
    line = refused([*MHA, "--model-config", str(tmp_path)], capsys, "not a regular file")
    assert "has no config.json" not in line


def test_l10_a_fifo_config_json_under_model_path_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "config.json")
    command = ["--", "python3", "-m", "sglang.launch_server", "--model-path", str(tmp_path)]
    refused([*H100, *command], capsys, "--model-path", "not a regular file")
