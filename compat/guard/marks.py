"""Marks on the page's findings: where SGLang enforces each (start-up, the backend build, the
first forward pass (a kernel, or the verify pass), or the page alone; a fact both state is
one finding), and which the release's code disputes (a documented ❌ the code accepts is a
warning, `compat audit`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix
from compat.engine.build import BUILD_RULE_PREFIX
from compat.engine.kernels import KERNEL_RULE_PREFIX
from compat.engine.rules import ReleaseRules
from compat.engine.verify import VERIFY_RULE
from compat.guard.plan import MEMO_LIMIT, FindingMemo
from compat.guard.report import STARTUP_PREFIX, Enforcement, Finding, Resolved
from compat.vocab.terms import Severity

if TYPE_CHECKING:
    from collections.abc import Mapping

    from compat.guard.audit_facts import Dispute
    from compat.vocab.terms import Arch

    DisputedNo = Mapping[tuple[Arch, str, str], tuple[tuple[str, Dispute], ...]]
    """(architecture, backend, the column's rule id) -> (the setting that meets it, the
    dispute)."""

DISPUTED_NO: dict[str, DisputedNo] = {}
"""Each release's disputed ❌ cells, once computed: `check()` reads it with one lookup."""


def mark_enforcement(
    findings: list[Finding],
    applied: frozenset[tuple[str, str | None]],
    release: ReleaseRules,
    memo: FindingMemo,
) -> None:
    """Say where each documented finding is enforced, in place.

    A page finding whose rule SGLang's start-up code also applies (its twin `startup-RULE`
    for the same backend) is enforced at start-up; one that the release's backend
    constructors refuse fails later, where the engine's replay of the build fails that
    backend too. A twin that states the same fact (`_same_fact`) is
    folded into the page's finding, in the twin's place: one finding per fact.
    """
    build = release.backend_build
    # Most findings name a rule neither applies: one set lookup sets them aside.
    rules = release.backend_build_rules
    if applied:
        rules = rules.union(rule for rule, _ in applied)
    twins: dict[tuple[str, str | None], int] | None = None
    failing: frozenset[str | None] | None = None
    merged: list[int] = []
    for index, finding in enumerate(findings):
        if finding.rule not in rules or finding.enforced is not Enforcement.DOCUMENTED:
            continue
        if (finding.rule, finding.backend) in applied:
            if twins is None:
                twins = _startup_twins(findings)
            # Each twin is folded once (a page rule may find the backend in each phase).
            twin = twins.pop((finding.rule, finding.backend), None)
            if twin is not None and _same_fact(findings[twin], finding):
                # One fact, one finding: SGLang's words, under the page's rule id (the
                # consistency proof reads it), naming both sources, in the twin's place
                # (start-up findings come first).
                findings[twin] = memo.finding(
                    _one_finding, (findings[twin], finding), findings[twin], finding
                )
                merged.append(index)
            else:
                findings[index] = memo.retagged(finding, Enforcement.STARTUP)
        elif (finding.rule, finding.backend or "") in build:
            # Said to fail at the build only where the engine's own replay of the build
            # fails that backend: the page's word alone never moves what SGLang does.
            if failing is None:
                failing = _failing_builds(findings)
            if finding.backend in failing:
                findings[index] = memo.retagged(finding, Enforcement.BACKEND_BUILD)
    for index in reversed(merged):
        del findings[index]


def mark_warmup_failures(findings: list[Finding], release: ReleaseRules, memo: FindingMemo) -> None:
    """A documented error the engine predicts SGLang's first forward pass to fail on is
    enforced there: the code fails it, after the weights load (`_kernel_failures`,
    `_verify_failures`). In place."""
    # Most launches fail nothing in the first forward pass: one pass over the findings, no
    # allocation, sets them aside.
    for finding in findings:
        if finding.enforced is Enforcement.WARMUP:
            break
    else:
        return
    _kernel_failures(findings, release, memo)
    _verify_failures(findings, memo)


def _kernel_failures(findings: list[Finding], release: ReleaseRules, memo: FindingMemo) -> None:
    """A documented error on a backend whose kernel the engine predicts to refuse this GPU
    (a kernel finding, and the page's finding naming the same GPU)."""
    failing = {f.rule: f.value for f in findings if f.rule.startswith(KERNEL_RULE_PREFIX)}
    for limit in release.kernels.limits:
        value = failing.get(limit.path.rule)
        if value is None or not limit.backends:
            continue
        for index, finding in enumerate(findings):
            if (
                finding.enforced is Enforcement.DOCUMENTED
                and finding.severity is Severity.ERROR
                and finding.backend in limit.backends
                and finding.value == value
            ):
                findings[index] = memo.retagged(finding, Enforcement.WARMUP)


