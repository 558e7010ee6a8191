"""The plugin never stops a launch for a reason of its own: only a verdict may (issue 42).

An installed sglang whose version holds a NUL byte, bytes that are not UTF-8, nothing, or a
PEP 440 spelling other than X.Y.Z; a ServerArgs whose fields have the wrong types or cannot
be read: the hook either lets the launch start or raises a verdict, never anything else.
The fuzz runs the plugin's own `register()` over each installed version (a `.dist-info` on
`sys.path`, as `pip install` leaves it) and calls the hook it registers, inside SGLang
0.5.23's runtime on a B200, so that the guard really judges.
"""

from __future__ import annotations

import importlib
import logging
import math
import random
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conformance import plugin_dist
from conformance.availability import require_source
from conformance.harness import open_runtime

from compat import sglang_plugin
from compat.guard.policy import POLICY_VARIABLE
from compat.guard.report import IncompatibleConfigError
from compat.inputs.flags import FLAG_FIELDS
from compat.inputs.installed import installed_sglang_version
from compat.inputs.release_choice import VERSION_VARIABLE
from compat.releases import NEWEST
from compat.sglang_plugin import JUDGED_VARIABLE, SPOKEN_VARIABLE

MODEL = "Llama-3.1-8B"
VALID = ("--attention-backend", "flashinfer")
# fa3 needs sm80-sm90: the page documents it as unsupported on a B200 (a verdict).
DOCUMENTED_ONLY = ("--attention-backend", "fa3")
SEED = 42
ARGS_PER_VERSION = 40

# The 13 kinds of installed version: (kind, the METADATA's Version bytes).
VERSIONS: tuple[tuple[str, bytes], ...] = (
    ("normal", NEWEST.encode()),
    ("post", f"{NEWEST}.post1".encode()),
    ("local", f"{NEWEST}+cu128".encode()),
    ("rc", b"0.5.24rc1"),
    ("dev", b"0.5.24.dev0"),
    ("epoch", b"1!0.5.0"),
    ("4-part", f"{NEWEST}.1".encode()),
    ("2-part", b"1.0"),
    ("huge", b"9" * 5000 + b".0"),
    ("nul-byte", NEWEST.encode() + b"\x00"),
    ("not-utf8", NEWEST.encode() + b"\xff\xfe"),
    ("empty", b""),
    ("garbage", b"not a version!"),
)


@dataclass
class Tally:
    runs: int = 0
    verdicts: int = 0
    stopped: list[str] = field(default_factory=list)


class _Registry:
    """SGLang's HookRegistry, as far as `register()` uses it: it keeps the hook added."""

    hooks: ClassVar[list[tuple[str, Callable[..., None]]]] = []

    @classmethod
    def register(cls, target: str, hook: Callable[..., None], kind: object) -> None:
        cls.hooks.append((target, hook))


