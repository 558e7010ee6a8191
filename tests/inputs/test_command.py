"""Launch commands read as a shell and the release's own parser read them (#22, #23 M2-M4, L11).

Each test names its exact case. Corrected commands are checked again through the CLI: a
command pasted as one argument gives commands a shell can run, and each passes.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest
from refusals import cli

from compat.inputs.command import is_sglang_launch, parse_launch_command
from compat.inputs.launch_file import MAX_CONFIG_VALUES

SERVER = "python3 -m sglang.launch_server"
# trtllm_mha needs sm10x: on an H100 the page documents it as unsupported.
ON_H100 = ["check", "--sglang-version", "0.5.23", "--gpu", "h100", "--attention-arch", "mha"]


def corrected(out: str) -> list[str]:
    """The corrected launch commands of a text report."""
    lines = out.split("corrected launch commands", 1)[1].splitlines()[1:]
    return [line.strip() for line in lines if line.startswith("  ") and "#" not in line[:4]]


def test_m2_quoted_flag_and_value_token_is_read_not_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(
        [*ON_H100, "--", *shlex.split(SERVER), "--attention-backend trtllm_mha"], capsys
    )
    assert code == 1, err
    assert "internal error" not in err
    assert "backend trtllm_mha" in out
    assert "read the quoted '--attention-backend trtllm_mha'" in out
    commands = corrected(out)
    assert commands and all("trtllm_mha" not in command for command in commands)


def test_m3_pasted_one_argument_command_gives_runnable_corrected_commands_that_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pasted = f"{SERVER} --attention-backend trtllm_mha --page-size 16"
    code, out, _ = cli([*ON_H100, "--", pasted], capsys)
    assert code == 1
    commands = corrected(out)
    assert len(commands) >= 2
    for command in commands:
        words = shlex.split(command)
        assert words[:3] == shlex.split(SERVER), command  # the command, not its quoted text
        assert words.count("--attention-backend") == 1 and "--page-size" in words
        again, again_out, _ = cli([*ON_H100, "--", command], capsys)
        assert again == 0, f"{command}: {again_out}"


def test_m3_removals_are_applied_inside_a_pasted_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fix that turns speculation off removes its flags from the words of the command."""
    pasted = (
        f"{SERVER} --attention-backend flashmla --page-size 64 --speculative-algorithm EAGLE "
        "--speculative-eagle-topk 4 --speculative-num-steps 3 --speculative-num-draft-tokens 8"
    )
    argv = ["check", "--sglang-version", "0.5.23", "--gpu", "b200", "--attention-arch", "mla"]
    code, out, _ = cli([*argv, "--", pasted], capsys)
    assert code == 1, out
    commands = corrected(out)
    assert any("--speculative-algorithm" not in command for command in commands)
    assert any("--page-size" not in command for command in commands)
    for command in commands:
        again, again_out, _ = cli([*argv, "--", command], capsys)
        assert again == 0, f"{command}: {again_out}"


