"""Score the guard against the field reports, class by class, as a new user would ask it.

Each report goes through the same path as `compat check --sglang-version X.Y.Z --gpu NAME
[--model ID | --model-architecture NAME] -- python3 -m sglang.launch_server FLAGS`: the
launch request is assembled and judged in-process. The guard's answer maps to the class the
operator would have seen:

- SGLang refuses at start-up (a start-up error, or a flag value the release rejects, exit 2)
  -> refused-at-startup;
- an error SGLang meets after start-up (any `enforced` phase past start-up that is not the
  page's word alone: the backend build today, and whatever later phase the engine adds)
  -> failed-after-load;
- otherwise -> ran (a documented-only ❌ does not stop SGLang).

Run this file to print the table: `.venv/bin/python tests/support/field_scoring.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from field_reports import FieldReport, Outcome, load_field_reports

from compat.guard.judge import judge
from compat.guard.report import Enforcement, Report
from compat.inputs.assemble import LaunchRequest, assemble
from compat.inputs.checks import InvalidConfigError
from compat.vocab.terms import Severity

# The launch command the flags are read in: SGLang's own entry point.
LAUNCHER = ("python3", "-m", "sglang.launch_server")

# Where an error finding says SGLang stops. Anything else (the backend build, and any later
# phase the engine learns) happens after the weights load.
_NOT_AFTER_LOAD = frozenset({Enforcement.STARTUP, Enforcement.DOCUMENTED})

_SEEN = {
    Outcome.REFUSED: "SGLang refused at start-up",
    Outcome.FAILED_AFTER_LOAD: "started, loaded the weights, then failed",
    Outcome.RAN: "ran",
}


@dataclass(frozen=True)
class Score:
    """The guard's answer on one report."""

    report: FieldReport
    predicted: Outcome
    said: str
    """The guard's answer in a few words (for the table and the assertion messages)."""

    @property
    def matched(self) -> bool:
        return self.predicted is self.report.outcome


def request_of(report: FieldReport) -> LaunchRequest:
    """The launch a new user would hand `compat check` for this report."""
    zoo = report.zoo_model
    return LaunchRequest(
        command=(*LAUNCHER, *report.flags),
        known_model=zoo,
        model={}
        if zoo is not None
        else {"model_architecture": report.architecture, **report.model_facts},
        gpu=report.gpu,
        detect=False,
        sglang_version=report.release,
    )


def score(report: FieldReport) -> Score:
    try:
        assembled = assemble(request_of(report))
    except InvalidConfigError as error:
        # `compat check` exits 2 (an InputError is one too): a value the release's own parser
        # or start-up rejects, so SGLang does not start either.
        words = " ".join(line.strip() for line in str(error).splitlines())
        return Score(report, Outcome.REFUSED, f"rejects the input (exit 2): {words}")
    return _verdict(report, judge(assembled))


def _verdict(report: FieldReport, answer: Report) -> Score:
    if answer.refused_at_startup:
        rules = ", ".join(f.rule for f in answer.startup_reasons)
        return Score(report, Outcome.REFUSED, f"refused at start-up ({rules})")
    later = [f for f in answer.errors if f.enforced not in _NOT_AFTER_LOAD]
    if later:
        phases = ", ".join(sorted({f.enforced.value for f in later}))
        rules = ", ".join(f.rule for f in later)
        return Score(report, Outcome.FAILED_AFTER_LOAD, f"fails after start-up, {phases} ({rules})")
    documented = [f for f in answer.errors if f.severity is Severity.ERROR]
    if documented:
        rules = ", ".join(f.rule for f in documented)
        return Score(report, Outcome.RAN, f"passes; a documented ❌ only ({rules})")
    return Score(report, Outcome.RAN, "passes")


def score_all(reports: Iterable[FieldReport]) -> tuple[Score, ...]:
    return tuple(score(report) for report in reports)


@dataclass(frozen=True)
class ClassTally:
    """The agreement on the undisputed reports of one class."""

    outcome: Outcome
    cases: int
    matched: int
    instead: Counter[str]
    """What the guard said on the others, by kind of answer."""

    @property
    def rate(self) -> float:
        return self.matched / self.cases if self.cases else 1.0


def _kind(said: str) -> str:
    """The kind of an answer, without its rule ids: how the table groups them."""
    return said.split(" (", 1)[0].split(": ", 1)[0]


def tally(scores: Sequence[Score]) -> dict[Outcome, ClassTally]:
    tallies = {}
    for outcome in Outcome:
        counted = [s for s in scores if s.report.outcome is outcome and not s.report.disputed]
        instead = Counter(_kind(s.said) for s in counted if not s.matched)
        matched = sum(s.matched for s in counted)
        tallies[outcome] = ClassTally(outcome, len(counted), matched, instead)
    return tallies


def table(scores: Sequence[Score]) -> str:
    """The class-by-class table, in Markdown; disputed reports are counted apart."""
    lines = [
        "| what the user saw | cases | matched | what the guard said instead |",
        "|---|---|---|---|",
    ]
    for outcome, counts in tally(scores).items():
        instead = ", ".join(f"{kind} ({n})" for kind, n in counts.instead.most_common()) or "-"
        lines.append(f"| {_SEEN[outcome]} | {counts.cases} | {counts.matched} | {instead} |")
    disputed = [s for s in scores if s.report.disputed]
    if disputed:
        lines.append(f"\n{len(disputed)} disputed report(s), left out of the counts:")
        lines += [f"- {s.report.id}: {s.report.dispute}" for s in disputed]
    return "\n".join(lines)


def disagreements(scores: Sequence[Score]) -> list[str]:
    """One line per undisputed report the guard gets wrong."""
    return [
        f"{s.report.id} ({s.report.release}, {s.report.gpu}, {s.report.model}): the user saw "
        f"{s.report.outcome.value}, the guard said {s.said}"
        for s in scores
        if not s.matched and not s.report.disputed
    ]


if __name__ == "__main__":
    print(table(score_all(load_field_reports())))
