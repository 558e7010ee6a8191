"""The launch flags are SGLang's own: the committed data equals each release's parser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conformance import releases as conformance_releases
from conformance.flags import release_flags_in_subprocess, sub_backend_choices

from compat.engine.parser import encoding as flag_source
from compat.engine.parser import sub_choices
from compat.engine.parser.encoding import ARITIES, REMOVED, apply, changes, render_data
from compat.engine.parser.lookup import RELEASES, UnknownFlagError, canonical_flag, release_flags
from compat.inputs.command import (
    MODEL_PATH_FLAGS,
    SWITCH_GIVEN,
    launch_release,
    parse_launch_command,
)
from compat.inputs.flags import FLAGS, SUB_BACKEND_FLAGS
from compat.releases import RELEASE_NAMES
from compat.releases import RELEASES as RELEASE_RULES

SELECTED = conformance_releases.selected()
B200 = ("--attention-arch", "mha", "--platform", "cuda", "--compute-capability", "10.0")
LAUNCH = ("python3", "-m", "sglang.launch_server")
# Real flags of the releases' parsers that tell them apart.
NEW_IN_0_5_23 = "--paged-experts-num-resident"  # a value flag 0.5.22 and before lack
OPTIONAL_THEN_SWITCH = "--hybrid-kvcache-ratio"  # nargs="?" in 0.5.7, a no-value switch in 0.5.8


@pytest.fixture(scope="module")
def parsers() -> dict[str, dict[str, str]]:
    """What each selected release's own `ServerArgs.add_cli_args` declares (one process each)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(SELECTED, pool.map(release_flags_in_subprocess, SELECTED), strict=True))


@pytest.mark.parametrize("release", SELECTED)
def test_committed_flags_equal_the_releases_parser(
    release: str, parsers: dict[str, dict[str, str]]
) -> None:
    from_parser = parsers[release]
    committed = release_flags(release)
    assert committed == from_parser, (
        f"added {sorted(from_parser.keys() - committed.keys())}, removed "
        f"{sorted(committed.keys() - from_parser.keys())}; regenerate with "
        f"`python tools/flags.py {release}`"
    )
    # every option string of an action counts, aliases included
    assert from_parser["--model"] == from_parser["--model-path"] == "value"


@pytest.mark.parametrize("release", SELECTED)
def test_committed_sub_backend_choices_equal_the_releases_parser(release: str) -> None:
    """Each sub-backend flag's names are what the release's own parser declares."""
    from_parser = sub_backend_choices(release)
    assert dict(sub_choices.sub_choices(release)) == from_parser, (
        f"regenerate with `python tools/flags.py {release}`"
    )


def test_the_sub_backend_data_is_what_the_generator_writes() -> None:
    releases = {release: sub_choices.sub_choices(release) for release in RELEASES}
    text = sub_choices.render_sub_data(releases, list(RELEASES))
    assert text == Path(sub_choices.__file__).with_name("sub_data.py").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"SGLang 0\.5\.8 drops --x"):
        sub_choices.render_sub_data({"0.5.7": {"--x": ("a",)}, "0.5.8": {}}, ["0.5.7", "0.5.8"])


def test_every_modelled_release_has_a_flag_list() -> None:
    assert tuple(RELEASE_NAMES) == RELEASES
    for release in RELEASES:
        flags = release_flags(release)
        # A modelled flag is there under one of its spellings at least (the Mamba cache
        # strategy changed its name in 0.5.14 and dropped the old one in 0.5.23); a
        # sub-backend flag a release lacks under every spelling has no choices there.
        for flag in SUB_BACKEND_FLAGS:
            spelled = [option for option in flag.options if option in flags]
            assert bool(spelled) == (flag.field in RELEASE_RULES[release].sub_choices), flag
        sub_options = {option for flag in SUB_BACKEND_FLAGS for option in flag.options}
        missing = {
            flag.option
            for flag in FLAGS
            if not set(flag.options) & set(flags) and flag.option not in sub_options
        }
        missing |= set(MODEL_PATH_FLAGS) - set(flags)
        # A modelled flag a release no longer has is one none of its start-up rules reads.
        if missing:
            assert missing == {"--prefill-round-robin-balance"}, release
            assert not RELEASE_RULES[release].decode_dp_needs_round_robin, release
        assert flags["--trust-remote-code"] == "switch" and flags["--tp-size"] == "value"
        for flag in FLAGS:
            arity = "switch" if flag.switch else "value"
            assert all(flags.get(option, arity) == arity for option in flag.options), flag
    with pytest.raises(
        ValueError, match=r"no flag list for SGLang 0\.4\.0; known: 0\.5\.7, 0\.5\.8"
    ):
        release_flags("0.4.0")


def test_the_data_module_is_what_the_generator_writes() -> None:
    releases = flag_source.committed_releases()
    assert list(releases) == list(RELEASES)
    assert render_data(releases) == flag_source.DATA_MODULE.read_text(encoding="utf-8")


def test_the_data_stores_changes_not_whole_lists() -> None:
    whole = render_data({"0.5.7": release_flags("0.5.7")})
    stored = flag_source.DATA_MODULE.stat().st_size
    # 17 releases in not much more than the space of three whole ones
    assert stored < 4 * len(whole.encode()), stored


@pytest.mark.parametrize(
    ("before", "after", "delta"),
    [
        ({"--a": "value"}, {"--a": "value"}, {}),
        ({"--a": "value"}, {"--a": "value", "--b": "switch"}, {"switch": ("--b",)}),
        ({"--a": "value", "--b": "list"}, {"--a": "value"}, {REMOVED: ("--b",)}),
        ({"--a": "optional"}, {"--a": "switch"}, {"switch": ("--a",)}),
        ({"--a": "value"}, {"--c": "list"}, {"list": ("--c",), REMOVED: ("--a",)}),
    ],
)
def test_a_release_is_stored_as_its_changes(
    before: dict[str, str], after: dict[str, str], delta: dict[str, tuple[str, ...]]
) -> None:
    assert changes(before, after) == delta
    assert apply(before, delta) == after


