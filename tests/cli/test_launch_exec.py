"""`compat launch` runs a command as a shell would, or says why not (#23 L1-L4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from refusals import cli

from compat.guard.policy import POLICY_VARIABLE

LAUNCH = ["launch", "--sglang-version", "0.5.23", "--gpu", "H200", "--attention-arch", "mha"]


def _launch(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != POLICY_VARIABLE}
    return subprocess.run(
        [sys.executable, "-m", "compat", *LAUNCH, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_l1_an_empty_command_is_invalid_input_not_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ([""], [" "], ["", ""]):
        code, _, err = cli([*LAUNCH, "--", *command], capsys)
        assert code == 2 and "no launch command" in err, err


def test_l1_an_empty_program_name_with_any_command_is_not_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli([*LAUNCH, "--any-command", "--", "", "--page-size", "16"], capsys)
    assert code == 127 and "command not found" in err, err


def test_l2_a_missing_command_is_127_like_a_shell() -> None:
    done = _launch("--any-command", "--", "no-such-program-anywhere", "--page-size", "16")
    assert done.returncode == 127, done.stderr
    assert "cannot run 'no-such-program-anywhere': command not found" in done.stderr


def test_l2_a_command_that_is_not_executable_is_126_like_a_shell(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    done = _launch("--any-command", "--", str(script))
    assert done.returncode == 126, done.stderr
    assert "Permission denied" in done.stderr and "ran" not in done.stdout


def test_l3_the_command_starts_with_sigpipe_and_sigxfsz_at_their_defaults(tmp_path: Path) -> None:
    """Python ignores both; the exec'd program must not inherit that."""
    report = tmp_path / "dispositions"
    # What grep inherits through the shell is what the launched program gets.
    shell = f"grep SigIgn /proc/self/status > {report}"
    done = _launch("--any-command", "--", "/bin/sh", "-c", shell)
    assert done.returncode == 0, done.stderr
    ignored = int(report.read_text().split()[1], 16)
    for number in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (number - 1)), f"signal {number} is still ignored"


def test_l4_a_command_that_is_not_an_sglang_launch_is_not_run_unless_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(os, "execvpe", lambda program, argv, env: ran.append(argv))
    command = ["python3", "-m", "vllm.entrypoints.openai.api_server", "--page-size", "16"]
    code, out, err = cli([*LAUNCH, "--", *command], capsys)
    assert code == 2 and ran == []
    assert "does not start an SGLang server" in err and "--any-command" in err
    code, out, err = cli([*LAUNCH, "--any-command", "--dry-run", "--", *command], capsys)
    assert code == 0 and "does not start an SGLang server" in out, err
    assert out.splitlines()[-1] == "would run: " + " ".join(command)


def test_a_pasted_command_runs_as_the_words_it_was_judged_as(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pasted = "python3 -m sglang.launch_server --attention-backend fa3 \\\n  --page-size 16"
    code, out, _ = cli([*LAUNCH, "--dry-run", "--", pasted], capsys)
    assert code == 0, out
    expected = "python3 -m sglang.launch_server --attention-backend fa3 --page-size 16"
    assert out.splitlines()[-1] == f"would run: {expected}"
