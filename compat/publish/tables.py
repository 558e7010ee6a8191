"""The page's Markdown tables, computed from the matrix and the release's rules.

A table is a `Grid` of cell text; the template lays it out with the `table` filter. Cell
text is built here because a row of a dozen formatted cells reads better as a tuple than
as template markup; the prose around the tables is in the template.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from compat.claim import words as wording
from compat.claim.backends import Backend, phase_rule_id
from compat.claim.cell_words import kind_meaning, meaning
from compat.claim.cells import CellKind, PlatformSupport
from compat.claim.columns import Column
from compat.claim.matrix import ArchStatus, Matrix, Table
from compat.claim.rules import DtypeRequirement
from compat.claim.words import code, code_list, join_and, phases
from compat.engine.rules import ReleaseRules
from compat.guard.audit_facts import Dispute
from compat.guard.audit_table import HEADERS, audit_rows
from compat.inputs.gpus import Gpu
from compat.publish import startup_text
from compat.publish.filters import cell_text, headers_of, labels, linked, row_label
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, Platform


@dataclass(frozen=True)
class Grid:
    """A plain table: headers and rows of cell text, made safe for a Markdown table."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, headers: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> Grid:
        return cls(
            headers=tuple(cell_text(header) for header in headers),
            rows=tuple(tuple(cell_text(cell) for cell in row) for row in rows),
        )


def markdown(grid: Grid) -> str:
    """The grid as a Markdown table (no trailing newline)."""
    lines = [
        f"| {' | '.join(grid.headers)} |",
        "|" + "---|" * len(grid.headers),
        *(f"| {' | '.join(row)} |" for row in grid.rows),
    ]
    return "\n".join(lines)


def matrix_table(table: Table, disputes: tuple[Dispute, ...] = ()) -> Grid:
    """One architecture's table of cells; a disputed cell carries its marker."""
    marked = {(d.backend, d.column): d for d in disputes if d.arch is table.arch}
    return Grid.of(
        ("Backend", *(header for _, header in table.headers)),
        (
            (
                row_label(row),
                *(
                    _marked(row.cells[column_id].symbol, marked.get((row.backend, column_id)))
                    for column_id in table.columns
                ),
            )
            for row in table.rows
        ),
    )


DISPUTE_MARK = "‡"
"""The marker of a cell the release's own code contradicts (`compat audit`)."""


def _marked(symbol: str, dispute: Dispute | None) -> str:
    """The cell's symbol, and for a disputed one the marker whose tooltip says what the
    code does and where."""
    if dispute is None or dispute.documented != symbol:
        return symbol
    title = html.escape(dispute.summary, quote=True)
    return f'{symbol} <abbr class="dispute" title="{title}">{DISPUTE_MARK}</abbr>'


def disputes_table(disputes: tuple[Dispute, ...]) -> Grid:
    """The audit's table, as `compat audit` prints it."""
    return Grid.of(HEADERS, audit_rows(disputes))


# -- hardware requirements --------------------------------------------------------------------


def _capability(backend: Backend) -> str:
    ranges: dict[Arch, CapabilityRange] = dict(backend.capability)
    if not ranges:
        return "any"
    return "; ".join(f"{arch.label}: {ranges[arch].label}" for arch in Arch if arch in ranges)


def _platforms(backend: Backend) -> str:
    return ", ".join(
        platform.label
        + (" (untested)" if backend.platforms[platform] is PlatformSupport.UNTESTED else "")
        for platform in Platform
        if platform in backend.platforms
    )


def _features(backend: Backend) -> str:
    parts = []
    if backend.requires_features:
        parts.append("needs " + join_and(labels(backend.requires_features)))
    if backend.refuses_features:
        parts.append("refuses " + join_and(labels(backend.refuses_features)))
    return "; ".join(parts) or "—"


def _kv_dtypes(backend: Backend) -> str:
    if backend.kv_dtypes is None:
        return "any"
    return "only " + code_list(d.value for d in KvDtype if d in backend.kv_dtypes)


def _arch_status(matrix: Matrix, backend: Backend, arch: Arch) -> str:
    status = matrix.arch_status(backend.name, arch)
    text: str = status.label
    return "✅ " + text if status is ArchStatus.ROW else text


def hardware(matrix: Matrix) -> Grid:
    headers = (
        "Backend",
        "Platforms",
        "Compute capability",
        "Phases",
        *(arch.label for arch in Arch),
        "KV cache dtypes",
        "Model features",
        "Note",
    )
    rows = (
        (
            code(backend.name),
            _platforms(backend),
            _capability(backend),
            phases(backend.phases),
            *(_arch_status(matrix, backend, arch) for arch in Arch),
            _kv_dtypes(backend),
            _features(backend),
            backend.note or "—",
        )
        for backend in matrix.backends
    )
    return Grid.of(headers, rows)


def _gpu_capability(gpu: Gpu) -> str:
    if gpu.rocm_arch is not None:
        return gpu.rocm_arch.value
    return "—" if gpu.capability is None else f"{gpu.capability} ({gpu.capability.dotted})"


def gpus(known: Iterable[Gpu]) -> Grid:
    rows = (
        (
            gpu.name,
            ", ".join(gpu.aliases) or "—",
            gpu.platform.label,
            _gpu_capability(gpu),
            code(f"--gpu {gpu.name}" if " " not in gpu.name else f"--gpu '{gpu.name}'"),
        )
        for gpu in known
    )
    headers = (
        "Name",
        "Also",
        "Platform",
        "Compute capability (ROCm: architecture)",
        "compat check",
    )
    return Grid.of(headers, rows)


# -- legend and rules -------------------------------------------------------------------------


