"""The capability matrix of every release as JSON, for tools that cannot import Python, and
its JSON Schema.

Both are computed from `compat.releases`: the export from each release's start-up rules and
documented matrix (`release_matrix`), the schema from the shapes the builders below return
(`compat.publish.export_shapes`), whose value sets come from the vocabulary enums; neither
repeats a fact. Evidence is listed once, in `evidence`, and referred to everywhere else by
its index there. Rules are written generically (their kind, their fields, their statement), so
a new kind of rule needs no export code.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable
from typing import Final, TypeVar, overload

import msgspec.json
import msgspec.structs

from compat.claim.backends import Backend, phase_rule_id
from compat.claim.cell_words import kind_meaning, meaning
from compat.claim.cells import Action, Cell, CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import ArchStatus, Matrix
from compat.claim.rules import CrossFieldRule, DtypeRequirement
from compat.claim.words import statement
from compat.publish.export_releases import release
from compat.publish.export_shapes import (
    DEFINITIONS,
    GENERATOR,
    BackendJson,
    CapabilityJson,
    CellJson,
    ColumnJson,
    DocumentedJson,
    EvidenceJson,
    FixedPageSizesJson,
    MatrixDocument,
    MatrixJson,
    OneMatrixJson,
    PageChangeJson,
    PhaseOnlyJson,
    ReleaseJson,
    RowJson,
    RuleJson,
    TableJson,
    ViewsJson,
    VocabularyJson,
)
from compat.publish.json_schema import JSON, json_schema
from compat.publish.page_changes import page_news
from compat.releases import NEWEST, RELEASE_NAMES, release_matrix
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Arch, KvDtype, ModelFeature, Phase, Platform

SCHEMA_VERSION: Final = 2
EXPORT_PATH = "docs/matrix.json"
SCHEMA_PATH = "docs/matrix.schema.json"
# What marks each file as written by `compat export` (never replaced without it).
EXPORT_MARKER: Final = f'"generated_by": "{GENERATOR}"'
SCHEMA_MARKER: Final = f"Written by `{GENERATOR}`"

E = TypeVar("E", bound=enum.Enum)


class _EvidenceIndex:
    """Evidence in first-seen order; `ref` gives the index other entries point at."""

    def __init__(self) -> None:
        self._index: dict[Evidence, int] = {}

    @overload
    def ref(self, evidence: Evidence) -> int: ...
    @overload
    def ref(self, evidence: Evidence | None) -> int | None: ...
    def ref(self, evidence: Evidence | None) -> int | None:
        if evidence is None:
            return None
        return self._index.setdefault(evidence, len(self._index))

    def entries(self) -> list[EvidenceJson]:
        return [
            {
                "index": index,
                "source": evidence.source,
                "url": evidence.url,
                "tested_on": evidence.tested_on,
                "models": list(evidence.models),
                "note": evidence.note,
            }
            for evidence, index in self._index.items()
        ]


def export_matrix() -> MatrixJson:
    """Every release's start-up rules and documented matrix, as plain JSON data in a stable
    order."""
    refs = _EvidenceIndex()
    baseline = release_matrix(RELEASE_NAMES[0]).tables[0].evidence
    releases: dict[str, ReleaseJson] = {}
    for name in RELEASE_NAMES:
        releases[name] = {
            **release(name),
            "documented": documented(release_matrix(name), refs),
            "page_changes": _page_changes(name, refs),
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": GENERATOR,
        "baseline": {"release": RELEASE_NAMES[0], "source": baseline.source, "url": baseline.url},
        "newest": NEWEST,
        "vocabulary": _vocabulary(),
        "releases": releases,
        "evidence": refs.entries(),
    }


def matrix_schema() -> JSON:
    """The JSON Schema (draft 2020-12) of `export_matrix()`, derived from its declared shape."""
    return json_schema(MatrixDocument, definitions=DEFINITIONS)


def render_export() -> str:
    """The export as the text committed to `docs/matrix.json`."""
    return _indented(export_matrix())


def render_schema() -> str:
    """The JSON Schema as the text committed to `docs/matrix.schema.json`."""
    return _indented(matrix_schema())


def _indented(data: object) -> str:
    """`data` as JSON indented by two, keys in insertion order, non-ASCII as is, then a
    newline: the text `json.dumps(data, indent=2, ensure_ascii=False)` writes, at a tenth
    of the cost (the standard encoder runs in pure Python whenever it indents, and the
    export is written or compared on every `compat export` and site build)."""
    return msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n"


def matrix_export(matrix: Matrix) -> OneMatrixJson:
    """One documented matrix (any release's, or a changed copy) with its own evidence list."""
    refs = _EvidenceIndex()
    return {"documented": documented(matrix, refs), "evidence": refs.entries()}


def documented(matrix: Matrix, refs: _EvidenceIndex) -> DocumentedJson:
    """One release's documented matrix."""
    for source in matrix.sources:
        refs.ref(source)
    return {
        "page": refs.ref(matrix.tables[0].evidence),
        "backends": [_backend(matrix, backend, refs) for backend in matrix.backends],
        "aliases": dict(matrix.aliases),
        "columns": [_column(matrix, column.id, refs) for column in matrix.columns],
        "tables": [_table(matrix, arch, refs) for arch in _archs(matrix)],
        "rules": [
            *_requirements(matrix, refs),
            *(_rule(matrix, r, refs) for r in matrix.cross_field_rules),
        ],
        "views": _views(matrix),
    }


def _page_changes(name: str, refs: _EvidenceIndex) -> list[PageChangeJson]:
    return [
        {
            "summary": news.change.summary,
            "evidence": refs.ref(news.change.evidence),
            "tagged_in": news.change.tagged_in,
            "lines": list(news.lines),
        }
        for news in page_news(name)
    ]


# -- parts of the export -------------------------------------------------------------------


def _archs(matrix: Matrix) -> tuple[Arch, ...]:
    return tuple(table.arch for table in matrix.tables)


def _ordered(members: Iterable[E], enum_type: type[E]) -> list[str]:
    """`members` as values, in the enum's declaration order (not the set's)."""
    chosen = frozenset(members)
    return [member.value for member in enum_type if member in chosen]


def _capability(capability: CapabilityRange | None) -> CapabilityJson | None:
    if capability is None:
        return None
    return {
        "min_major": capability.min_major,
        "max_major": capability.max_major,
        "label": capability.label,
    }


def _vocabulary() -> VocabularyJson:
    return {
        "attention_archs": {arch.value: arch.label for arch in Arch},
        "phases": {phase.value: phase.flag for phase in Phase},
        "platforms": {platform.value: platform.label for platform in Platform},
        "kv_cache_dtypes": {
            spelling: dtype.value for spelling, dtype in KV_DTYPE_SPELLINGS.items()
        },
        "model_features": {feature.value: feature.label for feature in ModelFeature},
        "actions": {action.value: action.severity.value for action in Action},
        "arch_statuses": {status.value: status.label for status in ArchStatus},
        "cell_kinds": {kind.value: kind_meaning(kind) for kind in CellKind},
    }


def _backend(matrix: Matrix, backend: Backend, refs: _EvidenceIndex) -> BackendJson:
    return {
        "name": backend.name,
        "phases": _ordered(backend.phases, Phase),
        "phase_rule_id": None if backend.phases == frozenset(Phase) else phase_rule_id(backend),
        "platforms": {
            platform.value: backend.platforms[platform].value
            for platform in Platform
            if platform in backend.platforms
        },
        "capability": {
            arch.value: _capability(backend.capability.get(arch)) for arch in _archs(matrix)
        },
        "archs": {
            arch.value: matrix.arch_status(backend.name, arch).value for arch in _archs(matrix)
        },
        "kv_dtypes": None if backend.kv_dtypes is None else _ordered(backend.kv_dtypes, KvDtype),
        "requires_features": _ordered(backend.requires_features, ModelFeature),
        "refuses_features": _ordered(backend.refuses_features, ModelFeature),
        "disables_cuda_graph": backend.disables_cuda_graph,
        "note": backend.note,
        "evidence": refs.ref(backend.evidence),
    }


def _column(matrix: Matrix, column_id: ColumnId, refs: _EvidenceIndex) -> ColumnJson:
    column = matrix.column(column_id)
    return {
        "id": column_id.value,
        "rule_id": column_id.rule_id,
        "description": meaning(column),
        "kv_cache_dtypes": [dtype.value for dtype in column.dtypes],
        "action": column.action.value,
        "severity": column.action.severity.value,
        "why": column.why,
        "phases": _ordered(column.phases, Phase),
        "headers": {arch.value: matrix.header(arch, column_id) for arch in _archs(matrix)},
        "evidence": refs.ref(column.evidence),
    }


def _cell(cell: Cell, evidence: int) -> CellJson:
    found: CellJson = {"kind": cell.kind.value, "symbol": cell.symbol, "evidence": evidence}
    if cell.page_sizes:
        found["page_sizes"] = list(cell.page_sizes)
        found["fixed"] = cell.fixed
    return found


def _table(matrix: Matrix, arch: Arch, refs: _EvidenceIndex) -> TableJson:
    table = matrix.table(arch)
    rows: list[RowJson] = [
        {
            "backend": row.backend,
            "display_name": row.display_name,
            "cells": {
                column_id.value: _cell(
                    row.cells[column_id],
                    refs.ref(matrix.evidence_for(arch, row.backend, column_id)),
                )
                for column_id in table.columns
            },
        }
        for row in table.rows
    ]
    return {
        "arch": arch.value,
        "title": table.title,
        "columns": [column_id.value for column_id in table.columns],
        "headers": [header for _, header in table.headers],
        "evidence": refs.ref(table.evidence),
        "rows": rows,
    }


# -- rules, written generically --------------------------------------------------------------

_WORD = re.compile(r"(?<!^)(?=[A-Z])")


def _kind(rule: object) -> str:
    """`PairingRule` -> `pairing`, `DtypeRequirement` -> `dtype_requirement`."""
    return _WORD.sub("_", type(rule).__name__.removesuffix("Rule")).lower()


def _fact(value: object) -> str | int | bool | list[str] | list[int] | None:
    """A rule's field as JSON: a name or number, or a list of them (sets sorted)."""
    if isinstance(value, enum.Enum):
        return str(value.value)
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, frozenset | set):
        return sorted(str(_fact(item)) for item in value)
    if isinstance(value, tuple) and all(isinstance(item, int) for item in value):
        return list(value)
    if isinstance(value, tuple):
        return [str(_fact(item)) for item in value]
    raise TypeError(f"no JSON fact for {value!r}")


