"""An SGLang general plugin: every launch is checked against the matrix before a weight loads.

SGLang 0.5.11 and later run the callables of the entry-point group `sglang.srt.plugins` in
`load_plugins()`, before `ServerArgs` is built. `register()` adds an AFTER hook, through the
release's own `HookRegistry`, on the method that resolves the arguments: `__post_init__` up to
0.5.18, `resolve_once()` from 0.5.19. The hook calls `enforce()` with the installed release and
the policy of `COMPAT_POLICY`. Only a refusal leaves the hook: a failure of the plugin itself
is logged and SGLang goes on, so the plugin is never the reason a valid launch dies; nor is
logging (a handler that raises is ignored).

SGLang resolves its arguments several times per launch and starts workers that resolve them
again; each runs the hook. The plugin speaks and judges once per launch: what it said
(`SPOKEN_VARIABLE`) and the launches it let through (`JUDGED_VARIABLE`, with the hook's
target) are kept in the environment, which the workers inherit; a worker neither loads the
guard nor judges again the arguments its launcher judged. SGLang's log format drops logger
names, so every line the plugin logs starts with "attention-compat".

Loading this module imports neither SGLang (beyond its hook registry) nor torch, nor the
guard: that is `compat.sglang_plugin.judge`, loaded when a launch is first judged, so a
worker whose launch its launcher judged pays only for reading the environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from typing import TYPE_CHECKING, Any

from compat.guard.collector import gc_paused

if TYPE_CHECKING:
    from compat.guard.report import Report
    from compat.sglang_plugin.judge import LaunchRefusedError as LaunchRefusedError
    from compat.sglang_plugin.judge import refusal_message as refusal_message

ENTRY_POINT = "attention_compat"
"""The plugin's name in `SGLANG_PLUGINS` (the entry point's name in pyproject.toml)."""
POST_INIT = "sglang.srt.server_args.ServerArgs.__post_init__"
RESOLVE_ONCE = "sglang.srt.server_args.ServerArgs.resolve_once"
GROUP = "sglang.srt.plugins"
"""SGLang's entry-point group of general plugins."""
PLUGINS_VARIABLE = "SGLANG_PLUGINS"
SPOKEN_VARIABLE = "COMPAT_PLUGIN_SPOKEN"
"""Digests of the messages already logged in this launch; SGLang's workers inherit it."""
JUDGED_VARIABLE = "COMPAT_PLUGIN_JUDGED"
"""`TARGET;VERSION;DIGEST,...`: the hook's target, the installed release and the digests of
the launches let through."""
NAME = "attention-compat"
# What else a launch's verdict depends on, besides the flags the guard reads.
_LAUNCH_FIELDS = ("model_path", "revision", "device", "tp_size")
logger = logging.getLogger("compat.sglang_plugin")


def disable_advice() -> str:
    """How to turn the check off without uninstalling it, and keep every other general plugin
    SGLang loads: the exact `SGLANG_PLUGINS` value (the names it lists now, else the installed
    plugins of the group), without this one."""
    current = os.environ.get(PLUGINS_VARIABLE, "")
    if current.strip():
        names = [name.strip() for name in current.split(",")]
    else:
        names = _installed_plugins()
    others = [name for name in dict.fromkeys(names) if name and name != ENTRY_POINT]
    if not others:
        return f"{PLUGINS_VARIABLE}=none disables this check; no other SGLang plugin is loaded"
    import shlex

    value = shlex.quote(",".join(others))
    return f"{PLUGINS_VARIABLE}={value} disables this check and keeps the other plugins"


def _installed_plugins() -> list[str]:
    """The names of the installed general plugins, as `load_plugins()` finds them. Reads each
    distribution's entry points file once and parses only those that name the group:
    `entry_points(group=...)` parses every distribution's (6 to 14 ms in SGLang's venv)."""
    from importlib.metadata import distributions

    names: list[str] = []
    for dist in distributions():
        text = dist.read_text("entry_points.txt")
        if text and f"[{GROUP}]" in text:
            names += [entry.name for entry in dist.entry_points if entry.group == GROUP]
    return names


def say(level: int, text: str, *, exc_info: BaseException | bool | None = None) -> None:
    """Log `text` once per launch, each line naming attention-compat.

    Once: a message's digest is added to `SPOKEN_VARIABLE` in this process's environment,
    which SGLang's workers inherit. Logging never stops a launch: a handler that raises is
    ignored (its record is lost, the launch goes on).
    """
    try:
        digest = hashlib.blake2b(text.encode(errors="replace"), digest_size=6).hexdigest()
        spoken = [d for d in os.environ.get(SPOKEN_VARIABLE, "").split(",") if d]
        if digest in spoken:
            return
        os.environ[SPOKEN_VARIABLE] = ",".join([*spoken[-63:], digest])
        lines = text.splitlines() or [""]
        named = [line if line.startswith(NAME) else f"{NAME}: {line}" for line in lines]
        logger.log(level, "%s", "\n".join(named), exc_info=exc_info)
    except Exception:  # a broken handler must not turn a warning into a dead launch
        return


def register() -> None:
    """The entry point `load_plugins()` runs: add the hook, or log why not. Never raises."""
    try:
        with gc_paused():
            _register()
    except Exception as error:  # the plugin must never stop SGLang from starting
        say(logging.WARNING, f"{NAME}: the SGLang plugin is not active", exc_info=error)


