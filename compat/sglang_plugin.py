"""An SGLang general plugin: every launch is checked against the matrix before a weight loads.

SGLang 0.5.11 and later run the callables of the entry-point group `sglang.srt.plugins` in
`load_plugins()`, before `ServerArgs` is built. `register()` adds an AFTER hook, through the
release's own `HookRegistry`, on the method that resolves the arguments: `__post_init__` up to
0.5.18, `resolve_once()` from 0.5.19. The hook calls `enforce()` with the installed release and
the policy of `COMPAT_POLICY`. Only a refusal leaves the hook: a failure of the plugin itself
is logged and SGLang goes on, so the plugin is never the reason a valid launch dies.

Loading this module imports neither SGLang (beyond its hook registry) nor torch.
"""

from __future__ import annotations

import logging
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
    lines.append(f"  (SGLANG_PLUGINS without {ENTRY_POINT} disables this check)")
    return "\n".join(lines)


def register() -> None:
    """The entry point `load_plugins()` runs: add the hook, or log why not. Never raises."""
    try:
        _register()
    except Exception:  # the plugin must never stop SGLang from starting
        logger.warning("attention-compat: the SGLang plugin is not active", exc_info=True)


def _register() -> None:
    from compat.inputs.installed import installed_sglang_version

    version = installed_sglang_version()
    if version is None:
        logger.warning("attention-compat: no installed sglang distribution; no launch check")
        return
    try:
        from sglang.srt.plugins.hook_registry import (  # type: ignore[import-not-found]
            HookRegistry,
            HookType,
        )
    except ImportError:  # releases before 0.5.11 have no plugin framework
        logger.info("attention-compat: SGLang %s has no hook registry; no launch check", version)
        return
    target = hook_target(version)
    HookRegistry.register(target, _hook(version), HookType.AFTER)


def hook_target(version: str) -> str:
    """The method after which release `version` holds its resolved arguments."""
    from compat.releases import NEWEST, RELEASES, UnknownReleaseError, release_rules

    try:
        rules = release_rules(version)
    except UnknownReleaseError:  # not modelled: resolved as the newest modelled one is
        rules = RELEASES[NEWEST]
    return RESOLVE_ONCE if rules.resolve_once else POST_INIT


def _hook(version: str) -> Any:
    def after_resolution(result: Any, server_args: Any, *args: Any, **kwargs: Any) -> None:
        check_launch(server_args, version)

    return after_resolution


def check_launch(server_args: Any, version: str) -> Report | None:
    """Judge one resolved ServerArgs; raises LaunchRefusedError only, else logs and returns.

    A release newer than the newest modelled is judged as `compat check` judges it without
    `--sglang-version`: the newest modelled release answers, and says so; it is refused
    only under a policy asked for (`COMPAT_POLICY`), else the findings are logged.
    """
    from compat.releases import newer_than_modelled

    newer = newer_than_modelled(version)
    try:
        explicit = explicit_policy()
    except PolicyError as error:
        fallback = policy_for(None, unmodelled_release=newer)
        logger.warning("attention-compat: %s; using %s", error, fallback.value)
        explicit = None
    policy = policy_for(explicit, unmodelled_release=newer)
    try:
        from compat.guard.enforce import enforce

        return enforce(
            server_args,
            # Named, a release must be modelled; unnamed, the installed one is answered for.
            sglang_version=None if newer else version,
            parity=policy is Policy.PARITY,
        )
    except IncompatibleConfigError as error:
        refusal = error
    except Exception as error:  # a bug or a gap of the guard: never the reason a launch dies
        _could_not_check(error)
        return None
    detected = True  # the hook never names the platform: it is always detected
    if policy is Policy.WARN:
        try:
            message = refusal_message(
                refusal.report, policy, detected=detected, asked=explicit is not None
            )
            logger.warning("%s", message)
        except Exception as error:
            _could_not_check(error)
        return refusal.report
    try:
        better = LaunchRefusedError(refusal.report, policy, detected=detected)
    except Exception as error:  # the refusal stands; only its wording failed
        _could_not_check(error)
        raise refusal from None
    raise better from None


def _could_not_check(error: Exception) -> None:
    logger.warning(
        "attention-compat: could not check this launch (%s: %s); SGLang goes on",
        type(error).__name__,
        " ".join(str(error).split())[:300],
    )
    logger.debug("attention-compat: the failure", exc_info=error)