@contextmanager
def _registered(root: Path, version: bytes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The hook `register()` adds for an sglang installed at `version` (None: none added)."""
    for variable in (JUDGED_VARIABLE, SPOKEN_VARIABLE):  # a new launch: no release known yet
        monkeypatch.delenv(variable, raising=False)
    plugin_dist.install_raw(root, version)
    registry = types.ModuleType("sglang.srt.plugins.hook_registry")
    registry.HookRegistry = _Registry  # type: ignore[attr-defined]
    registry.HookType = types.SimpleNamespace(AFTER="after")  # type: ignore[attr-defined]
    _Registry.hooks = []
    # Undone when this block ends, not with the test: inside a release's runtime the real
    # registry is what the stand-in replaces, and the runtime removes it on its own exit.
    with pytest.MonkeyPatch.context() as local:
        local.syspath_prepend(str(root))
        local.setitem(sys.modules, "sglang.srt.plugins.hook_registry", registry)
        try:
            sglang_plugin.register()  # never raises: a failure is logged
            yield _Registry.hooks[0][1] if _Registry.hooks else None
        finally:
            installed_sglang_version.cache_clear()
            importlib.invalidate_caches()


class _Unreadable:
    """A ServerArgs whose every field raises when read."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"cannot read {name}")


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def _wrong_value(rng: random.Random) -> object:
    pool: list[Callable[[], object]] = [
        lambda: None,
        lambda: rng.randint(-(2**70), 2**70),
        lambda: rng.choice([math.nan, math.inf, -0.0, 1.5]),
        lambda: rng.choice(["", "fa3", "flashinfer", "trtllm_mha", "auto", "\x00", "\udcff"]),
        lambda: "x" * rng.randint(1000, 100_000),
        lambda: b"flashinfer",
        lambda: [rng.random()],
        lambda: {"attention_backend": "fa3"},
        lambda: object(),
        lambda: _Unprintable(),
        lambda: rng.random() < 0.5,
        lambda: (1, 2),
    ]
    return rng.choice(pool)()


def _wrong_server_args(rng: random.Random) -> tuple[object | None, dict[str, object]]:
    """A ServerArgs that is not one (None: SGLang's own, with these fields changed), or a
    bare object with fields of the wrong type."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice([None, 5, "server_args", _Unreadable(), [], _Unprintable()]), {}
    names = (*FLAG_FIELDS, "model_path", "revision", "device", "tp_size")
    if roll < 0.5:  # SGLang's resolved ServerArgs, a few fields changed: some a verdict
        changes: dict[str, object] = {}
        for name in rng.sample(names, rng.randint(1, 3)):
            backend = "backend" in name and rng.random() < 0.5
            changes[name] = "fa3" if backend else _wrong_value(rng)
        return None, changes
    fields = {name: _wrong_value(rng) for name in rng.sample(names, rng.randint(1, len(names)))}
    return types.SimpleNamespace(**fields), {}


def _call(hook: Callable[..., None], server_args: object, tally: Tally, label: str) -> None:
    tally.runs += 1
    try:
        hook(None, server_args)
    except IncompatibleConfigError:
        tally.verdicts += 1  # a verdict: the one reason allowed
    except BaseException as error:  # anything else stopped the launch
        tally.stopped.append(f"{label}: {type(error).__name__}: {str(error)[:200]}")


class _Changed:
    """SGLang's own resolved ServerArgs (read-only after resolution) seen with some fields
    changed: every other attribute, its model config included, is the real one's."""

    def __init__(self, real: object, changes: dict[str, object]) -> None:
        self._real = real
        self._changes = changes

    def __getattr__(self, name: str) -> Any:
        if name in self._changes:
            return self._changes[name]
        return getattr(self._real, name)


@pytest.fixture(autouse=True)
def a_fresh_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing said or judged yet, no policy or release named; and what the plugin writes
    into the environment is undone after the test (set first, so that monkeypatch restores)."""
    for variable in (SPOKEN_VARIABLE, JUDGED_VARIABLE, POLICY_VARIABLE, VERSION_VARIABLE):
        monkeypatch.setenv(variable, "")
        monkeypatch.delenv(variable)


def test_fuzz_no_installed_version_or_wrong_typed_server_args_stops_a_valid_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_source(NEWEST)
    rng = random.Random(SEED)
    tally, valid, registered = Tally(), Tally(), 0
    with open_runtime(NEWEST, "B200") as runtime:
        server_args = runtime.server_args(MODEL, VALID)
        # The base of some changed ServerArgs: a launch the page documents as unsupported.
        documented_only = runtime.server_args(MODEL, DOCUMENTED_ONLY)
        for index, (kind, version) in enumerate(VERSIONS):
            with _registered(tmp_path / str(index), version, monkeypatch) as hook:
                if hook is None:  # metadata it cannot read: no check, and the launch starts
                    assert kind == "not-utf8"
                    continue
                registered += 1
                for _ in range(3):  # as SGLang resolves its arguments again, and a worker
                    _call(hook, server_args, valid, f"{kind} valid")
                monkeypatch.delenv(JUDGED_VARIABLE, raising=False)
                for attempt in range(ARGS_PER_VERSION):
                    monkeypatch.delenv(JUDGED_VARIABLE, raising=False)
                    wrong, changes = _wrong_server_args(rng)
                    label = f"{kind} #{attempt}"
                    _call(
                        hook,
                        wrong
                        if wrong is not None
                        else _Changed(rng.choice([server_args, documented_only]), changes),
                        tally,
                        label,
                    )
    with capsys.disabled():
        print(
            f"\nplugin fuzz (seed {SEED}): {len(VERSIONS)} installed versions, {registered} "
            f"hooks; {valid.runs} valid launches, {len(valid.stopped) + valid.verdicts} "
            f"stopped; {tally.runs} wrong-typed ServerArgs, {tally.verdicts} verdicts, "
            f"{len(tally.stopped)} stopped by the plugin"
        )
    assert registered == len(VERSIONS) - 1
    assert valid.runs == 3 * registered and valid.stopped == [] and valid.verdicts == 0
    assert tally.runs == ARGS_PER_VERSION * registered and tally.stopped == []


@pytest.mark.parametrize("version", [NEWEST.encode() + b"\x00", b"", b"\x00"])
def test_h3_a_nul_byte_in_the_installed_version_does_not_stop_a_valid_launch(
    version: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """SGLang's own load_plugins() and resolution: the launch starts (it was a ValueError)."""
    require_source(NEWEST)
    plugin_dist.install_raw(tmp_path, version)
    monkeypatch.syspath_prepend(str(tmp_path))
    installed_sglang_version.cache_clear()
    try:
        with (
            caplog.at_level(logging.WARNING, logger="compat"),
            open_runtime(NEWEST, "B200") as runtime,
        ):
            importlib.import_module("sglang.srt.plugins").load_plugins()
            outcome = runtime.outcome(MODEL, VALID)
    finally:
        installed_sglang_version.cache_clear()
    assert not outcome.refused, outcome.error
    assert all("Traceback" not in r.getMessage() and r.exc_info is None for r in caplog.records)


def test_h3_a_verdict_still_refuses_when_the_launch_cannot_be_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only remembering fails (the environment refuses the value): the verdict stands."""
    require_source(NEWEST)

    def refuses(*args: Any) -> None:
        raise ValueError("embedded null byte")

    monkeypatch.setattr(sglang_plugin, "_remember", refuses)
    with open_runtime(NEWEST, "B200") as runtime:
        server_args = runtime.server_args(MODEL, VALID)
        refused = runtime.server_args(MODEL, DOCUMENTED_ONLY)
        with _registered(tmp_path, NEWEST.encode(), monkeypatch) as hook:
            hook(None, server_args)  # starts
            with pytest.raises(IncompatibleConfigError, match="refused this launch"):
                hook(None, refused)


def test_m6_metadata_that_is_not_utf8_is_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    with (
        caplog.at_level(logging.DEBUG, logger="compat"),
        _registered(tmp_path, b"0.5.23\xff", monkeypatch) as hook,
    ):
        assert hook is None
    records = [r for r in caplog.records if r.name.startswith("compat")]
    assert len(records) == 1 and records[0].exc_info is None, records
    line = records[0].getMessage()
    assert "\n" not in line and "not UTF-8 (byte 0xff" in line and "METADATA" in line
