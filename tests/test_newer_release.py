"""An installed SGLang newer than the newest release modelled: answered for, and said so.

The machine has sglang 0.5.24's distribution metadata (a `.dist-info` in a temporary site
directory, as `pip install sglang==0.5.24` would leave): `compat check`, a pasted launch
command with a flag the newest modelled release does not know, `check()` without a
release, `compat launch` and the plugin run by SGLang's own `load_plugins()` all answer
for the newest modelled release and say so; none exits 2 or raises, and nothing is refused
unless a policy is asked for. A release named explicitly must still be modelled, and one
older than the oldest modelled is refused, naming it.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance import plugin_dist
from conformance.availability import require_source
from conformance.harness import open_runtime

from compat.guard.findings import UNMODELLED_RELEASE_RULE
from compat.guard.policy import POLICY_VARIABLE
from compat.inputs.config import VERSION_VARIABLE
from compat.inputs.installed import installed_sglang_version
from compat.releases import BASELINE, NEWEST, newer_than_modelled

NEWER = "0.5.24"
SAID = (
    f"SGLang {NEWER} is newer than the newest release modelled ({NEWEST}): answers are {NEWEST}'s"
)
LAUNCH = ("python3", "-m", "sglang.launch_server", "--model-path", "org/model")
# flashmla for an MHA model: a documented ❌ that SGLang starts and its registry builds.
DOCUMENTED_ONLY = ("--attention-backend", "flashmla")


def test_the_release_is_newer_than_every_one_modelled() -> None:
    assert newer_than_modelled(NEWER) and newer_than_modelled("1.0.0rc1")
    assert not newer_than_modelled(NEWEST) and not newer_than_modelled(f"{NEWEST}.post1")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a machine with sglang 0.5.24 installed (metadata only)."""
    site = tmp_path_factory.mktemp("site")
    info = site / f"sglang-{NEWER}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {NEWER}\n")
    env = {k: v for k, v in os.environ.items() if k not in (VERSION_VARIABLE, POLICY_VARIABLE)}
    path = [str(site), env.get("PYTHONPATH", "")]
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in path if p)}


