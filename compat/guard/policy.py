"""What a launch the guard finds incompatible gets: refused, refused where SGLang refuses, or
only logged. Named by `COMPAT_POLICY`, read by the SGLang plugin and `compat launch`."""

from __future__ import annotations

import os
from enum import Enum
from typing import TYPE_CHECKING

from compat.guard.report import Enforcement
from compat.vocab.spelling import closest, did_you_mean
from compat.vocab.terms import Severity

if TYPE_CHECKING:
    from compat.guard.report import Report

POLICY_VARIABLE = "COMPAT_POLICY"


class Policy(Enum):
    """What a launch the matrix finds incompatible gets."""

    DOCUMENTED = "documented"
    """Refused when the page documents it as unsupported (the default); except a disputed
    ❌, a cell the release's own code accepts (`compat audit`): `check()` reports it as a
    warning naming that code, so the code decides."""
    PARITY = "parity"
    """Refused only when SGLang's own start-up code refuses it."""
    WARN = "warn"
    """Never refused; the findings are logged."""

    def refuses_where(self, enforced: Enforcement) -> bool:
        """Whether this policy refuses a launch with an error enforced at `enforced`: the
        one decision every face (`compat check`, `compat launch`, `enforce()`, the plugin)
        and the policy page's table read."""
        if self is Policy.WARN:
            return False
        return self is Policy.DOCUMENTED or enforced is not Enforcement.DOCUMENTED

    def accepts(self, report: Report) -> bool:
        """Whether this policy lets the launch `report` judged run."""
        return not any(
            finding.severity is Severity.ERROR and self.refuses_where(finding.enforced)
            for finding in report.findings
        )


DEFAULT_POLICY = Policy.DOCUMENTED


class PolicyError(ValueError):
    """`COMPAT_POLICY` holds a value that is not a policy."""


def parse_policy(text: str | None) -> Policy:
    """The policy `text` names; unset or empty is the default. Raises PolicyError."""
    if text is None or not text.strip():
        return DEFAULT_POLICY
    value = text.strip().lower()
    for policy in Policy:
        if policy.value == value:
            return policy
    choices = [policy.value for policy in Policy]
    hint = did_you_mean(closest(value, choices), quoted=True)
    raise PolicyError(
        f"{POLICY_VARIABLE}={text!r} is not a policy; use one of {', '.join(choices)}{hint}"
    )


def explicit_policy() -> Policy | None:
    """The policy `COMPAT_POLICY` names, or None when it is unset or empty; raises
    PolicyError for a value that is not one."""
    text = os.environ.get(POLICY_VARIABLE)
    return None if text is None or not text.strip() else parse_policy(text)


def policy_for(explicit: Policy | None, *, unmodelled_release: bool) -> Policy:
    """The policy a launch gets: the one asked for; else the default, except for a release
    newer than the newest modelled, which is only warned about: this package must never
    block a valid launch because it is out of date."""
    if explicit is not None:
        return explicit
    return Policy.WARN if unmodelled_release else DEFAULT_POLICY


POLICY_TABLE_MARKER = "<!-- compat:policy-table -->"
"""Where the policy page shows `policy_table()`, filled in when the site is built."""


def policy_table() -> str:
    """Which policy refuses a launch with an error, by where that error is enforced: a
    Markdown table computed from `Policy.refuses_where` and the enforcement labels."""
    policies = list(Policy)
    lines = [
        "| an error found | " + " | ".join(f"`{p.value}`" for p in policies) + " |",
        "|---|" + "---|" * len(policies),
    ]
    for enforced in Enforcement:
        cells = ("refused" if p.refuses_where(enforced) else "runs, logged" for p in policies)
        lines.append(f"| `{enforced.value}`: {enforced.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
