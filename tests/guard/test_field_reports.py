"""The guard against launches operators reported in SGLang's issues, class by class.

Each report (`tests/fixtures/field_reports.json`, read by `tests/support/field_reports.py`)
is asked of the guard as a new user would ask `compat check`, and the answer is mapped to
what the operator would have seen (`tests/support/field_scoring.py`). The agreement per class
may only rise: `FLOORS` holds what it measures today, and the test fails both ways, so that a
class at zero is checked too. Below its floor a class lists every disagreement; above it, the
floor is raised in the same change. `.venv/bin/python tests/support/field_scoring.py` prints
the table.
"""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Any

import pytest
from field_reports import (
    FieldReport,
    FieldReportError,
    Outcome,
    load_field_reports,
    parse_field_reports,
)
from field_scoring import Score, disagreements, score, score_all, table, tally

from compat.guard.report import Enforcement
from compat.vocab.terms import Severity

# The undisputed reports of each class the guard matches today: the floor may only rise.
FLOORS = {
    Outcome.REFUSED: 4,
    Outcome.FAILED_AFTER_LOAD: 9,
    Outcome.RAN: 40,
}


@pytest.fixture(scope="module")
def scores() -> tuple[Score, ...]:
    return score_all(load_field_reports())


@pytest.mark.parametrize("outcome", list(Outcome), ids=lambda o: o.value)
def test_the_agreement_of_each_class_holds_its_floor(
    scores: tuple[Score, ...], outcome: Outcome
) -> None:
    counts = tally(scores)[outcome]
    missed = [line for line in disagreements(scores) if f"saw {outcome.value}," in line]
    assert counts.matched >= FLOORS[outcome], (
        f"{outcome.value}: {counts.matched} of {counts.cases} agree, floor {FLOORS[outcome]}; "
        "disagreements:\n" + "\n".join(missed)
    )
    # A floor left below what the guard measures could never fail again: raise it.
    assert counts.matched <= FLOORS[outcome], (
        f"{outcome.value}: {counts.matched} of {counts.cases} agree now; raise its floor "
        f"from {FLOORS[outcome]} to {counts.matched}"
    )


def test_no_launch_that_ran_on_sglangs_own_backend_choice_is_refused_at_startup(
    scores: tuple[Score, ...],
) -> None:
    # The default policy is what a new user meets first: refusing a launch that served with
    # it would tell them to change a working command.
    on_default = [
        s
        for s in scores
        if s.report.outcome is Outcome.RAN and s.report.on_default_backend and not s.report.disputed
    ]
    assert on_default, "no undisputed report ran on SGLang's own backend choice"
    refused = [s for s in on_default if s.predicted is Outcome.REFUSED]
    assert not refused, "\n".join(disagreements(refused))


@pytest.mark.parametrize(
    ("flags", "default"),
    [
        ((), True),
        (("--tp", "2", "--kv-cache-dtype", "fp8_e4m3"), True),
        (("--linear-attn-backend", "triton"), True),
        (("--attention-backend", "fa3"), False),
        (("--attention-backend=fa3",), False),
        (("--decode-attention-backend", "triton"), False),
    ],
)
def test_a_launch_is_on_the_default_backend_until_a_flag_names_one(
    flags: tuple[str, ...], default: bool
) -> None:
    assert _launch(flags=flags).on_default_backend is default


def test_every_report_is_scored_and_the_table_counts_them(scores: tuple[Score, ...]) -> None:
    reports = load_field_reports()
    undisputed = [r for r in reports if not r.disputed]
    assert len(scores) == len(reports) > 0
    assert sum(c.cases for c in tally(scores).values()) == len(undisputed)
    rows = table(scores).splitlines()
    for outcome, counts in tally(scores).items():
        assert any(f"| {counts.cases} | {counts.matched} |" in row for row in rows), outcome


def test_a_disagreement_names_the_report_and_what_the_guard_said(
    scores: tuple[Score, ...],
) -> None:
    wrong = [s for s in scores if not s.matched and not s.report.disputed]
    lines = disagreements(scores)
    assert len(lines) == len(wrong)
    for s, line in zip(wrong, lines, strict=True):
        assert s.report.id in line and s.said in line


def test_every_source_is_an_issue_of_sglang_and_ids_follow_it() -> None:
    for report in load_field_reports():
        number = report.source.removeprefix("https://github.com/sgl-project/sglang/issues/")
        assert report.id.startswith(f"sglang-{number.split('#')[0]}"), report.id


