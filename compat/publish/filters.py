"""The small text helpers the page templates apply as Jinja filters.

Plain functions, so this module imports no Jinja; `compat.publish.pages` registers `FILTERS`.
The templates receive domain objects (the matrix, the release's rules) and say everything
in their own prose; a filter only formats (code spans, "a, b or c") or selects what a
template expression cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from compat.claim import words as wording
from compat.claim.cell_words import meaning
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix, Row
from compat.publish import startup_text
from compat.vocab.evidence import Evidence
from compat.vocab.spelling import join_or
from compat.vocab.terms import ModelFeature


def or_list(items: Iterable[object]) -> str:
    """`a`, `a or b`, `a, b or c`, of any values (page sizes too)."""
    return join_or([str(item) for item in items])


def and_list(items: Iterable[object]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return wording.join_and([str(item) for item in items])


def mark(items: Iterable[str], which: str, label: str) -> list[str]:
    """`items` with `label` appended to the one equal to `which` (the default, ...)."""
    return [item + label if item == which else item for item in items]


def cell_text(text: str) -> str:
    """Make text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def anchor(text: str) -> str:
    """The id MkDocs would give a heading: `MHA Backends` -> `mha-backends`."""
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def linked(evidence: Evidence) -> str:
    if evidence.url is None:
        return evidence.source
    return f"[{evidence.source}]({evidence.url})"


def source(evidence: Evidence) -> str:
    """A source as the page links it, with what it shows when it says so (a sentence)."""
    shown = linked(evidence)
    if not evidence.note:
        return f"{shown}."
    return f"{shown}: {evidence.note.rstrip('.')}."


def row_label(row: Row) -> str:
    return f"{row.display_name} [`{row.backend}`]"


def labels(features: frozenset[ModelFeature]) -> list[str]:
    """The labels of `features`, in vocabulary order ("models with ...")."""
    return [feature.label for feature in ModelFeature if feature in features]


def headers_of(matrix: Matrix, column_id: ColumnId) -> str:
    """`FP8 KV Cache (MHA, MLA)` or `Page Size > 1 (native) (MHA); Native Page Sizes (MLA)`."""
    by_header: dict[str, list[str]] = {}
    for table in matrix.tables:
        header = dict(table.headers).get(column_id)
        if header is not None:
            by_header.setdefault(header, []).append(table.arch.label)
    return "; ".join(f"{header} ({', '.join(archs)})" for header, archs in by_header.items())


FILTERS: dict[str, Callable[..., Any]] = {
    "and_list": and_list,
    "anchor": anchor,
    "code": wording.code,
    "code_list": wording.code_list,
    "divergences": lambda matrix, rules: tuple(startup_text.divergences(matrix, rules)),
    "fa3_architectures": startup_text.fa3_architectures,
    "headers_of": headers_of,
    "labels": labels,
    "linked": linked,
    "mark": mark,
    "meaning": meaning,
    "note": wording.note,
    "or_list": or_list,
    "model_rule_text": startup_text.model_rule_text,
    "phases": wording.phases,
    "row_label": row_label,
    "source": source,
    "statement": wording.statement,
}
