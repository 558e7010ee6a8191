"""What a launch the guard finds incompatible gets: refused, refused where SGLang refuses, or
only logged. Named by `COMPAT_POLICY`, read by the SGLang plugin and `compat launch`."""

from __future__ import annotations

import os
from enum import Enum

from compat.vocab.spelling import closest, did_you_mean

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