def test_22_backslash_line_continuations_pasted_as_one_argument_are_joined(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pasted = f"{SERVER} \\\n  --attention-backend trtllm_mha \\\n  --page-size 16"
    code, out, err = cli([*ON_H100, "--", pasted], capsys)
    assert code == 1, err
    assert "unexpected argument" not in out + err
    assert "page size 16" in out
    for command in corrected(out):
        assert "\n" not in command
        assert cli([*ON_H100, "--", command], capsys)[0] == 0


def test_22_a_continuation_inside_single_quotes_is_kept_as_a_shell_keeps_it() -> None:
    launch = parse_launch_command([f"{SERVER} --chat-template 'a\\\nb' --page-size 16"], "0.5.23")
    assert launch.problems == ()
    assert "--chat-template" in launch.words
    assert launch.words[launch.words.index("--chat-template") + 1] == "a\\\nb"


def test_a_flag_value_with_spaces_and_a_programs_own_argument_are_never_split() -> None:
    launch = parse_launch_command(
        ["sh", "-c", "echo a b", "--chat-template", "x y", "--page-size", "16"], "0.5.23"
    )
    assert launch.words == ("sh", "-c", "echo a b", "--chat-template", "x y", "--page-size", "16")
    assert not launch.sglang_launch


@pytest.mark.parametrize(
    ("words", "launches"),
    [
        (["python3", "-m", "sglang.launch_server", "--tp", "8"], True),
        (["sglang", "serve", "--tp", "8"], True),
        (["/opt/venv/bin/sglang", "serve"], True),
        (["python", "/src/sglang/launch_server.py"], True),
        (["--attention-backend", "fa3"], True),  # flags alone: what `compat check` reads
        (["python3", "-m", "vllm.entrypoints.openai.api_server"], False),
        (["bash", "run.sh"], False),
        ([""], False),
    ],
)
def test_l4_what_is_an_sglang_launch(words: list[str], launches: bool) -> None:
    assert is_sglang_launch(words) is launches


def test_l11_one_120_kb_argument_gives_a_bounded_error_line_quickly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = time.perf_counter()
    code, _, err = cli([*ON_H100, "--", *shlex.split(SERVER), "--x " * 30_000], capsys)
    elapsed = time.perf_counter() - started
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and len(err) < 500, err[:500]
    assert "has no flag --x (30000 times)" in err
    assert elapsed < 20, "each unknown flag is looked up once"  # it took 22 s, 2.8 MB


def test_l11_a_120_kb_value_in_a_flags_place_is_cut_in_the_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli([*ON_H100, "--attention-backend", "y" * 120_000], capsys)
    assert code == 2
    assert len(err) < 1000 and "(120000 characters)" in err


def test_l11_many_distinct_problems_are_summarized(capsys: pytest.CaptureFixture[str]) -> None:
    flags = " ".join(f"--no-such-flag-{n}" for n in range(40))
    code, _, err = cli([*ON_H100, "--", f"{SERVER} {flags}"], capsys)
    assert code == 2
    assert "and 35 more problems" in err and len(err) < 1500


# -- SGLang's own --config FILE (M4) ---------------------------------------------------------


def _yaml(tmp_path: Path, text: str, name: str = "launch.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_m4_a_backend_refused_on_the_command_line_is_refused_from_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _yaml(
        tmp_path, "attention-backend: trtllm_mha\npage-size: 16\nmem-fraction-static: 0.8\n"
    )
    code, out, _ = cli([*ON_H100, "--", *shlex.split(SERVER), "--config", config], capsys)
    assert code == 1, out
    assert "backend trtllm_mha; KV auto; page size 16" in out
    assert f"read --config {config}" in out
    assert f"--mem-fraction-static 0.8 (from {config})" in out  # listed as ignored, with its origin
    for command in corrected(out):  # a command-line flag wins over the file
        assert cli([*ON_H100, "--", command], capsys)[0] == 0, command


def test_m4_the_command_line_wins_over_the_config_file_as_in_sglang(tmp_path: Path) -> None:
    config = _yaml(tmp_path, "attention-backend: trtllm_mha\nkv-cache-dtype: fp8_e4m3\n")
    words = [*shlex.split(SERVER), "--attention-backend", "fa3", "--config", config]
    launch = parse_launch_command(words, "0.5.23")
    assert launch.values == {"attention_backend": "fa3", "kv_cache_dtype": "fp8_e4m3"}
    assert launch.from_config_file == {"--attention-backend", "--kv-cache-dtype"}


def test_m4_a_value_the_release_refuses_is_refused_in_the_file_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fp4_e2m1 was removed in 0.5.21: on the command line and in the file, exit 2."""
    config = _yaml(tmp_path, "kv-cache-dtype: fp4_e2m1\n")
    for launch in (
        [*shlex.split(SERVER), "--kv-cache-dtype", "fp4_e2m1"],
        [SERVER, "--config", config],
    ):
        code, _, err = cli([*ON_H100, "--", *launch], capsys)
        assert code == 2 and "removed in SGLang 0.5.21" in err, err


def test_m4_an_unknown_key_is_refused_with_a_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SGLang writes `--attention_backend`, which its parser refuses."""
    config = _yaml(tmp_path, "attention_backend: fa3\n")
    code, _, err = cli([*ON_H100, "--", SERVER, "--config", config], capsys)
    assert code == 2
    assert f"--config {config}: SGLang 0.5.23 has no flag --attention_backend" in err
    assert "did you mean --attention-backend" in err


def test_m4_compat_launch_refuses_what_the_file_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMPAT_POLICY", raising=False)
    config = _yaml(tmp_path, "attention-backend: trtllm_mha\n")
    argv = ["launch", "--dry-run", *ON_H100[1:], "--", *shlex.split(SERVER), "--config", config]
    code, out, err = cli(argv, capsys)
    assert code == 1, out + err
    assert "would run" not in out and "not running it" in err


@pytest.mark.parametrize(
    ("text", "name", "needle"),
    [
        ("attention-backend: fa3\n", "launch.json", "only YAML files"),
        ("[1, 2]\n", "launch.yaml", "a mapping of options"),
        ("a: [\n", "launch.yaml", "not valid YAML (line"),
        (
            "a: &x [1,1,1,1,1,1,1,1,1,1]\n"
            + "".join(
                f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
                for p, c in zip("xbcdefg", "bcdefgh", strict=True)
            ),
            "launch.yaml",
            f"more than {MAX_CONFIG_VALUES} values",
        ),
    ],
)
def test_m4_a_config_file_sglang_cannot_read_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, name: str, needle: str
) -> None:
    config = _yaml(tmp_path, text, name)
    code, _, err = cli([*ON_H100, "--", SERVER, "--config", config], capsys)
    assert code == 2 and needle in err, err
    assert len(err.strip().splitlines()) == 1


def test_m4_two_config_files_or_none_after_the_flag_are_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _yaml(tmp_path, "page-size: 16\n")
    code, _, err = cli([*ON_H100, "--", SERVER, "--config", config, "--config", config], capsys)
    assert code == 2 and "reads one file" in err
    code, _, err = cli([*ON_H100, "--", SERVER, "--config"], capsys)
    assert code == 2


def test_m4_config_equals_file_is_never_read_by_sglang_and_the_output_says_so(
    tmp_path: Path,
) -> None:
    config = _yaml(tmp_path, "attention-backend: trtllm_mha\n")
    launch = parse_launch_command([SERVER, f"--config={config}"], "0.5.23")
    assert launch.values == {} and launch.config_file is None
    assert any("the file is never read" in note for note in launch.notes)


@pytest.mark.parametrize(
    ("release", "expected"),
    [("0.5.7", ("--enable-torch-compile",)), ("0.5.23", ("--enable-torch-compile",))],
)
def test_m4_booleans_become_arguments_as_each_release_writes_them(
    tmp_path: Path, release: str, expected: tuple[str, ...]
) -> None:
    config = _yaml(tmp_path, "enable-torch-compile: true\ndisable-radix-cache: false\n")
    launch = parse_launch_command([SERVER, "--config", config], release)
    assert launch.problems == ()
    assert launch.config_file is not None and launch.config_file.arguments == expected