def _register() -> None:
    from compat.inputs.installed import UnreadableMetadataError, installed_sglang_version

    # A worker takes its launcher's target and release: it need not read metadata or releases.
    known_target, known_version, _ = _judged()
    try:
        version = known_version or installed_sglang_version()
    except UnreadableMetadataError as error:  # one line: a traceback would say nothing more
        say(logging.WARNING, f"{NAME}: {error}; no launch check")
        return
    if version is None:
        say(logging.WARNING, f"{NAME}: no installed sglang distribution; no launch check")
        return
    try:
        from sglang.srt.plugins.hook_registry import (  # type: ignore[import-not-found]
            HookRegistry,
            HookType,
        )
    except ImportError:  # releases before 0.5.11 have no plugin framework
        say(logging.INFO, f"{NAME}: SGLang {version} has no hook registry; no launch check")
        return
    target = known_target or hook_target(version)
    HookRegistry.register(target, _hook(version, target), HookType.AFTER)


def hook_target(version: str) -> str:
    """The method after which release `version` holds its resolved arguments."""
    from compat.releases import NEWEST, RELEASES, UnknownReleaseError, release_rules

    try:
        rules = release_rules(version)
    except UnknownReleaseError:  # not modelled: resolved as the newest modelled one is
        rules = RELEASES[NEWEST]
    return RESOLVE_ONCE if rules.resolve_once else POST_INIT


def _hook(version: str, target: str) -> Any:
    def after_resolution(result: Any, server_args: Any, *args: Any, **kwargs: Any) -> None:
        # Everything runs inside the guard; only a verdict leaves it (`_judge_once`).
        try:
            refusal = _judge_once(server_args, version, target)
        except Exception as error:  # the plugin's own failure: never the reason a launch dies
            could_not_check(error)
            return
        if refusal is not None:
            raise refusal

    return after_resolution


def _judge_once(server_args: Any, version: str, target: str) -> Exception | None:
    """Judge a launch not judged yet in this launch: its refusal (returned, not raised), or
    None when it may start. Any other failure is raised, for the hook to log."""
    try:
        digest: str | None = launch_digest(server_args, version)
    except Exception:  # unreadable arguments: judged (and worded) by check_launch
        digest = None
    if digest is not None and digest in _judged()[2]:
        return None  # this launch was let through already, here or by the launcher
    with gc_paused():
        try:
            check_launch(server_args, version)
        except Exception as raised:
            from compat.guard.report import IncompatibleConfigError

            if isinstance(raised, IncompatibleConfigError):
                return raised  # a verdict: the only reason the plugin stops a launch
            raise
    if digest is not None:
        # A launch that cannot be remembered (a NUL byte in the version cannot go into the
        # environment) is judged again at its next resolution: it was checked, it starts.
        with contextlib.suppress(Exception):
            _remember(target, version, digest)
    return None


def could_not_check(error: Exception) -> None:
    """Log, once per launch, that the plugin failed on this launch and SGLang goes on."""
    what = " ".join(str(error).split())[:300]
    say(
        logging.WARNING,
        f"{NAME}: could not check this launch ({type(error).__name__}: {what}); SGLang goes on",
    )
    with contextlib.suppress(Exception):  # see say()
        logger.debug("attention-compat: the failure", exc_info=error)


def launch_digest(server_args: Any, version: str) -> str:
    """What a verdict depends on: the flags the guard reads, the model, the device, the
    release and the policy asked for (read raw: the same arguments resolve the same way)."""
    from compat.guard.policy import POLICY_VARIABLE
    from compat.inputs.flags import FLAG_FIELDS

    names = (*FLAG_FIELDS, *_LAUNCH_FIELDS)
    values = [getattr(server_args, name, None) for name in names]
    text = repr((version, os.environ.get(POLICY_VARIABLE), values))
    return hashlib.blake2b(text.encode(errors="replace"), digest_size=8).hexdigest()


def _judged() -> tuple[str | None, str | None, list[str]]:
    """The hook target, the installed release and the launch digests `JUDGED_VARIABLE` holds."""
    target, _, rest = os.environ.get(JUDGED_VARIABLE, "").partition(";")
    version, _, digests = rest.partition(";")
    return (target or None), (version or None), [d for d in digests.split(",") if d]


def _remember(target: str, version: str, digest: str) -> None:
    """Record a launch let through, for this process's later resolutions and its workers."""
    known = _judged()[2]
    if digest not in known:
        digests = ",".join([*known[-15:], digest])
        os.environ[JUDGED_VARIABLE] = f"{target};{version};{digests}"


def check_launch(server_args: Any, version: str) -> Report | None:
    """Judge one resolved ServerArgs (`compat.sglang_plugin.judge.judge_launch`): raises
    LaunchRefusedError only, else logs what it found, once per launch, and returns."""
    from compat.sglang_plugin.judge import judge_launch

    return judge_launch(server_args, version)


def __getattr__(name: str) -> Any:
    """The judging module's public names, loaded on first use (PEP 562)."""
    if name in ("LaunchRefusedError", "refusal_message"):
        from compat.sglang_plugin import judge

        return getattr(judge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
