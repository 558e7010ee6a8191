"""The capability matrix as JSON, for tools that cannot import Python, and its JSON Schema.

Both are computed from `compat.matrix.MATRIX`: the schema's value sets come from the
vocabulary enums, the export from the matrix, so neither repeats a fact. Evidence is
listed once, in `evidence`, and referred to everywhere else by its index there.
"""

from __future__ import annotations

import json
from typing import Any

from compat import release_text
from compat.matrix import MATRIX
from compat.release_schema import ReleaseRules
from compat.releases import NEWEST, RELEASES
from compat.schema import (
    ArchStatus,
    Backend,
    ColumnId,
    Matrix,
    pairing_statement,
    phase_rule_id,
)
from compat.vocab import (
    KV_DTYPE_SPELLINGS,
    Action,
    Arch,
    CapabilityRange,
    Cell,
    CellKind,
    Evidence,
    KvDtype,
    ModelFeature,
    Phase,
    Platform,
    Severity,
)

SCHEMA_VERSION = 1
EXPORT_PATH = "docs/matrix.json"
SCHEMA_PATH = "docs/matrix.schema.json"

JSON = dict[str, Any]


class _EvidenceIndex:
    """Evidence in first-seen order; `ref` gives the index other entries point at."""

    def __init__(self) -> None:
        self._index: dict[Evidence, int] = {}

    def ref(self, evidence: Evidence | None) -> int | None:
        if evidence is None:
            return None
        return self._index.setdefault(evidence, len(self._index))

    def entries(self) -> list[JSON]:
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


def export_matrix(matrix: Matrix = MATRIX) -> JSON:
    """Everything the matrix knows, as plain JSON data in a stable order."""
    refs = _EvidenceIndex()
    for source in matrix.sources:
        refs.ref(source)
    baseline = _baseline(matrix, refs)
    tables = [_table(matrix, arch, refs) for arch in _archs(matrix)]
    backends = [_backend(matrix, backend, refs) for backend in matrix.backends]
    columns = [_column(matrix, column_id, refs) for column_id in _column_ids(matrix)]
    rules = _rules(matrix, refs)
    defaults = _default_branches(RELEASES[NEWEST])
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
        "releases": {name: _release(name) for name in RELEASES},
        "evidence": refs.entries(),
    }


def _default_branches(rules: ReleaseRules) -> list[dict[str, Any]]:
    """The release's default decision, branch by branch (the first that holds wins)."""
    return [
        {
            "backend": branch.backend,
            "attention_arch": None if branch.arch is None else branch.arch.value,
            "platform": None if branch.platform is None else branch.platform.value,
            "gpu": None
            if branch.gate is None
            else {
                "name": branch.gate.name,
                "majors": sorted(branch.gate.majors),
                "min_cuda": _version(branch.gate.min_cuda),
            },
            "no_spec_or_topk_one": branch.needs_no_spec_or_topk_one,
            "topk_given_when_speculative": branch.needs_topk_when_speculative,
            "architectures": None if branch.architectures is None else sorted(branch.architectures),
            "kv_heads": None if branch.kv_heads is None else sorted(branch.kv_heads),
        }
        for branch in rules.defaults
    ]


def _release(name: str) -> dict[str, Any]:
    """What a release accepts, how it picks a backend, and what changed in it."""
    rules = RELEASES[name]
    news = release_text.news(name)
    return {
        "backends": list(rules.backend_choices),
        "kv_cache_dtypes": list(rules.kv_choices),
        "speculative_algorithms": list(rules.algorithm_choices),
        "same_as": release_text.same_as(name),
        "defaults": _default_branches(rules),
        "model_overrides": [
            {
                "backend": override.backend,
                "architectures": sorted(override.architectures),
                "sparse_attention_only": override.sparse,
                "gpu": None if override.gate is None else override.gate.name,
            }
            for override in rules.model_overrides
        ],
        "changes": [
            {"summary": change.summary, "evidence": change.evidence.source}
            for change in news.changes
        ],
    }


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


def _ordered(members: frozenset[Any] | None, enum_type: Any) -> list[str] | None:
    if members is None:
        return None
    return [member.value for member in enum_type if member in members]


def _version(version: tuple[int, int] | None) -> list[int] | None:
    return None if version is None else list(version)


def _capability(capability: CapabilityRange | None) -> JSON | None:
    if capability is None:
        return None
    return {
        "min_major": capability.min_major,
        "max_major": capability.max_major,
        "label": capability.label,
    }


