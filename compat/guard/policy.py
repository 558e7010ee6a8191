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
    """Refused when the page documents it as unsupported (the default)."""
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


def policy_from_environment() -> Policy:
    """The policy `COMPAT_POLICY` names; raises PolicyError for a value that is not one."""
    return parse_policy(os.environ.get(POLICY_VARIABLE))
