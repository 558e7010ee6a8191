"""Real launches that SGLang operators reported in public issues, as test data.

`tests/fixtures/field_reports.json` holds one object per report: the SGLang release, the
GPU, the model (its Hugging Face id), the launch flags that matter for attention, what the
operator saw, the issue it comes from and a summary of the evidence in our own words. This
module reads and validates it: a bad report fails loudly, naming the report and the field.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import msgspec

from compat.inputs.flags import BACKEND_FLAGS
from compat.inputs.gpus import find_gpu
from compat.inputs.model_source import HEAD_SHAPES
from compat.inputs.zoo import UnknownModelError, known_model
from compat.releases import RELEASE_NAMES

FIELD_REPORTS = Path(__file__).parents[1] / "fixtures" / "field_reports.json"

# Every report comes from SGLang's own tracker, so anyone can read the thread.
SOURCE_PREFIX = "https://github.com/sgl-project/sglang/issues/"

# Every spelling of a flag that names an attention backend: a launch without one of them
# runs the backend SGLang's own default policy picks.
_BACKEND_OPTIONS = frozenset(option for flag in BACKEND_FLAGS for option in flag.options)


STATED_FACTS = ("sparse_attention", "sliding_window", "multimodal", *HEAD_SHAPES)
"""The model facts a report may state: what a config.json says beyond its architecture (its
switches, and the heads and head dims a kernel's ranges read)."""


class Outcome(enum.Enum):
    """What the operator saw, in the order a launch gets there."""

    REFUSED = "refused-at-startup"
    """SGLang refused before loading any weight."""
    FAILED_AFTER_LOAD = "failed-after-load"
    """It loaded the weights, then failed building the backend, warming up (CUDA graph
    capture) or at the first batch."""
    RAN = "ran"
    """It started and served."""


class FieldReport(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    """A stable name: `sglang-<issue>` and a suffix where one thread gives several launches."""
    source: str
    """The issue (and comment) the report comes from."""
    release: str
    """The exact SGLang release (X.Y.Z) the operator ran."""
    gpu: str
    """The GPU, by a name `compat check --gpu` knows."""
    model: str
    """The checkpoint's Hugging Face id."""
    architecture: str | None = None
    """Its config.json `architectures[0]`: needed when the model zoo lacks the model."""
    model_facts: dict[str, bool | int] = msgspec.field(default_factory=dict)
    """What the thread shows of a model the zoo lacks that its architecture alone does not
    say (`STATED_FACTS`: a traceback through the DSA backend shows sparse attention), as
    `compat check --model-config` would derive it from the model's config.json."""
    flags: tuple[str, ...] = ()
    """The launch flags that matter for attention, as typed (no `--model-path`)."""
    outcome: Outcome
    evidence: str
    """What the thread shows, in our own words."""
    disputed: bool = False
    """The report and the release's code disagree; the code decides, and the report is
    left out of the agreement floor."""
    dispute: str | None = None
    """Why the report is disputed."""

    @property
    def zoo_model(self) -> str | None:
        """The model's name in the zoo, when the zoo has it."""
        try:
            return known_model(self.model)[0]
        except UnknownModelError:
            return None

    @property
    def on_default_backend(self) -> bool:
        """No flag names an attention backend, so SGLang's own policy chose it."""
        return not any(word.split("=", 1)[0] in _BACKEND_OPTIONS for word in self.flags)


class FieldReportError(ValueError):
    """A report of the data file is malformed: the message names the report and the field."""


def load_field_reports(path: Path = FIELD_REPORTS) -> tuple[FieldReport, ...]:
    """Every report of `path`, validated; FieldReportError on the first bad one."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise FieldReportError(f"{path.name}: cannot be read as JSON: {error}") from error
    return parse_field_reports(raw)


def parse_field_reports(raw: object) -> tuple[FieldReport, ...]:
    if not isinstance(raw, list):
        raise FieldReportError("the field reports must be a JSON list of objects")
    reports: list[FieldReport] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        name = _name(item, index)
        try:
            report = msgspec.convert(item, FieldReport)
        except msgspec.ValidationError as error:
            raise FieldReportError(f"report {name}: {error}") from error
        _check(report, name)
        if report.id in seen:
            raise FieldReportError(f"report {name}: field `id`: {report.id!r} is used twice")
        seen.add(report.id)
        reports.append(report)
    return tuple(reports)


def _name(item: Any, index: int) -> str:
    """How an error names a report: its id when it has one, else its position."""
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        return repr(item["id"])
    return f"#{index}"


def _bad(name: str, field: str, problem: str) -> FieldReportError:
    return FieldReportError(f"report {name}: field `{field}`: {problem}")


def _check(report: FieldReport, name: str) -> None:
    """What the types cannot say: values the guard knows, and a dispute with its reason."""
    if report.release not in RELEASE_NAMES:
        choices = ", ".join(RELEASE_NAMES)
        raise _bad(name, "release", f"{report.release!r} is not modelled (choices: {choices})")
    if find_gpu(report.gpu) is None:
        raise _bad(name, "gpu", f"{report.gpu!r} is not a GPU `compat check --gpu` knows")
    if not report.source.startswith(SOURCE_PREFIX):
        raise _bad(name, "source", f"{report.source!r} does not start with {SOURCE_PREFIX}")
    if report.zoo_model is None and not report.architecture:
        raise _bad(name, "architecture", f"the model zoo lacks {report.model!r}: name it")
    unknown = sorted(set(report.model_facts) - set(STATED_FACTS))
    if unknown:
        choices = ", ".join(STATED_FACTS)
        raise _bad(name, "model_facts", f"{unknown[0]!r} is not a model fact (choices: {choices})")
    if report.model_facts and report.zoo_model is not None:
        raise _bad(name, "model_facts", "the zoo's config.json says the facts of its models")
    if report.flags and not report.flags[0].startswith("--"):
        raise _bad(name, "flags", f"the first word {report.flags[0]!r} is not a flag")
    if "--model-path" in report.flags or "--model" in report.flags:
        raise _bad(name, "flags", "the model goes in `model`, not in the flags")
    if not report.evidence.strip():
        raise _bad(name, "evidence", "is empty")
    if report.disputed != bool(report.dispute):
        raise _bad(name, "dispute", "a disputed report needs its reason, and only it has one")