def _baseline(matrix: Matrix, refs: _EvidenceIndex) -> JSON:
    """The source every table shares: the page state the matrix describes."""
    table_sources = list(dict.fromkeys(table.evidence for table in matrix.tables))
    first = table_sources[0]
    return {
        "source": first.source,
        "url": first.url,
        "evidence": [refs.ref(evidence) for evidence in table_sources],
    }


def _vocabulary() -> JSON:
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


def _backend(matrix: Matrix, backend: Backend, refs: _EvidenceIndex) -> JSON:
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
            arch.value: matrix.arch_status(backend.name, arch).name.lower()
            for arch in _archs(matrix)
        },
        "kv_dtypes": _ordered(backend.kv_dtypes, KvDtype),
        "requires_features": _ordered(backend.requires_features, ModelFeature),
        "refuses_features": _ordered(backend.refuses_features, ModelFeature),
        "disables_cuda_graph": backend.disables_cuda_graph,
        "note": backend.note,
        "evidence": refs.ref(backend.evidence),
    }


def _column(matrix: Matrix, column_id: ColumnId, refs: _EvidenceIndex) -> JSON:
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


def _cell(cell: Cell, evidence: int | None) -> JSON:
    return {
        "kind": cell.kind.value,
        "symbol": cell.symbol,
        "page_sizes": list(cell.page_sizes),
        "fixed": cell.fixed,
        "evidence": evidence,
    }


def _table(matrix: Matrix, arch: Arch, refs: _EvidenceIndex) -> JSON:
    table = matrix.table(arch)
    return {
        "arch": arch.value,
        "title": table.title,
        "columns": [column_id.value for column_id in table.columns],
        "headers": [header for _, header in table.headers],
        "evidence": refs.ref(table.evidence),
        "rows": [
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
        ],
    }


def _rules(matrix: Matrix, refs: _EvidenceIndex) -> JSON:
    archs = _archs(matrix)
    return {
        "dtype_requirements": [
            {
                "rule_id": requirement.rule_id,
                "kv_dtype": requirement.dtype.value,
                "platforms": _ordered(requirement.platforms, Platform),
                "min_cuda": _version(requirement.min_cuda),
                "min_torch": _version(requirement.min_torch),
                "torch_dtype": requirement.torch_dtype,
                "evidence": refs.ref(requirement.evidence),
            }
            for requirement in matrix.dtype_requirements
        ],
        "pairing": [
            {
                "id": rule.id,
                "kv_dtype": rule.kv_dtype.value,
                "prefill_backend": rule.prefill_backend,
                "excluded_decode": sorted(rule.excluded_decode),
                "decode_partners": {
                    arch.value: list(matrix.decode_partners(rule, arch)) for arch in archs
                },
                "statement": pairing_statement(matrix, rule),
                "evidence": refs.ref(rule.evidence),
            }
            for rule in matrix.pairing_rules
        ],
        "hybrid_caution": [
            {"id": rule.id, "kv_dtype": rule.kv_dtype.value, "evidence": refs.ref(rule.evidence)}
            for rule in matrix.hybrid_caution_rules
        ],
        "spec_paged": [
            {
                "id": rule.id,
                "arch": rule.arch.value,
                "backends": sorted(rule.backends),
                "evidence": refs.ref(rule.evidence),
            }
            for rule in matrix.spec_paged_rules
        ],
        "dtype_fallback": [
            {
                "id": rule.id,
                "backend": rule.backend,
                "kv_dtype": rule.kv_dtype.value,
                "replacement": rule.replacement,
                "why": rule.why,
                "evidence": refs.ref(rule.evidence),
            }
            for rule in matrix.dtype_fallback_rules
        ],
        "phase_only": [
            {
                "id": phase_rule_id(backend),
                "backend": backend.name,
                "phases": _ordered(backend.phases, Phase),
            }
            for backend in matrix.phase_only_backends()
        ],
        "fixed_page_sizes": [
            {"backend": row.backend, "arch": arch.value, "page_sizes": list(sizes)}
            for row, arch, sizes in matrix.fixed_page_sizes()
        ],
    }


# -- the JSON Schema -------------------------------------------------------------------------


def _values(enum_type: Any) -> list[str]:
    return [member.value for member in enum_type]


def _nullable(schema: JSON) -> JSON:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: JSON, *, extra: JSON | bool = False) -> JSON:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": extra,
    }


def _keyed(keys: list[str], value: JSON) -> JSON:
    """An object whose keys are some of `keys`, each mapped to `value`."""
    return {"type": "object", "propertyNames": {"enum": keys}, "additionalProperties": value}


