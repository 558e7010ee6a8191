"""`python tools/freshness.py`: a warning when the package index has a newer SGLang.

A step of `.ci/run` that never fails the build: pip is asked (a stand-in runner here, and an
index that does not answer for real), and what it says becomes one line per newer release.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import freshness
from paths import ROOT

from compat.releases import NEWEST

PIP_SAYS = (
    "sglang (0.5.25)\n"
    "Available versions: 0.5.25, 0.5.24, 0.5.23.post1, 0.5.23, 0.5.22, 0.5.7, 0.4.0\n"
)


def _pip(stdout: str = "", returncode: int = 0, stderr: str = "") -> Any:
    def run(command: list[str], **kwargs: Any) -> Any:
        assert command[1:5] == ["-m", "pip", "index", "versions"], command
        return SimpleNamespace(returncode=returncode, stdout=stdout, stderr=stderr)

    return run


def test_each_final_release_after_the_newest_modelled_is_warned_about() -> None:
    versions = freshness.index_versions(_pip(PIP_SAYS))
    assert versions[:3] == ("0.5.25", "0.5.24", "0.5.23.post1")
    # Post releases share a modelled release's rules; pre-releases are not released.
    later = ("0.5.24", "0.5.25", "0.6.0")
    assert freshness.newer_than((*versions, "0.6.0rc1", "0.6.0"), "0.5.23") == later
    said = freshness.report(_pip(PIP_SAYS.replace("0.5.25, 0.5.24", "9.0.1")))
    assert said == (
        f"warning: the package index has SGLang 9.0.1, newer than the newest release modelled "
        f"({NEWEST}): take it in with `python tools/intake.py 9.0.1` (docs/contributing.md, "
        "Record a release)"
    )


def test_the_newest_release_modelled_is_all_well() -> None:
    said = freshness.report(_pip(f"Available versions: {NEWEST}, 0.5.7\n"))
    assert said == f"the newest SGLang on the package index is modelled (newest modelled: {NEWEST})"


def test_no_answer_is_said_and_passes() -> None:
    failed = _pip(returncode=1, stderr="WARNING: retrying\nERROR: No matching distribution\n")
    assert freshness.report(failed) == (
        "freshness not checked: the package index did not answer (pip index exited 1: "
        "ERROR: No matching distribution)"
    )

    def times_out(command: list[str], **kwargs: Any) -> Any:
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    assert freshness.report(times_out).startswith("freshness not checked: ")


def test_without_network_the_command_says_so_and_exits_0() -> None:
    offline = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    offline |= {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "freshness.py")],
        capture_output=True,
        text=True,
        env=offline,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("freshness not checked: the package index did not answer")


def test_ci_runs_it_as_a_step() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\n.venv/bin/python tools/freshness.py\n" in ci
