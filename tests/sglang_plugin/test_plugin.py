"""The SGLang plugin, loaded by each release's own `load_plugins()` and run by its own hooks.

In the conformance harness (the release's wheel, a fake torch for a B200, stubs): the
project's entry point is made visible to `importlib.metadata` by a `.dist-info` directory on
`sys.path` (with an `sglang` one naming the release, as an installed SGLang would), SGLang's
`load_plugins()` runs it, and `ServerArgs` is built as the launcher builds it (argument
parser, construction, and from 0.5.19 `resolve_once()`), before any weight could load.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conformance import plugin_dist
from conformance.availability import require_source
from conformance.harness import StartupOutcome, open_runtime
from paths import ROOT

import compat.guard.enforce
from compat import sglang_plugin
from compat.guard.policy import POLICY_VARIABLE, Policy, PolicyError, parse_policy
from compat.guard.report import Enforcement
from compat.inputs.installed import installed_sglang_version
from compat.sglang_plugin import (
    ENTRY_POINT,
    JUDGED_VARIABLE,
    POST_INIT,
    RESOLVE_ONCE,
    SPOKEN_VARIABLE,
    hook_target,
)

RELEASES = ("0.5.11", "0.5.16", "0.5.23")
MODEL = "Llama-3.1-8B"
# fa3 needs sm80-sm90: the page says it does not run on a B200; SGLang starts it, then its
# attention registry fails building fa3 after the weights load.
FAILS_BUILDING = ("--attention-backend", "fa3")
# flashmla for an MHA model: a documented ❌ (the MHA table has no row for it) that SGLang's
# start-up accepts and its attention registry builds. (EAGLE on torch_native was one until the
# draft model's build: torch_native has no draft variant.)
PAGE_ONLY = ("--attention-backend", "flashmla")
# SGLang's own start-up refuses EAGLE topk > 1 with paged KV on torch_native.
SGLANG_REFUSES = (
    *("--attention-backend", "torch_native", "--page-size", "64"),
    *("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"),
    *("--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
)
VALID = ("--attention-backend", "flashinfer")
GROUP = plugin_dist.GROUP


@pytest.fixture(autouse=True)
def a_fresh_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a launch of its own: nothing said, nothing judged yet."""
    monkeypatch.delenv(SPOKEN_VARIABLE, raising=False)
    monkeypatch.delenv(JUDGED_VARIABLE, raising=False)


@contextmanager
def sglang_with_plugin(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sglang_plugins: str = ""
) -> Iterator[Any]:
    """Release `version` on a B200 after its `load_plugins()` ran with this project visible."""
    require_source(version)
    plugin_dist.install(tmp_path, version)
    monkeypatch.syspath_prepend(str(tmp_path))
    installed_sglang_version.cache_clear()
    try:
        with open_runtime(version, "B200") as runtime:
            if sglang_plugins:
                monkeypatch.setenv("SGLANG_PLUGINS", sglang_plugins)
            importlib.import_module("sglang.srt.plugins").load_plugins()
            yield runtime
    finally:
        installed_sglang_version.cache_clear()


@contextmanager
def _logged_launches(
    version: str, where: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any, level: int
) -> Iterator[Any]:
    """`sglang_with_plugin`, with the plugin's log captured from `level` on."""
    with (
        caplog.at_level(level, logger="compat"),
        sglang_with_plugin(version, where, monkeypatch) as runtime,
    ):
        yield runtime


def _launch(runtime: Any, argv: tuple[str, ...]) -> StartupOutcome:
    outcome: StartupOutcome = runtime.outcome(MODEL, argv)
    return outcome


