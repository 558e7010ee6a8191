"""Hostile and unlucky input to `compat check` and `compat launch`, round 4 (#42 M2, M7, M8,
L1-L4, L6, L10, L11): each is exit 2 with one line naming the bad value, or judged and said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


# -- M7: a pasted command with a typographic dash or quote ------------------------------------

LAUNCH_SERVER = ["python3", "-m", "sglang.launch_server"]


@pytest.mark.parametrize("dash", ["\u2013", "\u2014", "\u2212\u2212"])
def test_m7_a_flag_typeset_with_a_unicode_dash_is_refused_with_its_ascii_spelling(
    dash: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (
        [*LAUNCH_SERVER, f"{dash}attention-backend", "trtllm_mha"],
        [" ".join([*LAUNCH_SERVER, f"{dash}attention-backend", "trtllm_mha"])],  # pasted
        [f"{dash}attention-backend", "trtllm_mha"],  # flags alone
    ):
        refused(
            [*H100, "--attention-arch", "mha", "--", *command],
            capsys,
            f"unexpected argument '{dash}attention-backend'",
            "did you mean '--attention-backend'?",
        )


def test_m7_a_word_after_the_program_that_is_not_a_flag_is_unexpected(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for launch in ([*LAUNCH_SERVER, "fa3"], ["sglang", "serve", "fa3"]):
        refused([*MHA, "--", *launch], capsys, "unexpected argument 'fa3'")


def test_m7_typographic_quotes_get_the_ascii_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    pasted = " ".join([*LAUNCH_SERVER, "--chat-template \u201ca b\u201d"])
    refused([*MHA, "--", pasted], capsys, "unexpected argument 'b\u201d'", "did you mean 'b\"'?")
    refused(
        [*MHA, "--", *LAUNCH_SERVER, "--attention\u2013backend", "fa3"],
        capsys,
        "did you mean '--attention-backend'?",
    )


def test_m7_launch_never_runs_a_command_whose_flags_were_lost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(
        ["launch", "--dry-run", "--gpu", "H100", "--attention-arch", "mha", "--",
         *LAUNCH_SERVER, "\u2013attention-backend", "trtllm_mha"],
        capsys,
    )  # fmt: skip
    assert code == 2 and "would run" not in out, out + err


# -- L6: NAME=value before the program, and $VARIABLES ----------------------------------------


def _stand_in(tmp_path: Path) -> dict[str, str]:
    """An environment whose python3 prints CUDA_VISIBLE_DEVICES and its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "python3"
    script.write_text('#!/bin/sh\necho "devices=$CUDA_VISIBLE_DEVICES args=$*"\n')
    script.chmod(0o755)
    env = {
        k: v for k, v in os.environ.items() if k not in ("COMPAT_POLICY", "CUDA_VISIBLE_DEVICES")
    }
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}