# The mapping from the guard's answer to a class, on launches whose answer is known.
def _launch(**fields: Any) -> FieldReport:
    base: dict[str, Any] = {
        "id": "synthetic",
        "source": "https://github.com/sgl-project/sglang/issues/1",
        "release": "0.5.12",
        "gpu": "B200",
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "outcome": Outcome.RAN,
        "evidence": "a launch made up for the test",
    }
    return FieldReport(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "predicted", "said"),
    [
        ({"gpu": "H100"}, Outcome.RAN, "passes"),
        (
            {"gpu": "H100", "flags": ("--attention-backend", "trtllm_mha")},
            Outcome.REFUSED,
            "refused at start-up",
        ),
        (
            {"release": "0.5.23", "flags": ("--kv-cache-dtype", "fp4_e2m1")},
            Outcome.REFUSED,
            "rejects the input (exit 2)",
        ),
        ({"flags": ("--attention-backend", "fa3")}, Outcome.FAILED_AFTER_LOAD, "backend-build"),
        (
            {"gpu": "H100", "flags": ("--attention-backend", "fa4")},
            Outcome.RAN,
            "a documented ❌ only",
        ),
    ],
)
def test_the_guard_answer_maps_to_the_class_the_operator_sees(
    fields: dict[str, Any], predicted: Outcome, said: str
) -> None:
    result = score(_launch(**fields))
    assert result.predicted is predicted, result.said
    assert said in result.said


class _LaterPhase(enum.Enum):
    """A phase past the backend build that the engine may add (warm-up, first batch)."""

    WARM_UP = "warm-up"


def test_an_error_enforced_at_any_later_phase_counts_as_failing_after_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import field_scoring

    judge = field_scoring.judge

    def later(assembled: Any) -> Any:
        report = judge(assembled)
        findings = tuple(
            dataclasses.replace(f, enforced=_LaterPhase.WARM_UP)  # type: ignore[arg-type]
            if f.severity is Severity.ERROR and f.enforced is Enforcement.BACKEND_BUILD
            else f
            for f in report.findings
        )
        return dataclasses.replace(report, findings=findings)

    monkeypatch.setattr(field_scoring, "judge", later)
    result = score(_launch(flags=("--attention-backend", "fa3")))
    assert result.predicted is Outcome.FAILED_AFTER_LOAD
    assert "warm-up" in result.said


# Bad data fails loudly, naming the report and the field.
GOOD = {
    "id": "sglang-1",
    "source": "https://github.com/sgl-project/sglang/issues/1",
    "release": "0.5.12",
    "gpu": "H100",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "flags": ["--tp", "2"],
    "outcome": "ran",
    "evidence": "it served",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"release": "0.5.6"}, "release"),
        ({"release": None}, "release"),
        ({"gpu": "V100"}, "gpu"),
        ({"outcome": "crashed"}, "outcome"),
        ({"source": "https://example.com/1"}, "source"),
        ({"model": "acme/unknown-7b"}, "architecture"),
        ({"flags": ["tp", "2"]}, "flags"),
        ({"flags": ["--model-path", "x"]}, "flags"),
        ({"evidence": " "}, "evidence"),
        ({"disputed": True}, "dispute"),
        ({"dispute": "a reason without the flag"}, "dispute"),
        ({"colour": "red"}, "colour"),
        # A model fact: only one a config.json states, and only for a model the zoo lacks.
        (
            {"model": "acme/x", "architecture": "LlamaForCausalLM", "model_facts": {"mla": True}},
            "model_facts",
        ),
        ({"model_facts": {"sparse_attention": True}}, "model_facts"),
    ],
)
def test_a_bad_report_fails_naming_the_report_and_the_field(
    change: dict[str, Any], field: str
) -> None:
    with pytest.raises(FieldReportError) as raised:
        parse_field_reports([GOOD, {**GOOD, "id": "sglang-2", **change}])
    message = str(raised.value)
    assert "'sglang-2'" in message and field in message


def test_a_report_without_an_id_is_named_by_its_position() -> None:
    with pytest.raises(FieldReportError, match=r"#1.*id"):
        parse_field_reports([GOOD, {k: v for k, v in GOOD.items() if k != "id"}])


def test_an_id_may_not_repeat() -> None:
    with pytest.raises(FieldReportError, match=r"'sglang-1'.*used twice"):
        parse_field_reports([GOOD, GOOD])


def test_a_file_that_is_not_json_fails_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "field_reports.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(FieldReportError, match=r"field_reports\.json"):
        load_field_reports(path)
