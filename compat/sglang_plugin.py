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

Loading this module imports neither SGLang (beyond its hook registry) nor torch.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from compat.guard.policy import (
    DEFAULT_POLICY,
    POLICY_VARIABLE,
    Policy,
    PolicyError,
    explicit_policy,
    policy_for,
)
from compat.guard.report import IncompatibleConfigError, Report, runs_as

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
"""`TARGET;DIGEST,...`: the hook's target and the digests of the launches let through."""
NAME = "attention-compat"
# What else a launch's verdict depends on, besides the flags the guard reads.
_LAUNCH_FIELDS = ("model_path", "revision", "device", "tp_size")
logger = logging.getLogger("compat.sglang_plugin")


class LaunchRefusedError(IncompatibleConfigError):
    """The plugin refused a launch: every error, where it is enforced, and the fixes."""

    def __init__(self, report: Report, policy: Policy, *, detected: bool = False) -> None:
        super().__init__(report, detected=detected)
        ValueError.__init__(self, refusal_message(report, policy, detected=detected))
        self.policy = policy


def refusal_message(
    report: Report, policy: Policy, *, detected: bool = False, asked: bool = True
) -> str:
    """The text of a refusal: one block, readable in SGLang's start-up log. `asked`: the
    policy was named (`COMPAT_POLICY`), not chosen for a release newer than modelled."""
    count = len(report.errors)
    noun = "problem" if count == 1 else "problems"
    what = (
        "starts this launch anyway"
        if policy is Policy.WARN
        else "refused this launch before the model loads"
    )
    setting = f"{POLICY_VARIABLE}={policy.value}" if asked else f"{POLICY_VARIABLE} unset"
    lines = [
        f"attention-compat {what} ({count} {noun}; SGLang {report.sglang_version}, {setting}):",
        f"  {runs_as(report.resolved, detected=detected)}",
    ]
    for finding in report.errors:
        lines.append(f"  - [{finding.rule}] {finding.message}")
        lines.append(f"      enforced: {finding.enforced.label}")
    lines += [f"  try: {s.summary}  ({s.reason})" for s in report.suggestions]
    if policy is Policy.DOCUMENTED and not report.refused_at_startup:
        lines.append(
            f"  SGLang itself would start; {POLICY_VARIABLE}=parity refuses only what it "
            "refuses, =warn only logs"
        )
    if not asked and report.unmodelled_release is not None:
        lines.append(
            f"  SGLang {report.unmodelled_release} is newer than the releases modelled: nothing "
            f"is refused unless {POLICY_VARIABLE}={DEFAULT_POLICY.value} or parity asks for it"
        )
    lines.append(f"  ({disable_advice()})")
    return "\n".join(lines)


def disable_advice() -> str:
    """How to turn the check off without uninstalling it, and keep every other general plugin
    SGLang loads: the exact `SGLANG_PLUGINS` value (the names it lists now, else the installed
    plugins of the group), without this one."""
    current = os.environ.get(PLUGINS_VARIABLE, "")
    if current.strip():
        names = [name.strip() for name in current.split(",")]
    else:
        from importlib.metadata import entry_points

        names = [entry.name for entry in entry_points(group=GROUP)]
    others = [name for name in dict.fromkeys(names) if name and name != ENTRY_POINT]
    if not others:
        return f"{PLUGINS_VARIABLE}=none disables this check; no other SGLang plugin is loaded"
    import shlex

    value = shlex.quote(",".join(others))
    return f"{PLUGINS_VARIABLE}={value} disables this check and keeps the other plugins"


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
    from compat.inputs.installed import installed_sglang_version

    version = installed_sglang_version()
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
    # A worker takes its launcher's target: it need not load the releases to find it.
    target = _judged()[0] or hook_target(version)
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
        try:
            digest = launch_digest(server_args, version)
        except Exception:  # unreadable arguments: judged (and worded) by check_launch
            digest = None
        if digest is not None and digest in _judged()[1]:
            return  # this launch was let through already, here or by the launcher
        with gc_paused():
            check_launch(server_args, version)
        if digest is not None:
            _remember(target, digest)

    return after_resolution


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the plugin works. Loading the guard
    allocates enough to trigger collections, and in SGLang's process each full one walks
    every object torch and SGLang made: measured in the real launcher, they were nine tenths
    of the plugin's cost. What the plugin allocates is collected afterwards as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def launch_digest(server_args: Any, version: str) -> str:
    """What a verdict depends on: the flags the guard reads, the model, the device, the
    release and the policy asked for (read raw: the same arguments resolve the same way)."""
    from compat.inputs.flags import FLAG_FIELDS

    names = (*FLAG_FIELDS, *_LAUNCH_FIELDS)
    values = [getattr(server_args, name, None) for name in names]
    text = repr((version, os.environ.get(POLICY_VARIABLE), values))
    return hashlib.blake2b(text.encode(errors="replace"), digest_size=8).hexdigest()