@pytest.mark.parametrize("pasted", [False, True])
def test_l6_a_name_value_prefix_is_the_environment_of_the_program(
    pasted: bool, tmp_path: Path
) -> None:
    command = ["CUDA_VISIBLE_DEVICES=0,1", *LAUNCH_SERVER, "--attention-backend", "fa3"]
    argv = [" ".join(command)] if pasted else command
    done = subprocess.run(
        [sys.executable, "-m", "compat", "launch", "--gpu", "H100", "--attention-arch", "mha",
         "--", *argv],
        capture_output=True, text=True, timeout=120, env=_stand_in(tmp_path), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "devices=0,1 args=-m sglang.launch_server --attention-backend fa3" in done.stdout


def test_l6_a_shell_variable_is_said_not_to_be_expanded(capsys: pytest.CaptureFixture[str]) -> None:
    pasted = " ".join([*LAUNCH_SERVER, "--attention-backend fa3 --model-path $MODEL"])
    code, out, err = cli(
        ["launch", "--dry-run", "--gpu", "H100", "--attention-arch", "mha", "--", pasted], capsys
    )
    assert code == 0, err
    assert "'$MODEL' reaches the program as written: $VARIABLES are not expanded" in out


def test_l6_name_value_words_alone_are_not_a_program(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(
        ["launch", "--gpu", "H100", "--attention-arch", "mha", "--any-command", "--", "A=1"],
        capsys,
    )
    assert code == 127 and "no program after its NAME=value words" in err, err


# -- M2, L2: strings from a config.json or the command line never reach the terminal raw ------

FORGED = "llama\x1b[31m\r\ncompatible: 0 errors\x1b[2J\u202e"


def _assert_terminal_safe(text: str) -> None:
    assert not any(char in text for char in "\x1b\r\u202e"), text
    assert not any(line.startswith("compatible: 0 errors") for line in text.splitlines()[1:])


@pytest.mark.parametrize(
    "fields",
    [
        {"model_type": FORGED},
        {"quantization_config": {"quant_method": FORGED}},
        {"architectures": ["LlamaForCausalLM", FORGED]},
    ],
)
def test_m2_a_config_string_with_escapes_and_line_breaks_is_escaped(
    fields: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, err = cli([*H100, "--verbose", "--model-config", _config(tmp_path, **fields)], capsys)
    _assert_terminal_safe(out + err)
    assert "\\x1b[31m" in out + err  # escaped as an error message escapes it


def test_m2_a_launch_command_word_with_escapes_is_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = [*LAUNCH_SERVER, "--host", FORGED, "--attention-backend", "fa3"]
    code, out, err = cli(["launch", "--dry-run", "--gpu", "H100", "--attention-arch", "mha",
                          "--", *command], capsys)  # fmt: skip
    assert code == 0, err
    _assert_terminal_safe(out + err)


@pytest.mark.parametrize("field", ["model_type", "quant_method", "architectures"])
def test_l2_a_long_config_string_is_cut(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "m" * 500_000
    fields: dict[str, object] = {
        "model_type": {"model_type": long},
        "quant_method": {"quantization_config": {"quant_method": long}},
        "architectures": {"architectures": ["LlamaForCausalLM", long]},
    }[field]
    _, out, err = cli([*H100, "--verbose", "--model-config", _config(tmp_path, **fields)], capsys)
    assert len(out + err) < 5_000, len(out + err)
    assert "characters)" in out + err  # cut, and the length said


# -- L3: an architecture the release does not serve, from a config.json ---------------------


def test_l3_an_unknown_architecture_in_a_config_is_answered_as_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SGLang's start-up starts it (the model loader looks the name up later): the launch is
    # judged from the config's keys, and says what `--model-architecture NAME` says.
    path = _config(tmp_path, architectures=["NoSuchModelForCausalLM"])
    code, by_file, err = cli([*H100, "--model-config", path], capsys)
    assert code in (0, 1), err
    by_name = refused(
        [*H100, "--model-architecture", "NoSuchModelForCausalLM"], capsys, "serves no architecture"
    )
    said = by_name.split("--model-architecture: ")[1]
    assert f"architectures[0]: {said}" in by_file


def test_l3_a_two_megabyte_architecture_name_is_said_in_one_short_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, architectures=["A" * 2_000_000])
    _, out, err = cli([*H100, "--model-config", path], capsys)
    said = [line for line in out.splitlines() if "(2000000 characters)" in line]
    assert said and all(len(line) < 1_000 for line in said) and len(out + err) < 5_000


# -- L1: an integer over Python's digit limit in a --config YAML -------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("page-size: " + "1" * 5000, "page-size: an integer of more than"),
        ("tp-size: [" + "1" * 5000 + "]", "tp-size: an integer of more than"),
        ("page-size: 0x" + "f" * 5000, "page-size: an integer of more than"),
    ],
)
def test_l1_a_huge_integer_in_a_launch_config_names_the_file_and_the_key(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "launch.yaml"
    path.write_text(text + "\n")
    line = refused([*MHA, "--", *LAUNCH_SERVER, "--config", str(path)], capsys, said)
    assert f"--config {path}: " in line and "set_int_max_str_digits" not in line


# -- L11: --model names one checkpoint, the launch runs another ------------------------------


def test_l11_model_and_a_model_path_of_another_known_checkpoint_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    launch = ["--", *LAUNCH_SERVER, "--model-path"]
    for command in ("check", "launch"):
        refused(
            [
                command,
                "--gpu",
                "B200",
                "--model",
                "gpt-oss-120b",
                *launch,
                "deepseek-ai/DeepSeek-R1",
            ],
            capsys,
            "--model 'gpt-oss-120b' is openai/gpt-oss-120b",
            "--model-path is deepseek-ai/DeepSeek-R1",
        )
    same = [*launch, "OpenAI/gpt-oss-120b"]  # the same checkpoint, any case: judged
    code, _, err = cli(["check", "--gpu", "B200", "--model", "gpt-oss-120b", *same], capsys)
    assert code in (0, 1), err
