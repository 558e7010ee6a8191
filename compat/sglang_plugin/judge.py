"""The plugin's judging: a resolved launch through `enforce()`, and the words of its verdict.

Imported by the hook when it first judges a launch (`compat.sglang_plugin.check_launch`),
never by SGLang's workers, which take their launcher's verdict: they need not load the guard.
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
from compat.sglang_plugin import NAME, could_not_check, disable_advice, say


class LaunchRefusedError(IncompatibleConfigError):
    """The plugin refused a launch: every error, where it is enforced, and the fixes."""

    def __init__(self, report: Report, policy: Policy, *, detected: bool = False) -> None:
        # Worded at once, unlike the guard's refusal: SGLang prints it, and a wording that
        # fails must fail here, where the plugin falls back to the guard's own refusal.
        message = refusal_message(report, policy, detected=detected)
        super().__init__(report, detected=detected, message=message)
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
    if policy is Policy.DOCUMENTED and not report.sglang_fails:
        lines.append(
            f"  SGLang itself would start; {POLICY_VARIABLE}=parity refuses only what its "
            "code fails on, =warn only logs"
        )
    if not asked and report.unmodelled_release is not None:
        lines.append(
            f"  SGLang {report.unmodelled_release} is newer than the releases modelled: nothing "
            f"is refused unless {POLICY_VARIABLE}={DEFAULT_POLICY.value} or parity asks for it"
        )
    lines.append(f"  ({disable_advice()})")
    return "\n".join(lines)


def judge_launch(server_args: Any, version: str) -> Report | None:
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
        could_not_check(error)
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
            could_not_check(error)
        return refusal.report
    try:
        better = LaunchRefusedError(refusal.report, policy, detected=detected)
    except Exception as error:  # the refusal stands; only its wording failed
        could_not_check(error)
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
    if policy is Policy.PARITY and not report.sglang_fails and report.errors:
        problems = "; ".join(f"[{f.rule}] {f.message}" for f in report.errors)
        count = len(report.errors)
        say(
            logging.INFO,
            f"{NAME}: SGLang starts this launch ({POLICY_VARIABLE}=parity); the page documents "
            f"{count} problem{'s' * (count != 1)} it does not check: {problems}",
        )