@pytest.mark.parametrize("version", RELEASES)
def test_a_documented_unsupported_launch_is_refused_while_the_args_resolve(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    with sglang_with_plugin(version, tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert outcome.refused
    error = outcome.error or ""
    # Raised from inside ServerArgs' own resolution: nothing after it (weights) ran.
    assert error.startswith("LaunchRefusedError: attention-compat refused this launch"), error
    assert f"SGLang {version}" in error and f"{POLICY_VARIABLE}=documented" in error
    assert "[compute-capability]" in error and "fa3" in error
    # SGLang would start and fail only when it builds fa3, after the weights loaded.
    assert f"enforced: {Enforcement.BACKEND_BUILD.label}" in error
    assert "try: " in error  # the suggested flags


@pytest.mark.parametrize("version", RELEASES)
def test_under_parity_the_launch_sglang_accepts_starts(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "parity")
    with sglang_with_plugin(version, tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, PAGE_ONLY)
    assert not outcome.refused, outcome.error
    assert outcome.prefill_backend == outcome.decode_backend == "flashmla"


@pytest.mark.parametrize("version", RELEASES)
def test_under_parity_a_launch_whose_backend_build_fails_is_refused(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "parity")
    with sglang_with_plugin(version, tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert outcome.refused and "LaunchRefusedError" in (outcome.error or "")
    assert "[build-gpu]" in (outcome.error or "") and "attention_registry.py:" in (
        outcome.error or ""
    )


@pytest.mark.parametrize("version", RELEASES)
def test_warn_only_logs_the_refusal_and_starts(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "warn")
    with _logged_launches(version, tmp_path, monkeypatch, caplog, logging.WARNING) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert not outcome.refused, outcome.error
    logged = [r.getMessage() for r in caplog.records if "[compute-capability]" in r.getMessage()]
    # The page's word and SGLang's own failure when it builds fa3.
    assert logged and logged[0].startswith("attention-compat starts this launch anyway (2 problems")
    assert "[build-gpu]" in logged[0]


@pytest.mark.parametrize("policy", ["documented", "parity"])
@pytest.mark.parametrize("version", RELEASES)
def test_a_launch_sglang_refuses_stays_refused(
    version: str, policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, policy)
    with sglang_with_plugin(version, tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, SGLANG_REFUSES)
    assert outcome.refused
    assert "LaunchRefusedError" not in (outcome.error or "")  # SGLang's own words come first


@pytest.mark.parametrize("version", RELEASES)
def test_a_crash_of_the_plugin_does_not_stop_a_launch(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    calls: list[Any] = []

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise RuntimeError("a bug in the guard")

    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    monkeypatch.setattr(compat.guard.enforce, "enforce", broken)
    with _logged_launches(version, tmp_path, monkeypatch, caplog, logging.WARNING) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert calls, "the hook never ran"
    assert not outcome.refused, outcome.error
    assert any("could not check this launch" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("policy", ["documented", "warn"])
def test_a_crash_while_wording_a_refusal_keeps_the_policy(
    policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("a bug in the wording")

    monkeypatch.setenv(POLICY_VARIABLE, policy)
    monkeypatch.setattr("compat.sglang_plugin.judge.refusal_message", broken)
    with sglang_with_plugin("0.5.23", tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    if policy == "warn":
        assert not outcome.refused, outcome.error
    else:  # the guard's own message still refuses it
        assert (outcome.error or "").startswith("IncompatibleConfigError: incompatible")


@pytest.mark.parametrize("version", RELEASES)
def test_a_crash_while_registering_does_not_stop_sglang(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken() -> str:
        raise RuntimeError("metadata is broken")

    monkeypatch.setattr("compat.inputs.installed.installed_sglang_version", broken)
    with _logged_launches(version, tmp_path, monkeypatch, caplog, logging.WARNING) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert not outcome.refused, outcome.error
    assert any("plugin is not active" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("version", RELEASES)
def test_sglang_plugins_naming_another_plugin_disables_it(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    with sglang_with_plugin(version, tmp_path, monkeypatch, sglang_plugins="other") as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
    assert not outcome.refused, outcome.error


@pytest.mark.parametrize("version", RELEASES)
def test_a_valid_launch_starts_with_the_plugin_active(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    original = compat.guard.enforce.enforce

    def spy(server_args: Any, **kwargs: Any) -> Any:
        report = original(server_args, **kwargs)
        seen.append((kwargs["sglang_version"], report.resolved.prefill_backend))
        return report

    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    monkeypatch.setattr(compat.guard.enforce, "enforce", spy)
    with sglang_with_plugin(version, tmp_path, monkeypatch) as runtime:
        outcome = _launch(runtime, VALID)
    assert not outcome.refused, outcome.error
    assert seen == [(version, "flashinfer")]  # once, for the installed release


@pytest.mark.parametrize(
    ("version", "target"),
    [
        ("0.5.11", POST_INIT),
        ("0.5.18", POST_INIT),
        ("0.5.19", RESOLVE_ONCE),
        ("0.5.23", RESOLVE_ONCE),
    ],
)
def test_the_hook_goes_where_the_release_resolves(version: str, target: str) -> None:
    assert hook_target(version) == target


def test_without_a_plugin_framework_nothing_is_registered(
    monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    from compat import sglang_plugin

    monkeypatch.setattr("compat.inputs.installed.installed_sglang_version", lambda: "0.5.7")
    monkeypatch.setitem(sys.modules, "sglang.srt.plugins.hook_registry", None)
    with caplog.at_level(logging.INFO, logger="compat"):
        sglang_plugin.register()
    assert any("has no hook registry" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        (None, Policy.DOCUMENTED),
        ("", Policy.DOCUMENTED),
        ("Parity", Policy.PARITY),
        ("warn", Policy.WARN),
    ],
)
def test_the_policy_variable(text: str | None, policy: Policy) -> None:
    assert parse_policy(text) is policy


def test_a_mistyped_policy_names_the_choices() -> None:
    with pytest.raises(PolicyError, match=r"'parrity' is not a policy; use one of documented, "
                       r"parity, warn; did you mean 'parity'\?"):  # fmt: skip
        parse_policy("parrity")


def test_the_installed_project_declares_the_plugin() -> None:
    """What SGLang's load_plugins() finds in a venv where the project is installed."""
    found = [ep for ep in metadata.entry_points(group=GROUP) if ep.name == ENTRY_POINT]
    assert [ep.value for ep in found] == ["compat.sglang_plugin:register"]
    assert found[0].dist is not None and found[0].dist.name == "attention-compat"
    assert callable(found[0].load())


def test_the_start_up_benchmark_measures_both_resolutions() -> None:
    """benchmarks/plugin.py runs end to end (its timings are not asserted here)."""
    import subprocess

    require_source("0.5.11")
    script = ROOT / "benchmarks" / "plugin.py"
    done = subprocess.run(
        [sys.executable, str(script), "0.5.11", "--repeats", "1", "--processes", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("0.5.11 "))
    figures = [float(value) for value in row.split()[1:]]
    assert len(figures) == 8 and all(value > 0 for value in figures), row
    assert "the plugin adds at most" in done.stdout


# == Speaking once per launch, naming itself, and never dying of its own logging (#22) ==========


def _spoken(caplog: Any, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


def test_warn_block_appears_once_when_sglang_resolves_again_and_a_worker_rechecks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "warn")
    with _logged_launches("0.5.23", tmp_path, monkeypatch, caplog, logging.INFO) as runtime:
        _launch(runtime, FAILS_BUILDING)
        _launch(runtime, FAILS_BUILDING)  # SGLang resolves the same arguments again
        # A worker: another process with the launcher's environment, the hook's target in it.
        assert os.environ[JUDGED_VARIABLE].startswith(RESOLVE_ONCE + ";")
        spoken = os.environ[SPOKEN_VARIABLE]
        monkeypatch.delenv(SPOKEN_VARIABLE)  # even with what was said forgotten:
        outcome = _launch(runtime, FAILS_BUILDING)  # the launch is not judged again
        monkeypatch.setenv(SPOKEN_VARIABLE, spoken)
        # Other arguments in the same environment are another launch: judged, and spoken of.
        other = _launch(runtime, ("--attention-backend", "fa3", "--page-size", "16"))
    assert not outcome.refused and not other.refused, (outcome.error, other.error)
    assert len(_spoken(caplog, "starts this launch anyway")) == 2
    # Another launch (another environment) speaks again.
    monkeypatch.delenv(SPOKEN_VARIABLE, raising=False)
    again = tmp_path / "again"
    with _logged_launches("0.5.23", again, monkeypatch, caplog, logging.INFO) as runtime:
        _launch(runtime, FAILS_BUILDING)
    assert len(_spoken(caplog, "starts this launch anyway")) == 3


def test_a_mistyped_policy_is_named_once_per_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "parrity")
    with _logged_launches("0.5.23", tmp_path, monkeypatch, caplog, logging.INFO) as runtime:
        for _ in range(3):
            outcome = _launch(runtime, VALID)
    assert not outcome.refused, outcome.error
    (line,) = _spoken(caplog, "is not a policy")
    assert line.startswith("attention-compat: COMPAT_POLICY='parrity' is not a policy")


def test_every_line_the_plugin_logs_names_attention_compat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "warn")
    with _logged_launches("0.5.23", tmp_path, monkeypatch, caplog, logging.DEBUG) as runtime:
        _launch(runtime, FAILS_BUILDING)
    lines = [line for r in caplog.records for line in r.getMessage().splitlines()]
    assert len(lines) > 5  # the warn block: verdict, runs as, the finding, fixes, advice
    assert all(line.startswith("attention-compat") for line in lines), lines


def test_under_parity_documented_only_problems_are_logged_on_one_info_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "parity")
    with _logged_launches("0.5.23", tmp_path, monkeypatch, caplog, logging.INFO) as runtime:
        outcome = _launch(runtime, PAGE_ONLY)
        _launch(runtime, PAGE_ONLY)
    assert not outcome.refused, outcome.error
    records = [r for r in caplog.records if "SGLang starts this launch" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    line = records[0].getMessage()
    assert "\n" not in line and "[arch-refused]" in line, line
    assert line.startswith("attention-compat: SGLang starts this launch (COMPAT_POLICY=parity)")


class _RaisingHandler(logging.Handler):
    """A handler whose emit raises, as a broken log shipper would (Handler.handle does not
    catch what emit raises)."""

    def emit(self, record: logging.LogRecord) -> None:
        raise OSError("the log shipper is down")


@pytest.mark.parametrize("policy", ["warn", "parity", "parrity"])
def test_a_logging_handler_that_raises_never_stops_a_launch(
    policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, policy)
    handler = _RaisingHandler()
    compat_logger = logging.getLogger("compat")
    compat_logger.addHandler(handler)
    try:
        with sglang_with_plugin("0.5.23", tmp_path, monkeypatch) as runtime:
            outcome = _launch(runtime, VALID if policy == "parrity" else PAGE_ONLY)
    finally:
        compat_logger.removeHandler(handler)
    assert not outcome.refused, outcome.error


def test_enforce_with_a_raising_handler_still_returns_its_report() -> None:
    from compat import enforce

    handler = _RaisingHandler()
    compat_logger = logging.getLogger("compat")
    compat_logger.addHandler(handler)
    try:
        # SGLang's default backend on a B200: passes, with an info line the handler fails on.
        report = enforce(
            {"attention_backend": None},
            attention_arch="mha",
            platform="cuda",
            compute_capability=(10, 0),
            sglang_version="0.5.23",
        )
    finally:
        compat_logger.removeHandler(handler)
    assert report.ok and report.infos  # something was logged, and the raise was swallowed


def _other_plugin(root: Path, name: str) -> None:
    """Another general plugin installed beside SGLang (as smg-servicer is), which records
    that SGLang ran it."""
    module = f"plugin_{name.replace('-', '_')}"
    (root / f"{module}.py").write_text(
        f"import os\n\ndef register():\n    os.environ['RAN_{module.upper()}'] = '1'\n"
    )
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {module}:register\n")


def test_disable_advice_names_the_sglang_plugins_value_that_keeps_smg_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = ("RAN_PLUGIN_SMG_SERVICER", "RAN_PLUGIN_SMG_ZMQ")
    for name in ("smg-servicer", "smg-zmq"):
        _other_plugin(tmp_path, name)
    monkeypatch.delenv("SGLANG_PLUGINS", raising=False)
    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    with sglang_with_plugin("0.5.23", tmp_path, monkeypatch) as runtime:
        refused = _launch(runtime, FAILS_BUILDING)
    advice = "SGLANG_PLUGINS=smg-servicer,smg-zmq disables this check and keeps the other plugins"
    assert advice in (refused.error or ""), refused.error
    for variable in ran:
        monkeypatch.delenv(variable, raising=False)
    # Followed, the advice keeps both other plugins and drops this one.
    with sglang_with_plugin(
        "0.5.23", tmp_path / "advised", monkeypatch, sglang_plugins="smg-servicer,smg-zmq"
    ) as runtime:
        outcome = _launch(runtime, FAILS_BUILDING)
        assert [os.environ.get(variable) for variable in ran] == ["1", "1"]
    assert not outcome.refused, outcome.error


def test_disable_advice_keeps_the_names_sglang_plugins_already_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SGLANG_PLUGINS", "attention_compat, smg-zmq")
    assert sglang_plugin.disable_advice() == (
        "SGLANG_PLUGINS=smg-zmq disables this check and keeps the other plugins"
    )
    monkeypatch.setenv("SGLANG_PLUGINS", "attention_compat")
    assert sglang_plugin.disable_advice().startswith("SGLANG_PLUGINS=none disables this check")


def test_the_garbage_collector_is_paused_only_while_the_plugin_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    seen: list[bool] = []
    original = compat.guard.enforce.enforce

    def spy(server_args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return original(server_args, **kwargs)

    monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    monkeypatch.setattr(compat.guard.enforce, "enforce", spy)
    assert gc.isenabled()
    with sglang_with_plugin("0.5.23", tmp_path, monkeypatch) as runtime:
        refused = _launch(runtime, FAILS_BUILDING)
    assert seen == [False]  # paused while it judged
    assert refused.refused and gc.isenabled()  # and back on, even after a refusal