_SPECULATIVE_RULES = frozenset(c.rule_id for c in (ColumnId.SPEC_TOPK_1, ColumnId.SPEC_TOPK_GT1))
"""The page's speculative-decoding columns: a ❌ there says the verify cannot run."""


def _verify_failures(findings: list[Finding], memo: FindingMemo) -> None:
    """A documented error of a speculative-decoding column on the backend whose first verify
    the engine predicts to fail (its verify finding)."""
    failing = next((f.backend for f in findings if f.rule == VERIFY_RULE), None)
    if failing is None:
        return
    for index, finding in enumerate(findings):
        if (
            finding.enforced is Enforcement.DOCUMENTED
            and finding.severity is Severity.ERROR
            and finding.backend == failing
            and finding.rule in _SPECULATIVE_RULES
        ):
            findings[index] = memo.retagged(finding, Enforcement.WARMUP)


def _failing_builds(findings: list[Finding]) -> frozenset[str | None]:
    """The backends whose build the engine predicts to fail (its `build-` findings)."""
    return frozenset(
        f.backend
        for f in findings
        if f.severity is Severity.ERROR and f.rule.startswith(BUILD_RULE_PREFIX)
    )


def _startup_twins(findings: list[Finding]) -> dict[tuple[str, str | None], int]:
    """Where each start-up finding that a page rule can twin is, by (rule, backend)."""
    return {
        (f.rule.removeprefix(STARTUP_PREFIX), f.backend): index
        for index, f in enumerate(findings)
        if f.enforced is Enforcement.STARTUP and f.rule.startswith(STARTUP_PREFIX)
    }


def _same_fact(startup: Finding, page: Finding) -> bool:
    """Whether SGLang's finding and the page's state one fact: the same verdict and the same
    values allowed. Where they differ (the page allows fewer backends than SGLang's check),
    each is its own finding, with its own source."""
    return startup.severity is page.severity and set(startup.allowed) == set(page.allowed)


def _one_finding(startup: Finding, page: Finding) -> Finding:
    """The page's finding of a fact SGLang's start-up code also enforces: SGLang's words,
    which say what the launch meets, and the page's id, phases and allowed values."""
    return replace(
        page,
        message=f"{startup.message}; SGLang's start-up code and the page both state it",
        flags=tuple(dict.fromkeys((*startup.flags, *page.flags))),
        enforced=Enforcement.STARTUP,
    )


def same_page(matrix: Matrix, own: Matrix) -> bool:
    """Whether `matrix` states what the release's own page states, compared once per
    matrix (a copy of it does; one with a cell changed does not)."""
    key = f"same-page:{id(own)}"
    known = matrix.derived.get(key)
    if not isinstance(known, bool):
        known = matrix.derived[key] = matrix == own
    return known


def mark_disputes(findings: list[Finding], resolved: Resolved, disputed: DisputedNo) -> None:
    """A documented ❌ that the release's own code accepts (a disputed cell, `compat audit`)
    is a warning naming the evidence, never a refusal: the code decides. In place."""
    arch = resolved.arch
    for index, finding in enumerate(findings):
        if finding.severity is not Severity.ERROR or finding.enforced is not Enforcement.DOCUMENTED:
            continue
        cases = disputed.get((arch, finding.backend or "", finding.rule))
        if cases is None:
            continue
        # Keyed by identity, as `FindingMemo.retagged`: the findings are the memo's own
        # objects, and the entry keeps the original alive so its id names no other.
        known = _DISPUTED_FINDINGS.get(id(finding))
        if known is None:
            settings = _settings(resolved)
            dispute = next((d for setting, d in cases if setting in settings), None)
            if dispute is None:
                continue
            if len(_DISPUTED_FINDINGS) >= MEMO_LIMIT:
                _DISPUTED_FINDINGS.clear()
            known = _DISPUTED_FINDINGS[id(finding)] = (finding, _disputed_finding(finding, dispute))
        findings[index] = known[1]


_DISPUTED_FINDINGS: dict[int, tuple[Finding, Finding]] = {}


def _settings(resolved: Resolved) -> tuple[str, ...]:
    """The settings a disputed cell may be keyed on (as `Trigger.setting` words them)."""
    settings = [f"--kv-cache-dtype {resolved.kv_dtype.value}"]
    if resolved.topk is not None:
        settings.append(f"--speculative-eagle-topk {resolved.topk}")
    return tuple(settings)


def _disputed_finding(finding: Finding, dispute: Dispute) -> Finding:
    return replace(
        finding,
        severity=Severity.WARNING,
        message=f"{finding.message}. {dispute.summary}: the code decides, so this is a warning",
    )