def _facts(
    rule: msgspec.Struct, skip: Iterable[str]
) -> dict[str, str | int | bool | list[str] | list[int] | None]:
    skipped = {"evidence", *skip}
    return {
        name: _fact(getattr(rule, name)) for name in _field_names(type(rule)) if name not in skipped
    }


@functools.cache
def _field_names(struct_type: type[msgspec.Struct]) -> tuple[str, ...]:
    """A rule type's field names (msgspec reads the class's annotations on every call)."""
    return tuple(field.name for field in msgspec.structs.fields(struct_type))


def _rule(matrix: Matrix, rule: CrossFieldRule, refs: _EvidenceIndex) -> RuleJson:
    return {
        "kind": _kind(rule),
        "id": rule.id,
        "statement": statement(rule, matrix),
        "facts": _facts(rule, ("id",)),
        "evidence": refs.ref(rule.evidence),
    }


def _requirements(matrix: Matrix, refs: _EvidenceIndex) -> list[RuleJson]:
    requirements: list[DtypeRequirement] = list(matrix.dtype_requirements)
    return [
        {
            "kind": _kind(requirement),
            "id": requirement.rule_id,
            "statement": statement(requirement, matrix),
            "facts": _facts(requirement, ("rule_id",)),
            "evidence": refs.ref(requirement.evidence),
        }
        for requirement in requirements
    ]


def _views(matrix: Matrix) -> ViewsJson:
    return {
        "decode_partners": {
            rule.id: {
                arch.value: list(matrix.decode_partners(rule, arch)) for arch in _archs(matrix)
            }
            for rule in matrix.pairing_rules
        },
        "phase_only": _phase_only(matrix),
        "fixed_page_sizes": _fixed_page_sizes(matrix),
    }


def _phase_only(matrix: Matrix) -> list[PhaseOnlyJson]:
    return [
        {
            "id": phase_rule_id(backend),
            "backend": backend.name,
            "phases": _ordered(backend.phases, Phase),
        }
        for backend in matrix.phase_only_backends()
    ]


def _fixed_page_sizes(matrix: Matrix) -> list[FixedPageSizesJson]:
    return [
        {"backend": row.backend, "arch": arch.value, "page_sizes": list(sizes)}
        for row, arch, sizes in matrix.fixed_page_sizes()
    ]
