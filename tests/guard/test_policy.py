"""Which policy a launch gets: the one asked for, else the default, except for a release
newer than the newest modelled, which is only warned about unless a policy is asked for."""

from __future__ import annotations

import pytest

from compat.guard.policy import (
    DEFAULT_POLICY,
    POLICY_VARIABLE,
    Policy,
    PolicyError,
    explicit_policy,
    policy_for,
)


@pytest.mark.parametrize(
    ("text", "asked"), [(None, None), ("", None), ("  ", None), ("Parity", Policy.PARITY)]
)
def test_a_policy_is_asked_for_only_by_a_value(
    text: str | None, asked: Policy | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if text is None:
        monkeypatch.delenv(POLICY_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(POLICY_VARIABLE, text)
    assert explicit_policy() is asked


def test_a_value_that_is_no_policy_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(POLICY_VARIABLE, "strict")
    with pytest.raises(PolicyError, match="'strict' is not a policy"):
        explicit_policy()


@pytest.mark.parametrize("asked", [*Policy, None])
def test_a_release_newer_than_modelled_is_warned_about_unless_asked(asked: Policy | None) -> None:
    assert policy_for(asked, unmodelled_release=False) is (asked or DEFAULT_POLICY)
    assert policy_for(asked, unmodelled_release=True) is (asked or Policy.WARN)