def _compat(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def test_compat_check_answers_for_the_newest_modelled_release(installed: dict[str, str]) -> None:
    result = _compat(installed, "check", "--gpu", "H100", "--attention-arch", "mha")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "compatible: 0 errors, 1 warning"
    assert lines[1] == f"  warning: {SAID}"
    assert f"SGLang {NEWEST} (answering for the installed {NEWER})" in result.stdout
    assert result.stdout.count(SAID) == 1  # said once, not again among the findings


def test_the_json_report_names_both_releases(installed: dict[str, str]) -> None:
    result = _compat(installed, "check", "--gpu", "H100", "--attention-arch", "mha", "--json")
    data = json.loads(result.stdout)
    assert (data["sglang_version"], data["sglang_version_source"]) == (NEWEST, "installed")
    assert data["unmodelled_sglang_version"] == NEWER
    assert [w["message"] for w in data["warnings"] if w["rule"] == UNMODELLED_RELEASE_RULE] == [
        SAID
    ]


def test_a_pasted_command_lists_the_flags_the_modelled_release_lacks(
    installed: dict[str, str],
) -> None:
    command = (
        *LAUNCH,
        "--brand-new-flag",
        "3",
        "--attention-backendd",
        "fa3",
        "--mem-fraction-static",
        "0.8",
    )
    result = _compat(installed, "check", "--gpu", "H100", "--attention-arch", "mha", "--", *command)
    assert result.returncode in (0, 1), result.stderr
    ignored = next(line for line in result.stdout.splitlines() if line.startswith("ignored"))
    assert f"--brand-new-flag 3 (not a flag of SGLang {NEWEST})" in ignored
    assert "--attention-backendd fa3 (not a flag of SGLang" in ignored
    assert "did you mean --attention-backend?" in ignored
    assert "--mem-fraction-static 0.8" in ignored
    assert SAID in result.stdout


def test_the_same_command_for_a_modelled_release_is_invalid(installed: dict[str, str]) -> None:
    env = {**installed, VERSION_VARIABLE: NEWEST}
    result = _compat(
        env,
        "check",
        "--attention-arch",
        "mha",
        "--gpu",
        "H100",
        "--",
        *LAUNCH,
        "--brand-new-flag",
        "3",
    )
    assert result.returncode == 2
    assert f"SGLang {NEWEST} has no flag --brand-new-flag" in result.stderr


def test_check_without_a_release_answers_and_says_so(installed: dict[str, str]) -> None:
    code = (
        "from compat import AttentionConfig, check\n"
        "report = check(AttentionConfig(attention_arch='mha', platform='cuda', "
        "compute_capability=(9, 0)))\n"
        "print(report.sglang_version, report.unmodelled_release, report.version_source)\n"
        "print([f.message for f in report.warnings])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=installed, timeout=120
    )
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first == f"{NEWEST} {NEWER} installed"
    assert SAID in second


def test_the_environment_variable_is_answered_for_too(installed: dict[str, str]) -> None:
    env = {**installed, VERSION_VARIABLE: "0.6.0"}
    result = _compat(env, "check", "--gpu", "H100", "--attention-arch", "mha")
    assert result.returncode == 0, result.stderr
    assert "SGLang 0.6.0 is newer than the newest release modelled" in result.stdout


def test_compat_launch_warns_and_runs_unless_a_policy_is_asked_for(
    installed: dict[str, str],
) -> None:
    args = ("launch", "--dry-run", "--gpu", "B200", "--attention-arch", "mha", "--")
    runs = _compat(installed, *args, *LAUNCH, *DOCUMENTED_ONLY, "--brand-new-flag")
    assert runs.returncode == 0, runs.stderr
    assert runs.stdout.startswith("incompatible: ")  # the findings are printed ...
    assert SAID in runs.stdout
    assert "running it anyway" in runs.stderr  # ... and it runs, saying why
    assert runs.stdout.splitlines()[-1].startswith("would run: python3 -m sglang.launch_server")
    asked = _compat({**installed, POLICY_VARIABLE: "documented"}, *args, *LAUNCH, *DOCUMENTED_ONLY)
    assert asked.returncode == 1
    assert f"not running it ({POLICY_VARIABLE}=documented" in asked.stderr
    parity = _compat(installed, "launch", "--parity", *args[1:], *LAUNCH, *DOCUMENTED_ONLY)
    assert parity.returncode == 0  # SGLang itself starts and builds it on a B200


def test_naming_the_release_still_needs_a_modelled_one(installed: dict[str, str]) -> None:
    args = ("check", "--gpu", "H100", "--attention-arch", "mha", "--sglang-version", NEWER)
    result = _compat(installed, *args)
    assert result.returncode == 2
    assert (
        f"SGLang {NEWER} is newer than the newest release modelled ({NEWEST}): "
        f"--sglang-version {NEWEST} asks for its answers"
    ) in result.stderr


@pytest.mark.parametrize("where", ["given", VERSION_VARIABLE])
def test_a_release_older_than_the_oldest_modelled_is_refused(
    where: str, installed: dict[str, str]
) -> None:
    args = ["check", "--gpu", "H100", "--attention-arch", "mha"]
    env = dict(installed)
    if where == "given":
        args += ["--sglang-version", "0.5.6"]
    else:
        env[VERSION_VARIABLE] = "0.5.6"
    result = _compat(env, *args)
    assert result.returncode == 2
    assert f"SGLang 0.5.6 is older than the oldest release modelled ({BASELINE})" in result.stderr


@pytest.mark.parametrize("policy", [None, "documented"])
def test_the_plugin_answers_for_the_newest_modelled_release(
    policy: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """SGLang's own load_plugins() runs the plugin; the code is the newest modelled wheel's."""
    require_source(NEWEST)
    plugin_dist.install(tmp_path, NEWER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(VERSION_VARIABLE, raising=False)
    if policy is None:
        monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(POLICY_VARIABLE, policy)
    installed_sglang_version.cache_clear()
    try:
        with (
            caplog.at_level(logging.WARNING, logger="compat"),
            open_runtime(NEWEST, "B200") as runtime,
        ):
            import importlib

            importlib.import_module("sglang.srt.plugins").load_plugins()
            outcome = runtime.outcome("Llama-3.1-8B", DOCUMENTED_ONLY)
    finally:
        installed_sglang_version.cache_clear()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert SAID in logged  # said for every launch
    if policy is None:  # warned, never refused
        assert not outcome.refused, outcome.error
        assert f"attention-compat starts this launch anyway (1 problem; SGLang {NEWEST}" in logged
        assert f"{POLICY_VARIABLE} unset" in logged
    else:  # enforcement asked for: the newest modelled release's answer refuses it
        assert outcome.refused
        assert (outcome.error or "").startswith("LaunchRefusedError: attention-compat refused")


# -- issue 42 M5: versions not spelled X.Y.Z, read as PEP 440 ---------------------------------

NOT_XYZ_NEWER = ("1.0", "0.6", "9.0", f"{NEWEST}.1", "0.5.24rc1", "0.5.24.dev3", "1!0.1")


@pytest.mark.parametrize("version", NOT_XYZ_NEWER)
def test_m5_a_newer_version_in_any_pep440_spelling_is_answered_for(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compat.inputs import release_choice

    monkeypatch.delenv(VERSION_VARIABLE, raising=False)
    monkeypatch.setattr(release_choice, "installed_sglang_version", lambda: version)
    rules, source, newer = release_choice.chosen_release(None)
    assert (rules.release, source, newer) == (NEWEST, "installed", version)
    assert newer_than_modelled(version)


@pytest.mark.parametrize(
    "suffix", [".post1", "-1", ".post1+cu128", "+local", "+cu128.torch2", ".0", ".0.0"]
)
@pytest.mark.parametrize("release", [BASELINE, "0.5.16", NEWEST])
def test_m5_a_post_or_local_version_of_a_modelled_release_is_that_release(
    release: str, suffix: str
) -> None:
    from compat.releases import modelled_release, release_rules

    version = release + suffix
    assert modelled_release(version) == release
    assert release_rules(version).release == release
    assert not newer_than_modelled(version)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("0.5.23.dev0", "0.5.23a1"),
        ("0.5.23a1", "0.5.23b1"),
        ("0.5.23rc1", "0.5.23"),
        ("0.5.23", "0.5.23.post1"),
        ("0.5.23.post1", "0.5.23.1"),
        ("0.5.23.1", "0.5.24"),
        ("0.5.24", "0.6"),
        ("0.9", "0.10"),
        ("9.0", "1!0.1"),
    ],
)
def test_m5_versions_are_ordered_as_pep440_orders_them(earlier: str, later: str) -> None:
    from compat.releases import release_key

    first, second = release_key(earlier), release_key(later)
    assert first is not None and second is not None and first < second


@pytest.mark.parametrize("text", ["", "garbage", "0.5.23\x00", "0.5.23 beta", "1" * 5000 + ".0"])
def test_m5_a_name_that_is_not_a_version_is_not_modelled(text: str) -> None:
    from compat.releases import UnknownReleaseError, release_key, release_rules

    assert release_key(text) is None and not newer_than_modelled(text)
    with pytest.raises(UnknownReleaseError, match="is not modelled"):
        release_rules(text)


def test_m5_compat_launch_runs_a_valid_launch_with_1_0_installed(
    tmp_path: Path, installed: dict[str, str]
) -> None:
    info = tmp_path / "sglang-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 1.0\n")
    env = {**installed, "PYTHONPATH": os.pathsep.join([str(tmp_path), installed["PYTHONPATH"]])}
    args = ("launch", "--dry-run", "--gpu", "H100", "--attention-arch", "mha", "--")
    runs = _compat(env, *args, *LAUNCH, "--attention-backend", "flashinfer")
    assert runs.returncode == 0, runs.stderr
    assert "SGLang 1.0 is newer than the newest release modelled" in runs.stdout
    assert runs.stdout.splitlines()[-1].startswith("would run: python3 -m sglang.launch_server")


# -- issue 42 L5: a blank COMPAT_SGLANG_VERSION is unset ---------------------------------------


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_l5_a_blank_version_variable_is_unset(blank: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from compat.inputs import release_choice

    monkeypatch.setenv(VERSION_VARIABLE, blank)
    monkeypatch.setattr(release_choice, "installed_sglang_version", lambda: "0.5.16")
    rules, source, newer = release_choice.chosen_release(None)
    assert (rules.release, source, newer) == ("0.5.16", "installed", None)


def test_l5_compat_check_with_a_blank_version_variable_is_not_an_error(
    installed: dict[str, str],
) -> None:
    result = _compat(
        {**installed, VERSION_VARIABLE: " "}, "check", "--gpu", "H100", "--attention-arch", "mha"
    )
    assert result.returncode == 0, result.stderr
    assert SAID in result.stdout  # the installed release answers, as with the variable unset


# -- issue 42 M6: installed metadata that is not UTF-8 -----------------------------------------


@pytest.mark.parametrize("command", ["check", "launch"])
def test_m6_unreadable_sglang_metadata_is_exit_2_naming_it(
    command: str, tmp_path: Path, installed: dict[str, str]
) -> None:
    info = tmp_path / "sglang-0.5.23.dist-info"
    info.mkdir()
    (info / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.23\xff\n")
    env = {**installed, "PYTHONPATH": os.pathsep.join([str(tmp_path), installed["PYTHONPATH"]])}
    args = ["--gpu", "H100", "--attention-arch", "mha"]
    if command == "launch":
        args = ["--dry-run", *args, "--", *LAUNCH]
    result = _compat(env, command, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{info / 'METADATA'}): not UTF-8 (byte 0xff" in result.stderr
    assert VERSION_VARIABLE in result.stderr  # and how to name the release instead
    named = _compat({**env, VERSION_VARIABLE: "0.5.23"}, command, *args)
    assert named.returncode == 0, named.stderr