def _used_columns(matrix: Matrix) -> tuple[Column, ...]:
    used = {column_id for table in matrix.tables for column_id in table.columns}
    return tuple(column for column in matrix.columns if column.id in used)


def legend(matrix: Matrix) -> Grid:
    headers = (
        "Column",
        "Meaning",
        "Guard action on an unsupported cell",
        "Why",
        "Phases checked",
        "Finding id",
    )
    rows = (
        (
            headers_of(matrix, column.id),
            meaning(column),
            column.action.value,
            column.why,
            phases(column.phases),
            code(column.id.rule_id),
        )
        for column in _used_columns(matrix)
    )
    return Grid.of(headers, rows)


def cell_kinds(matrix: Matrix) -> Grid:
    """What each kind of cell in the tables means, with a cell of that kind as it shows."""
    examples: dict[CellKind, str] = {}
    for table in matrix.tables:
        for row in table.rows:
            for cell in row.cells.values():
                examples.setdefault(cell.kind, cell.symbol)
    rows = ((examples[k], kind_meaning(k)) for k in CellKind if k in examples)
    return Grid.of(("Cell", "Meaning"), rows)


def _unique(evidence: Iterable[Evidence]) -> list[Evidence]:
    seen: list[Evidence] = []
    for item in evidence:
        if item not in seen:
            seen.append(item)
    return seen


def cross_field_rules(matrix: Matrix) -> Grid:
    """Every rule with its statement; dtype requirements sharing an id make one row."""
    rows: list[tuple[str, str, str]] = []
    grouped: dict[str, list[DtypeRequirement]] = {}
    for requirement in matrix.dtype_requirements:
        grouped.setdefault(requirement.rule_id, []).append(requirement)
    for rule_id, requirements in grouped.items():
        statement = " ".join(wording.statement(r, matrix) for r in requirements)
        sources = _unique(r.evidence for r in requirements if r.evidence is not None)
        rows.append((code(rule_id), statement, "; ".join(linked(e) for e in sources) or "—"))
    for rule in matrix.cross_field_rules:
        rows.append((code(rule.id), wording.statement(rule, matrix), linked(rule.evidence)))
    for backend in matrix.phase_only_backends():
        rows.append(
            (
                code(phase_rule_id(backend)),
                wording.statement(backend, matrix),
                linked(backend.evidence) if backend.evidence is not None else "—",
            )
        )
    return Grid.of(("Rule", "Statement", "Source"), rows)


# -- what the release's start-up code does ----------------------------------------------------


def defaults(rules: ReleaseRules) -> Grid:
    return Grid.of(("#", "Architecture", "When", "Backend"), startup_text.default_rows(rules))


def enforcement(matrix: Matrix, rules: ReleaseRules) -> Grid:
    return Grid.of(
        ("Column or rule", f"What SGLang {rules.release} does at start-up"),
        startup_text.enforcement_rows(matrix, rules),
    )


# -- sources ----------------------------------------------------------------------------------


def cell_sources(matrix: Matrix) -> Grid:
    """Every cell with a source of its own: where it was read and what that shows."""
    rows: list[tuple[str, ...]] = []
    for table in matrix.tables:
        headers = dict(table.headers)
        for row in table.rows:
            for column_id in table.columns:
                cell = row.cells[column_id]
                if cell.evidence is None:
                    continue
                rows.append(
                    (
                        table.arch.label,
                        row_label(row),
                        headers[column_id],
                        cell.symbol,
                        linked(cell.evidence),
                        cell.evidence.note or "—",
                    )
                )
    return Grid.of(("Table", "Backend", "Column", "Cell", "Source", "What it shows"), rows)


def _claims(matrix: Matrix) -> dict[Evidence, list[str]]:
    """The evidence of the matrix's tables, columns, backends and rules, in a stable order,
    with the claims it backs (a cell's own source is in `cell_sources`)."""
    claims: dict[Evidence, list[str]] = {evidence: [] for evidence in matrix.sources}

    def back(evidence: Evidence | None, claim: str) -> None:
        if evidence is not None:
            claims.setdefault(evidence, []).append(claim)

    for table in matrix.tables:
        back(table.evidence, f"the {table.title} table")
    for column in matrix.columns:
        back(column.evidence, f"the {headers_of(matrix, column.id)} column")
    backend_claims: dict[Evidence, list[str]] = {}
    for backend in matrix.backends:
        if backend.evidence is not None:
            backend_claims.setdefault(backend.evidence, []).append(code(backend.name))
    for evidence, names in backend_claims.items():
        back(evidence, f"hardware and model facts of {join_and(names)}")
    for requirement in matrix.dtype_requirements:
        back(requirement.evidence, f"rule {code(requirement.rule_id)} ({requirement.dtype.value})")
    for rule in matrix.cross_field_rules:
        back(rule.evidence, f"rule {code(rule.id)}")
    return claims


def sources(matrix: Matrix) -> Grid:
    headers = ("Source", "Link", "Tested on", "Models", "Note", "Backs")
    rows = (
        (
            evidence.source,
            f"<{evidence.url}>" if evidence.url else "—",
            evidence.tested_on or "—",
            ", ".join(evidence.models) or "—",
            evidence.note or "—",
            "; ".join(backs) or "general background",
        )
        for evidence, backs in _claims(matrix).items()
    )
    return Grid.of(headers, rows)


TABLE_FILTERS: dict[str, Callable[..., Any]] = {
    "cell_kinds": cell_kinds,
    "cell_sources": cell_sources,
    "cross_field_rules": cross_field_rules,
    "defaults": defaults,
    "disputes_table": disputes_table,
    "enforcement": enforcement,
    "gpus": gpus,
    "hardware": hardware,
    "legend": legend,
    "matrix_table": matrix_table,
    "sources": sources,
    "table": markdown,
}
