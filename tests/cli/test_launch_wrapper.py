"""`compat launch`: judge a launch command, then exec it unchanged, or refuse to run it."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import MODELS
from refusals import cli

from compat.guard.policy import POLICY_VARIABLE

MLA = str(MODELS / "deepseek-r1")
MHA = str(MODELS / "llama-3.1-8b-instruct")
SERVER = ["python3", "-m", "sglang.launch_server"]
# The page documents FP4 KV on flashmla as unsupported; SGLang 0.5.7 starts it.
# The page documents EAGLE topk > 1 on flashinfer (MLA) as unsupported; SGLang starts it and
# builds it, the draft too. (FlashMLA with an FP4 KV cache was the example until `compat
# audit` found SGLang 0.5.7's own KV4 check accepting it, a disputed ❌; then EAGLE on
# torch_native, until the draft's build: torch_native has no draft variant.)
DOC_ONLY = [*SERVER, "--model-path", MLA, "--attention-backend", "flashinfer"]
DOC_ONLY += ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"]
DOC_ONLY += ["--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"]
FP8_FLASHMLA = [*SERVER, "--model-path", MLA, "--attention-backend", "flashmla"]
FP8_FLASHMLA += ["--kv-cache-dtype", "fp8_e4m3"]
# SGLang's own start-up refuses EAGLE topk > 1 with paged KV on torch_native.
SGLANG_REFUSES = [*SERVER, "--model-path", MHA, "--attention-backend", "torch_native"]
SGLANG_REFUSES += ["--page-size", "64", "--speculative-algorithm", "EAGLE"]
SGLANG_REFUSES += ["--speculative-eagle-topk", "4", "--speculative-num-steps", "3"]
SGLANG_REFUSES += ["--speculative-num-draft-tokens", "4"]
ON_B200_07 = ["launch", "--sglang-version", "0.5.7", "--gpu", "B200"]


class Executed(BaseException):
    """What the fake os.execvpe raises (past every handler): a real one never returns."""


@pytest.fixture
def execs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    calls: list[tuple[str, list[str]]] = []

    def execvpe(program: str, argv: list[str], env: Any) -> Any:
        calls.append((program, list(argv)))
        raise Executed

    monkeypatch.setattr(os, "execvpe", execvpe)
    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    return calls


def test_a_documented_unsupported_launch_is_refused_and_not_run(
    execs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli([*ON_B200_07, "--dry-run", "--", *DOC_ONLY], capsys)
    assert code == 1
    assert execs == []
    assert "incompatible: 1 error" in out and "[spec-topk-gt1]" in out
    assert "would run" not in out
    assert "not running it (COMPAT_POLICY=documented; the page documents it" in err


def test_a_compatible_dry_run_prints_the_command_and_runs_nothing(
    execs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli([*ON_B200_07, "--dry-run", "--", *FP8_FLASHMLA], capsys)
    assert code == 0
    assert execs == []
    assert out.splitlines()[0] == "compatible: 0 errors, 0 warnings"
    assert out.splitlines()[-1] == f"would run: {shlex.join(FP8_FLASHMLA)}"


def test_an_accepted_launch_is_execd_unchanged(
    execs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Executed):
        cli([*ON_B200_07, "--", *FP8_FLASHMLA], capsys)
    assert execs == [("python3", FP8_FLASHMLA)]
    assert f"running: {shlex.join(FP8_FLASHMLA)}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("environment", "flags", "runs"),
    [
        ("", [], False),
        ("parity", [], True),
        ("warn", [], True),
        ("documented", ["--parity"], True),  # the flag overrides the variable
        ("parity", ["--warn-only"], True),
    ],
)
def test_the_policy_decides_a_documented_only_refusal(
    environment: str,
    flags: list[str],
    runs: bool,
    execs: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, environment)
    code, out, _ = cli([*ON_B200_07, *flags, "--dry-run", "--", *DOC_ONLY], capsys)
    assert (code, "would run: " in out) == ((0, True) if runs else (1, False))
    assert execs == []


@pytest.mark.parametrize("flags", [[], ["--parity"]])
def test_a_launch_sglang_refuses_is_refused_under_every_refusing_policy(
    flags: list[str], execs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(["launch", "--gpu", "B200", *flags, "--", *SGLANG_REFUSES], capsys)
    assert code == 1 and execs == []
    assert "refuses it at start-up" in err


@pytest.mark.parametrize(
    ("argv", "environment", "needle"),
    [
        (["launch", "--gpu", "B200"], "", "no launch command: give it after `--`"),
        (
            ["launch", "--gpu", "B200", "--", *FP8_FLASHMLA],
            "strict",
            "COMPAT_POLICY='strict' is not a policy; use one of documented, parity, warn",
        ),
        (
            ["launch", "--gpu", "B300X", "--", *FP8_FLASHMLA],
            "",
            "--gpu: ",
        ),
    ],
)
def test_bad_input_is_one_line_and_runs_nothing(
    argv: list[str],
    environment: str,
    needle: str,
    execs: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, environment)
    code, _, err = cli(argv, capsys)
    assert code == 2 and execs == []
    assert err.startswith("compat launch: ") and needle in err, err


def test_the_wrapper_really_execs_the_command(tmp_path: Path) -> None:
    """End to end: the program after `--` replaces the wrapper and keeps its arguments."""
    import subprocess

    marker = tmp_path / "ran"
    program = f"import sys, pathlib; pathlib.Path({str(marker)!r}).write_text(repr(sys.argv))"
    command = [sys.executable, "-c", program, "--attention-backend", "flashinfer"]
    env = {k: v for k, v in os.environ.items() if k != POLICY_VARIABLE}
    wrapper = [sys.executable, "-m", "compat", "launch", "--attention-arch", "mha", "--gpu", "H200"]
    wrapper.append("--any-command")  # python -c is not an SGLang launch: run it all the same
    result = subprocess.run(
        [*wrapper, "--", *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"running: {shlex.join(command)}"
    assert marker.read_text() == repr(["-c", "--attention-backend", "flashinfer"])