def _every_key(keys: list[str], value: JSON) -> JSON:
    """An object with exactly the keys `keys`, each mapped to `value`."""
    return {**_keyed(keys, value), "required": keys}


def matrix_schema() -> JSON:
    """The JSON Schema (draft 2020-12) of `export_matrix()`; value sets come from the enums."""
    string: JSON = {"type": "string"}
    text: JSON = {"type": "string", "minLength": 1}
    ref: JSON = {"$ref": "#/$defs/evidence_ref"}
    archs = _values(Arch)
    phases: JSON = {"type": "array", "items": {"enum": _values(Phase)}, "uniqueItems": True}
    features: JSON = {
        "type": "array",
        "items": {"enum": _values(ModelFeature)},
        "uniqueItems": True,
    }
    version: JSON = {
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "minItems": 2,
        "maxItems": 2,
    }
    backend_name: JSON = {"$ref": "#/$defs/backend_name"}
    backend_names: JSON = {"type": "array", "items": backend_name, "uniqueItems": True}
    column_ids = [column_id.value for column_id in ColumnId]
    kv_dtypes = _values(KvDtype)
    statuses = [status.name.lower() for status in ArchStatus]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "SGLang attention backend capability matrix",
        "description": "Written by `compat export` from the capability matrix; evidence is "
        "listed once and referred to by its index in `evidence`.",
        "$defs": {
            "default_branches": {
                "type": "array",
                "items": _object(
                    {
                        "backend": backend_name,
                        "attention_arch": _nullable({"enum": archs}),
                        "platform": _nullable({"enum": _values(Platform)}),
                        "gpu": _nullable(
                            _object(
                                {
                                    "name": text,
                                    "majors": {"type": "array", "items": {"type": "integer"}},
                                    "min_cuda": version,
                                }
                            )
                        ),
                        "no_spec_or_topk_one": {"type": "boolean"},
                        "topk_given_when_speculative": {"type": "boolean"},
                        "architectures": _nullable({"type": "array", "items": text}),
                        "kv_heads": _nullable({"type": "array", "items": {"type": "integer"}}),
                    }
                ),
            },
            "evidence_ref": {"type": "integer", "minimum": 0},
            "backend_name": {"type": "string", "pattern": "^[a-z0-9_]+$"},
            "capability": _nullable(
                _object(
                    {
                        "min_major": {"type": "integer", "minimum": 1},
                        "max_major": _nullable({"type": "integer", "minimum": 1}),
                        "label": text,
                    }
                )
            ),
            "cell": _object(
                {
                    "kind": {"enum": _values(CellKind)},
                    "symbol": text,
                    "page_sizes": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                    "fixed": {"type": "boolean"},
                    "evidence": ref,
                }
            ),
        },
        **_object(
            {
                "schema_version": {"const": SCHEMA_VERSION},
                "generated_by": string,
                "baseline": _object(
                    {
                        "source": text,
                        "url": _nullable(string),
                        "evidence": {"type": "array", "items": ref, "minItems": 1},
                    }
                ),
                "vocabulary": _object(
                    {
                        "attention_archs": _every_key(archs, text),
                        "phases": _every_key(_values(Phase), text),
                        "platforms": _every_key(_values(Platform), text),
                        "kv_cache_dtypes": {
                            "type": "object",
                            "additionalProperties": {"enum": kv_dtypes},
                        },
                        "model_features": _every_key(_values(ModelFeature), text),
                        "actions": _every_key(_values(Action), text),
                        "arch_statuses": _every_key(statuses, text),
                    }
                ),
                "backends": {
                    "type": "array",
                    "items": _object(
                        {
                            "name": backend_name,
                            "phases": {**phases, "minItems": 1},
                            "phase_rule_id": _nullable(text),
                            "platforms": _keyed(
                                _values(Platform),
                                {"enum": [CellKind.SUPPORTED.value, CellKind.UNTESTED.value]},
                            ),
                            "capability": _every_key(archs, {"$ref": "#/$defs/capability"}),
                            "archs": _every_key(archs, {"enum": statuses}),
                            "kv_dtypes": _nullable({"type": "array", "items": {"enum": kv_dtypes}}),
                            "requires_features": features,
                            "refuses_features": features,
                            "disables_cuda_graph": {"type": "boolean"},
                            "note": string,
                            "evidence": _nullable(ref),
                        }
                    ),
                },
                "columns": {
                    "type": "array",
                    "items": _object(
                        {
                            "id": {"enum": column_ids},
                            "rule_id": text,
                            "description": text,
                            "action": {"enum": _values(Action)},
                            "severity": {"enum": _values(Severity)},
                            "why": text,
                            "phases": phases,
                            "headers": _every_key(archs, _nullable(text)),
                            "evidence": _nullable(ref),
                        }
                    ),
                },
                "tables": {
                    "type": "array",
                    "items": _object(
                        {
                            "arch": {"enum": archs},
                            "title": text,
                            "columns": {"type": "array", "items": {"enum": column_ids}},
                            "headers": {"type": "array", "items": text},
                            "evidence": ref,
                            "rows": {
                                "type": "array",
                                "items": _object(
                                    {
                                        "backend": backend_name,
                                        "display_name": text,
                                        "cells": _keyed(column_ids, {"$ref": "#/$defs/cell"}),
                                    }
                                ),
                            },
                        }
                    ),
                },
                "rules": _object(
                    {
                        "dtype_requirements": {
                            "type": "array",
                            "items": _object(
                                {
                                    "rule_id": text,
                                    "kv_dtype": {"enum": kv_dtypes},
                                    "platforms": _nullable(
                                        {"type": "array", "items": {"enum": _values(Platform)}}
                                    ),
                                    "min_cuda": _nullable(version),
                                    "min_torch": _nullable(version),
                                    "torch_dtype": _nullable(text),
                                    "evidence": _nullable(ref),
                                }
                            ),
                        },
                        "pairing": {
                            "type": "array",
                            "items": _object(
                                {
                                    "id": text,
                                    "kv_dtype": {"enum": kv_dtypes},
                                    "prefill_backend": backend_name,
                                    "excluded_decode": backend_names,
                                    "decode_partners": _every_key(archs, backend_names),
                                    "statement": text,
                                    "evidence": ref,
                                }
                            ),
                        },
                        "hybrid_caution": {
                            "type": "array",
                            "items": _object(
                                {"id": text, "kv_dtype": {"enum": kv_dtypes}, "evidence": ref}
                            ),
                        },
                        "spec_paged": {
                            "type": "array",
                            "items": _object(
                                {
                                    "id": text,
                                    "arch": {"enum": archs},
                                    "backends": backend_names,
                                    "evidence": ref,
                                }
                            ),
                        },
                        "dtype_fallback": {
                            "type": "array",
                            "items": _object(
                                {
                                    "id": text,
                                    "backend": backend_name,
                                    "kv_dtype": {"enum": kv_dtypes},
                                    "replacement": backend_name,
                                    "why": text,
                                    "evidence": ref,
                                }
                            ),
                        },
                        "phase_only": {
                            "type": "array",
                            "items": _object(
                                {"id": text, "backend": backend_name, "phases": phases}
                            ),
                        },
                        "fixed_page_sizes": {
                            "type": "array",
                            "items": _object(
                                {
                                    "backend": backend_name,
                                    "arch": {"enum": archs},
                                    "page_sizes": {
                                        "type": "array",
                                        "items": {"type": "integer", "minimum": 1},
                                        "minItems": 1,
                                    },
                                }
                            ),
                        },
                    }
                ),
                "defaults": {"$ref": "#/$defs/default_branches"},
                "releases": {
                    "type": "object",
                    "additionalProperties": False,
                    "patternProperties": {
                        r"^\d+\.\d+\.\d+$": _object(
                            {
                                "backends": {"type": "array", "items": string},
                                "kv_cache_dtypes": {"type": "array", "items": string},
                                "speculative_algorithms": {"type": "array", "items": string},
                                "same_as": string,
                                "defaults": {"$ref": "#/$defs/default_branches"},
                                "model_overrides": {
                                    "type": "array",
                                    "items": _object(
                                        {
                                            "backend": backend_name,
                                            "architectures": {"type": "array", "items": text},
                                            "sparse_attention_only": {"type": "boolean"},
                                            "gpu": _nullable(text),
                                        }
                                    ),
                                },
                                "changes": {
                                    "type": "array",
                                    "items": _object({"summary": text, "evidence": text}),
                                },
                            }
                        )
                    },
                },
                "evidence": {
                    "type": "array",
                    "items": _object(
                        {
                            "index": {"type": "integer", "minimum": 0},
                            "source": text,
                            "url": _nullable(string),
                            "tested_on": _nullable(string),
                            "models": {"type": "array", "items": text},
                            "note": _nullable(string),
                        }
                    ),
                },
            }
        ),
    }
