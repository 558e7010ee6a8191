"""The capability matrix as JSON, for tools that cannot import Python, and its JSON Schema.

Both are computed from `compat.matrix.MATRIX`: the export from the matrix, the schema from
the shapes the builders below return (`compat.publish.export_shapes`), whose value sets come from
the vocabulary enums; neither repeats a fact. Evidence is listed once, in `evidence`, and
referred to everywhere else by its index there.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from typing import Final, TypeVar, overload

from compat.claim.backends import Backend, phase_rule_id
from compat.claim.baseline import MATRIX
from compat.claim.cells import Action, Cell
from compat.claim.columns import ColumnId
from compat.claim.matrix import ArchStatus, Matrix
from compat.claim.words import statement
from compat.publish.export_releases import default_branches, release
from compat.publish.export_shapes import (
    DEFINITIONS,
    BackendJson,
    BaselineJson,
    CapabilityJson,
    CellJson,
    ColumnJson,
    DtypeFallbackJson,
    DtypeRequirementJson,
    EvidenceJson,
    FixedPageSizesJson,
    HybridCautionJson,
    MatrixDocument,
    MatrixJson,
    PairingJson,
    PhaseOnlyJson,
    RowJson,
    RulesJson,
    SpecPagedJson,
    TableJson,
    VocabularyJson,
)
from compat.publish.json_schema import JSON, json_schema
from compat.releases import NEWEST, RELEASES
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Arch, KvDtype, ModelFeature, Phase, Platform

SCHEMA_VERSION: Final = 1
EXPORT_PATH = "docs/matrix.json"
SCHEMA_PATH = "docs/matrix.schema.json"

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


def export_matrix(matrix: Matrix = MATRIX) -> MatrixJson:
    """Everything the matrix knows, as plain JSON data in a stable order."""
    refs = _EvidenceIndex()
    for source in matrix.sources:
        refs.ref(source)
    baseline = _baseline(matrix, refs)
    tables = [_table(matrix, arch, refs) for arch in _archs(matrix)]
    backends = [_backend(matrix, backend, refs) for backend in matrix.backends]
    columns = [_column(matrix, column_id, refs) for column_id in _column_ids(matrix)]
    rules = _rules(matrix, refs)
    defaults = default_branches(RELEASES[NEWEST])
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": "compat export",
        "baseline": baseline,
        "vocabulary": _vocabulary(),
        "backends": backends,
        "columns": columns,
        "tables": tables,
        "rules": rules,
        "defaults": defaults,
        "releases": {name: release(name) for name in RELEASES},
        "evidence": refs.entries(),
    }


def matrix_schema() -> JSON:
    """The JSON Schema (draft 2020-12) of `export_matrix()`, derived from its declared shape."""
    return json_schema(MatrixDocument, definitions=DEFINITIONS)


def render_export(matrix: Matrix = MATRIX) -> str:
    """The export as the text committed to `docs/matrix.json`."""
    return json.dumps(export_matrix(matrix), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def render_schema() -> str:
    """The JSON Schema as the text committed to `docs/matrix.schema.json`."""
    return json.dumps(matrix_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


# -- parts of the export -------------------------------------------------------------------


def _archs(matrix: Matrix) -> tuple[Arch, ...]:
    return tuple(table.arch for table in matrix.tables)


def _column_ids(matrix: Matrix) -> tuple[ColumnId, ...]:
    return tuple(column.id for column in matrix.columns)


def _ordered(members: Iterable[E], enum_type: type[E]) -> list[str]:
    """`members` as values, in the enum's declaration order (not the set's)."""
    chosen = frozenset(members)
    return [member.value for member in enum_type if member in chosen]


def _version(version: tuple[int, int] | None) -> list[int] | None:
    return None if version is None else list(version)


def _capability(capability: CapabilityRange | None) -> CapabilityJson | None:
    if capability is None:
        return None
    return {
        "min_major": capability.min_major,
        "max_major": capability.max_major,
        "label": capability.label,
    }


def _baseline(matrix: Matrix, refs: _EvidenceIndex) -> BaselineJson:
    """The source every table shares: the page state the matrix describes."""
    table_sources = list(dict.fromkeys(table.evidence for table in matrix.tables))
    first = table_sources[0]
    return {
        "source": first.source,
        "url": first.url,
        "evidence": [refs.ref(evidence) for evidence in table_sources],
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
        "description": column.description,
        "action": column.action.value,
        "severity": column.action.severity.value,
        "why": column.why,
        "phases": _ordered(column.phases, Phase),
        "headers": {arch.value: matrix.header(arch, column_id) for arch in _archs(matrix)},
        "evidence": refs.ref(column.evidence),
    }


def _cell(cell: Cell, evidence: int) -> CellJson:
    return {
        "kind": cell.kind.value,
        "symbol": cell.symbol,
        "page_sizes": list(cell.page_sizes),
        "fixed": cell.fixed,
        "evidence": evidence,
    }


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


# -- rules -----------------------------------------------------------------------------------


def _rules(matrix: Matrix, refs: _EvidenceIndex) -> RulesJson:
    return {
        "dtype_requirements": _dtype_requirements(matrix, refs),
        "pairing": _pairing(matrix, refs),
        "hybrid_caution": _hybrid_caution(matrix, refs),
        "spec_paged": _spec_paged(matrix, refs),
        "dtype_fallback": _dtype_fallback(matrix, refs),
        "phase_only": _phase_only(matrix),
        "fixed_page_sizes": _fixed_page_sizes(matrix),
    }


def _dtype_requirements(matrix: Matrix, refs: _EvidenceIndex) -> list[DtypeRequirementJson]:
    return [
        {
            "rule_id": requirement.rule_id,
            "kv_dtype": requirement.dtype.value,
            "platforms": None
            if requirement.platforms is None
            else _ordered(requirement.platforms, Platform),
            "min_cuda": _version(requirement.min_cuda),
            "min_torch": _version(requirement.min_torch),
            "torch_dtype": requirement.torch_dtype,
            "evidence": refs.ref(requirement.evidence),
        }
        for requirement in matrix.dtype_requirements
    ]


def _pairing(matrix: Matrix, refs: _EvidenceIndex) -> list[PairingJson]:
    return [
        {
            "id": rule.id,
            "kv_dtype": rule.kv_dtype.value,
            "prefill_backend": rule.prefill_backend,
            "excluded_decode": sorted(rule.excluded_decode),
            "decode_partners": {
                arch.value: list(matrix.decode_partners(rule, arch)) for arch in _archs(matrix)
            },
            "statement": statement(rule, matrix),
            "evidence": refs.ref(rule.evidence),
        }
        for rule in matrix.pairing_rules
    ]


def _hybrid_caution(matrix: Matrix, refs: _EvidenceIndex) -> list[HybridCautionJson]:
    return [
        {"id": rule.id, "kv_dtype": rule.kv_dtype.value, "evidence": refs.ref(rule.evidence)}
        for rule in matrix.hybrid_caution_rules
    ]


def _spec_paged(matrix: Matrix, refs: _EvidenceIndex) -> list[SpecPagedJson]:
    return [
        {
            "id": rule.id,
            "arch": rule.arch.value,
            "backends": sorted(rule.backends),
            "evidence": refs.ref(rule.evidence),
        }
        for rule in matrix.spec_paged_rules
    ]


def _dtype_fallback(matrix: Matrix, refs: _EvidenceIndex) -> list[DtypeFallbackJson]:
    return [
        {
            "id": rule.id,
            "backend": rule.backend,
            "kv_dtype": rule.kv_dtype.value,
            "replacement": rule.replacement,
            "why": rule.why,
            "evidence": refs.ref(rule.evidence),
        }
        for rule in matrix.dtype_fallback_rules
    ]


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
