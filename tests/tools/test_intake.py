"""`python tools/intake.py X`: a new release's changes, found by running its own code.

Each run is a fresh interpreter, as a maintainer runs it: the guard answers for the release
with the previous release's rules labelled as it (`compat.releases.stand_in`, which must come
before the guard reads the release list). The grid is cut to a machine and a model or two
(`--machines`, `--models`) to keep the tests short; the whole run on 0.5.23 is measured in
docs/contributing.md.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conformance.availability import require_source
from conformance.wheel import cache_dir
from intake_report import FlagDelta, NameDelta
from paths import ROOT

INTAKE = ROOT / "tools" / "intake.py"


def _intake(
    *args: str, env: dict[str, str] | None = None, script: Path = INTAKE
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _alias_line() -> int:
    """The line of SGLang 0.5.23 that declares the tokenspeed_mla alias's backends."""
    source = require_source("0.5.23") / "sglang/srt/arg_groups/serving_hook.py"
    lines = source.read_text(encoding="utf-8").splitlines()
    aliases = next(i for i, line in enumerate(lines) if '"tokenspeed_mla": "cutedsl_mla"' in line)
    declare = 'declare_resolution(server_args, "_handle_deprecated_args", **renamed)'
    return next(i for i in range(aliases, len(lines)) if declare in lines[i]) + 1


def test_a_doctored_release_names_the_change_and_its_line() -> None:
    """0.5.22's rules labelled 0.5.23: the report names 0.5.23's tokenspeed_mla alias."""
    require_source("0.5.22")
    args = ("--rules", "0.5.22", "--machines", "B200", "--models", "DeepSeek-V3", "--no-zoo")
    result = _intake(*args, "0.5.23")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout
    head = "intake of SGLang 0.5.23: its own start-up code, against the rules of 0.5.22"
    assert report.startswith(f"{head} labelled 0.5.23")
    assert "attention registry (against SGLang 0.5.22's): removed tokenspeed_mla" in report
    assert re.search(r"added: .*--paged-experts-num-resident \(value\)", report, re.S)
    groups = re.split(r"\n(?=\d+\. )", report.split("to do: ", 1)[1])
    where = f"sglang/srt/arg_groups/serving_hook.py:{_alias_line()} (handle_deprecated_args)"
    alias = [group for group in groups if f"chosen at {where}" in group.splitlines()[0]]
    assert alias, report
    # One example launch per group, with what each side answered.
    assert "tokenspeed_mla" in alias[0] and "e.g. B200 DeepSeek-V3 " in alias[0]
    assert "the rules of 0.5.22: starts: prefill tokenspeed_mla" in report


def test_a_modelled_release_against_its_own_rules_has_nothing_to_do() -> None:
    args = ("--machines", "H200", "--models", "Llama-3.1-8B,Qwen3-8B")
    result = _intake(*args, "0.5.23")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "against its own rules" in result.stdout
    assert "0 added, 0 removed, 0 changed" in result.stdout
    assert re.search(r"conformance grid: [\d,]+ launches: [\d,]+ agree, 0 disagree", result.stdout)
    assert "model zoo: " in result.stdout
    assert "nothing to model" in result.stdout and "is modelled already" in result.stdout


def test_when_the_previous_rules_hold_it_records_the_release(tmp_path: Path) -> None:
    """A stand-in 0.5.24 (0.5.23's own wheel under the new name): --write records it."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    real = cache_dir()
    require_source("0.5.23")
    wheel = next(real.glob("sglang-0.5.23-*.whl"))
    (wheels / wheel.name).symlink_to(wheel)
    (wheels / wheel.name.replace("0.5.23", "0.5.24")).symlink_to(wheel)
    for version in ("0.5.23", "0.5.24"):
        (wheels / f"sglang-{version}-py").symlink_to(real / "sglang-0.5.23-py")
    tree = tmp_path / "tree"
    for part in ("compat", "tools", "templates", "pyproject.toml"):
        copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
        copy(ROOT / part, tree / part)
    env = {"COMPAT_SGLANG_WHEELS": str(wheels), "PYTHONPATH": str(tree)}
    args = ("--write", "--machines", "B200", "--models", "Llama-3.1-8B", "--no-zoo", "0.5.24")
    result = _intake(*args, env=env, script=tree / "tools" / "intake.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "against the rules of 0.5.23 labelled 0.5.24" in result.stdout
    assert "wrote compat/releases/v0_5_24.py" in result.stdout
    entry = (tree / "compat" / "releases" / "v0_5_24.py").read_text()
    assert 'RELEASE = Release("0.5.24")' in entry
    check = subprocess.run(
        [sys.executable, "-m", "compat", "check", "--sglang-version", "0.5.24", "--gpu", "B200",
         "--attention-arch", "mha", "--json", "--", "python3", "-m", "sglang.launch_server",
         "--paged-experts-num-resident", "2"],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=120, check=False,
        cwd=tree,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert '"sglang_version": "0.5.24"' in check.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("soon",), "'soon' is not a release name"),
        (("0.5.6",), "SGLang 0.5.6 is not modelled and not newer than the newest"),
        (("--rules", "0.5.99", "0.5.24"), "--rules 0.5.99: not a modelled release"),
        (("--rules", "0.5.23", "0.5.22"), "--rules 0.5.23 must be a release before 0.5.22"),
        (("--write", "0.5.23"), "--write records a release newer than the newest modelled"),
    ],
)
def test_invalid_input_is_one_line_and_exit_2(args: tuple[str, ...], said: str) -> None:
    result = _intake(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"intake: {said}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_release_without_a_wheel_is_exit_2(tmp_path: Path) -> None:
    offline = {
        "COMPAT_SGLANG_WHEELS": str(tmp_path),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_FIND_LINKS": "",
        "PIP_RETRIES": "0",
    }
    result = _intake("0.5.24", env=offline)
    assert result.returncode == 2
    assert "cannot fetch the sglang==0.5.24 wheel" in result.stderr


def test_the_flag_delta_tells_added_removed_and_changed() -> None:
    delta = FlagDelta.between(
        {"--a": "value", "--b": "switch", "--c": "value"},
        {"--a": "value", "--c": "list", "--d": "switch"},
    )
    assert dict(delta.added) == {"--d": "switch"} and delta.removed == ("--b",)
    assert dict(delta.changed) == {"--c": ("value", "list")}
    assert delta.lines()[0] == "  1 added, 1 removed, 1 changed"
    names = NameDelta.between("backends", ("fa3", "old"), ("fa3", "new"))
    assert names.line() == "  backends: added new; removed old"
    assert NameDelta.between("kv", ("a",), ("a",)).line() == "  kv: unchanged"
