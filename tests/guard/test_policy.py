"""Which policy a launch gets: the one asked for, else the default, except for a release
newer than the newest modelled, which is only warned about unless a policy is asked for."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from compat import AttentionConfig, check
from compat.guard.policy import (
    DEFAULT_POLICY,
    POLICY_TABLE_MARKER,
    POLICY_VARIABLE,
    Policy,
    PolicyError,
    explicit_policy,
    policy_for,
    policy_table,
)
from compat.guard.report import Enforcement, Finding, Report
from compat.releases import NEWEST
from compat.vocab.terms import Severity


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


def _report_with(*enforced: Enforcement) -> Report:
    config = AttentionConfig(attention_arch="mha", platform="cpu", sglang_version=NEWEST)
    report = check(config)
    errors = tuple(
        Finding(f"rule-{where.value}", Severity.ERROR, "a problem", enforced=where)
        for where in enforced
    )
    return replace(report, findings=errors)


@pytest.mark.parametrize("enforced", list(Enforcement))
def test_each_policy_refuses_what_its_docstring_says(enforced: Enforcement) -> None:
    report = _report_with(enforced)
    assert Policy.DOCUMENTED.accepts(report) is report.ok is False
    assert Policy.PARITY.accepts(report) is not report.sglang_fails
    assert Policy.WARN.accepts(report)
    assert Policy.PARITY.accepts(report) is (enforced is Enforcement.DOCUMENTED)


def test_a_report_without_errors_runs_under_every_policy() -> None:
    report = _report_with()
    assert all(policy.accepts(report) for policy in Policy)


def test_the_policy_page_shows_the_computed_table_once() -> None:
    page = (Path(__file__).parents[2] / "docs" / "policy.md").read_text(encoding="utf-8")
    assert page.count(POLICY_TABLE_MARKER) == 1
    table = policy_table()
    for policy in Policy:
        assert f"`{policy.value}`" in table.splitlines()[0]
    rows = table.splitlines()[2:]
    assert len(rows) == len(Enforcement)
    for row, enforced in zip(rows, Enforcement, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")][1:]
        assert cells == ["refused" if p.refuses_where(enforced) else "runs, logged" for p in Policy]