def _judged() -> tuple[str | None, list[str]]:
    """The hook target and the launch digests `JUDGED_VARIABLE` holds."""
    target, _, digests = os.environ.get(JUDGED_VARIABLE, "").partition(";")
    return (target or None), [digest for digest in digests.split(",") if digest]


def _remember(target: str, digest: str) -> None:
    """Record a launch let through, for this process's later resolutions and its workers."""
    known = _judged()[1]
    if digest not in known:
        os.environ[JUDGED_VARIABLE] = f"{target};{','.join([*known[-15:], digest])}"


def check_launch(server_args: Any, version: str) -> Report | None:
    """Judge one resolved ServerArgs; raises LaunchRefusedError only, else logs and returns.

    A release newer than the newest modelled is judged as `compat check` judges it without
    `--sglang-version`: the newest modelled release answers, and says so; it is refused
    only under a policy asked for (`COMPAT_POLICY`), else the findings are logged. What it
    logs is logged once per launch (`say`).
    """
    from compat.releases import newer_than_modelled

    newer = newer_than_modelled(version)
    try:
        explicit = explicit_policy()
    except PolicyError as error:
        fallback = policy_for(None, unmodelled_release=newer)
        say(logging.WARNING, f"{NAME}: {error}; using {fallback.value}")
        explicit = None
    policy = policy_for(explicit, unmodelled_release=newer)
    try:
        outcome = _judge(server_args, version, newer=newer, parity=policy is Policy.PARITY)
    except Exception as error:  # a bug or a gap of the guard: never the reason a launch dies
        _could_not_check(error)
        return None
    if isinstance(outcome, Report):
        _speak_findings(outcome, policy)
        return outcome
    refusal = outcome
    detected = True  # the hook never names the platform: it is always detected
    _speak_findings(refusal.report, policy)  # the warnings, which the refusal leaves out
    if policy is Policy.WARN:
        try:
            message = refusal_message(
                refusal.report, policy, detected=detected, asked=explicit is not None
            )
            say(logging.WARNING, message)
        except Exception as error:
            _could_not_check(error)
        return refusal.report
    try:
        better = LaunchRefusedError(refusal.report, policy, detected=detected)
    except Exception as error:  # the refusal stands; only its wording failed
        _could_not_check(error)
        raise refusal from None
    raise better from None


def _judge(
    server_args: Any, version: str, *, newer: bool, parity: bool
) -> Report | IncompatibleConfigError:
    """`enforce()`'s answer for these arguments: its report, or its refusal."""
    from compat.guard.enforce import enforce

    try:
        return enforce(
            server_args,
            # Named, a release must be modelled; unnamed, the installed one is answered for.
            sglang_version=None if newer else version,
            parity=parity,
            log=False,  # the plugin speaks itself, once per launch
        )
    except IncompatibleConfigError as error:
        return error


def _speak_findings(report: Report, policy: Policy) -> None:
    """The warnings, each on its line; under parity, what only the page documents (SGLang
    starts the launch) on one info line."""
    for finding in report.warnings:
        say(logging.WARNING, f"{NAME}: [{finding.rule}] {finding.message}")
    if policy is Policy.PARITY and not report.refused_at_startup and report.errors:
        problems = "; ".join(f"[{f.rule}] {f.message}" for f in report.errors)
        count = len(report.errors)
        say(
            logging.INFO,
            f"{NAME}: SGLang starts this launch ({POLICY_VARIABLE}=parity); the page documents "
            f"{count} problem{'s' * (count != 1)} it does not check: {problems}",
        )


def _could_not_check(error: Exception) -> None:
    what = " ".join(str(error).split())[:300]
    say(
        logging.WARNING,
        f"{NAME}: could not check this launch ({type(error).__name__}: {what}); SGLang goes on",
    )
    with contextlib.suppress(Exception):  # see say()
        logger.debug("attention-compat: the failure", exc_info=error)