def test_releases_without_changes_share_the_one_before() -> None:
    flags = {"--a": "value", "--b": "switch"}
    later = {"--a": "list"}
    text = render_data({"0.5.10": later, "0.5.8": flags, "0.5.9": dict(flags)})
    namespace: dict[str, object] = {}
    exec(compile(text, "sglang_flag_data.py", "exec"), namespace)
    assert namespace["BASE_RELEASE"] == "0.5.8"
    assert namespace["BASE"] == {"switch": ("--b",), "value": ("--a",), "optional": (), "list": ()}
    assert namespace["CHANGES"] == {"0.5.9": {}, "0.5.10": {"list": ("--a",), REMOVED: ("--b",)}}
    assert set(ARITIES) | {REMOVED} == {"switch", "value", "optional", "list", "removed"}


@pytest.mark.parametrize("release", ["0.5.7", "0.5.23"])
def test_a_typo_names_the_flag_it_meant(release: str) -> None:
    with pytest.raises(UnknownFlagError, match="did you mean --attention-backend"):
        canonical_flag("--atention-backend", release)
    # argparse accepts an unambiguous prefix, and so do we
    assert canonical_flag("--kv-cache-dt", release) == "--kv-cache-dtype"
    with pytest.raises(UnknownFlagError, match="ambiguous"):
        canonical_flag("--speculative-a", release)


def test_a_flag_is_read_with_the_arity_of_its_release() -> None:
    command = [*LAUNCH, OPTIONAL_THEN_SWITCH, "0.5", "--attention-backend", "triton"]
    old = parse_launch_command(command, "0.5.7")
    assert old.ignored == (f"{OPTIONAL_THEN_SWITCH} 0.5",) and not old.problems
    new = parse_launch_command(command, "0.5.8")
    assert new.problems == ("unexpected argument '0.5' in the launch command",)
    assert parse_launch_command([*LAUNCH, NEW_IN_0_5_23, "2"], "0.5.23").ignored == (
        f"{NEW_IN_0_5_23} 2",
    )
    for older in ("0.5.7", "0.5.22"):
        problems = parse_launch_command([*LAUNCH, NEW_IN_0_5_23, "2"], older).problems
        assert problems[0].startswith(f"SGLang {older} has no flag {NEW_IN_0_5_23}")


def test_values_and_switches_are_read_by_arity() -> None:
    launch = parse_launch_command(
        [
            *LAUNCH,
            "--enable-metrics",
            "--trust-remote-code",
            "--model-path",
            "org/name",
            "--lora-paths",
            "a",
            "b",
            "--attention-backend=triton",
            "--page-size",
            "16",
        ]
    )
    assert launch.values == {
        "trust_remote_code": SWITCH_GIVEN,
        "attention_backend": "triton",
        "page_size": "16",
    }
    assert launch.model_path == "org/name"
    assert launch.ignored == ("--enable-metrics", "--lora-paths a b")
    assert "--model-path org/name" in launch.used and not launch.problems


def test_the_launch_release_is_the_one_the_guard_predicts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPAT_SGLANG_VERSION", "0.5.9")
    assert launch_release("0.5.23") == "0.5.23"
    assert launch_release(None) == "0.5.9"
    assert launch_release("0.5.12.post1") == "0.5.12"
    # Named, a release must be modelled, even one newer than all of them.
    with pytest.raises(
        ValueError, match=rf"SGLang 0\.6\.0 is newer than .* \({re.escape(RELEASE_NAMES[-1])}\)"
    ):
        launch_release("0.6.0")
    with pytest.raises(ValueError, match=r"SGLang 0\.5\.6 is older than the oldest release"):
        launch_release("0.5.6")


def _check(
    *args: str, version: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    given = [] if version is None else ["--sglang-version", version]
    result = subprocess.run(
        [sys.executable, "-m", "compat", "check", *given, *B200, "--", *LAUNCH, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.mark.parametrize("release", ["0.5.7", "0.5.23"])
def test_a_typo_in_a_pasted_command_is_invalid_on_every_release(release: str) -> None:
    result = _check("--atention-backend", "triton", version=release)
    assert result.returncode == 2
    assert f"SGLang {release} has no flag --atention-backend" in result.stderr
    assert "did you mean --attention-backend" in result.stderr


def test_a_pasted_command_is_read_with_the_predicted_release() -> None:
    args = ("--attention-backend", "triton", NEW_IN_0_5_23, "2")
    newest = _check(*args, version="0.5.23")
    assert newest.returncode == 0, newest.stderr
    assert f"ignored launch flags (not modeled): {NEW_IN_0_5_23} 2" in newest.stdout
    oldest = _check(*args, version="0.5.7")
    assert oldest.returncode == 2
    assert f"SGLang 0.5.7 has no flag {NEW_IN_0_5_23}" in oldest.stderr
    from_environment = _check(*args, env={"COMPAT_SGLANG_VERSION": "0.5.22"})
    assert from_environment.returncode == 2
    assert f"SGLang 0.5.22 has no flag {NEW_IN_0_5_23}" in from_environment.stderr
    unknown = _check(*args, version="0.6.0")
    assert unknown.returncode == 2
    newest = RELEASE_NAMES[-1]
    assert f"SGLang 0.6.0 is newer than the newest release modelled ({newest})" in unknown.stderr
