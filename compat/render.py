"""Render the capability matrix into the Markdown page that MkDocs publishes.

Every list the page prints is computed here from the cells and rules of a `Matrix`; the
template only lays out the plain view models built below. This is the only module that
imports Jinja.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import jinja2
from jinja2 import TemplateError
from jinja2.sandbox import SandboxedEnvironment

from compat import release_text, startup_text, wording
from compat.config import AttentionConfig
from compat.matrix import MATRIX
from compat.outputs import package_templates
from compat.release_schema import ReleaseRules
from compat.release_text import ReleaseNews
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.schema import (
    ArchStatus,
    Backend,
    Column,
    ColumnId,
    DtypeRequirement,
    Matrix,
    Row,
    Table,
    kv_column,
    phase_rule_id,
)
from compat.vocab import (
    Arch,
    CapabilityRange,
    CellKind,
    Evidence,
    KvDtype,
    ModelFeature,
    Phase,
    Platform,
    SpeculativeAttentionMode,
    join_or,
)

__all__ = [
    "PAGE_PATH",
    "TEMPLATE_NAME",
    "TemplateError",
    "build_page",
    "render_page",
    "render_pages",
]

PAGE_PATH = Path("docs") / "attention_backend.md"
# One page per release whose start-up rules changed, and the page listing the changes.
RELEASE_DIR = "releases"
CHANGES_PATH = Path("docs") / "changes.md"
CHANGES_TEMPLATE = "changes.md.j2"
"""Where the rendered page lives, relative to the project root."""

TEMPLATE_NAME = "attention_backend.md.j2"


# -- view models ------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    text: str
    url: str | None


@dataclass(frozen=True)
class TableView:
    title: str
    anchor: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    source: Link


@dataclass(frozen=True)
class Item:
    """One bullet of a note: an optional lead-in (rendered bold) and its text."""

    lead: str
    text: str


@dataclass(frozen=True)
class PairingNote:
    title: str
    rule_id: str
    statement: str
    capable: tuple[Item, ...]
    """Per architecture, the backends that read this KV dtype."""
    requirement: str
    cautions: tuple[str, ...]


@dataclass(frozen=True)
class SpecNote:
    topk_1_header: str
    topk_1_description: str
    topk_gt1_header: str
    topk_gt1_description: str


@dataclass(frozen=True)
class PagingNote:
    header: str
    description: str
    why: str
    fixed: tuple[Item, ...]


@dataclass(frozen=True)
class HybridNote:
    backend_flag: str
    prefill_flag: str
    decode_flag: str
    mode_flag: str
    modes: str
    """The accepted values, the default marked."""


@dataclass(frozen=True)
class HybridSpecNote:
    phases: str
    only_topk_1: tuple[Item, ...]
    no_spec: tuple[Item, ...]
    conditional: tuple[Item, ...]
    paged: tuple[str, ...]


@dataclass(frozen=True)
class NotesView:
    multimodal_header: str
    multimodal_description: str
    phase_limited: tuple[Item, ...]
    rowless: tuple[Item, ...]
    pairings: tuple[PairingNote, ...]
    spec: SpecNote
    paging: PagingNote
    mla_page_sizes: tuple[Item, ...]
    hybrid: HybridNote
    hybrid_spec: HybridSpecNote
    dtype_fallbacks: tuple[str, ...]
    cuda_graph_off: str


@dataclass(frozen=True)
class GridView:
    """A plain table: headers and rows of cell text."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class PageView:
    baseline: Link
    tables: tuple[TableView, ...]
    notes: NotesView
    hardware: GridView
    legend: GridView
    rules: GridView
    defaults: GridView
    sources: GridView
    startup: StartupView
    release: ReleaseView
    examples: tuple[ExampleView, ...] = ()
    gpus: GridView | None = None


@dataclass(frozen=True)
class ReleaseView:
    """Which release the page describes, its accepted values, its news and the other pages."""

    name: str
    baseline: bool
    backends: str
    kv_dtypes: str
    news: ReleaseNews
    same_as: str
    home: str
    """The link from this page to the main page (empty on the main page)."""
    pages: tuple[tuple[str, str], ...]
    """(release, link) of every release page."""
    changes_link: str


@dataclass(frozen=True)
class StartupView:
    """What the newest modelled release's start-up code does, for the page."""

    release: str
    overrides: tuple[str, ...]
    fa3_architectures: str
    enforcement: GridView
    divergences: tuple[str, ...]
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class ExampleView:
    backend: str
    heading: str
    command: str
    runs_as: str


def _gpus() -> GridView:
    from compat.gpus import GPUS

    rows = [
        (
            gpu.name,
            ", ".join(gpu.aliases) or "—",
            gpu.platform.label,
            "—" if gpu.capability is None else f"{gpu.capability} ({gpu.capability.dotted})",
            _code(f"--gpu {gpu.name}" if " " not in gpu.name else f"--gpu '{gpu.name}'"),
        )
        for gpu in GPUS
    ]
    return _grid(("Name", "Also", "Platform", "Compute capability", "compat check"), rows)


class ExampleCheckError(TemplateError):
    """A launch example of the page fails the guard: the page is not rendered."""


def _examples(matrix: Matrix, release: str) -> tuple[ExampleView, ...]:
    from compat.examples import ExampleFailsError, checked_examples

    try:
        checked = checked_examples(matrix, release=release)
    except ExampleFailsError as error:
        raise ExampleCheckError(f"launch examples: {error}") from None
    return tuple(
        ExampleView(
            item.example.backend,
            f"{_code(item.example.backend)} on {item.example.gpu}, {item.example.model} "
            f"({item.example.arch.upper()})",
            item.example.command,
            item.runs_as,
        )
        for item in checked
    )


# -- small helpers ------------------------------------------------------------------------


def _code(text: str) -> str:
    return f"`{text}`"


def _codes(names: Iterable[str]) -> str:
    """Alternatives: `a`, `a or b`, `a, b or c`."""
    return join_or([_code(name) for name in names])


def _code_list(names: Iterable[str]) -> str:
    """A plain enumeration: `a`, `b`, `c`."""
    return ", ".join(_code(name) for name in names)


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _cell_text(text: str) -> str:
    """Make text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _row_label(row: Row) -> str:
    return f"{row.display_name} [`{row.backend}`]"


def _phases(phases: frozenset[Phase]) -> str:
    return _and([phase.value for phase in Phase if phase in phases])


def _version(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _anchor(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _link(evidence: Evidence) -> Link:
    return Link(evidence.source, evidence.url)


def _linked(evidence: Evidence) -> str:
    if evidence.url is None:
        return evidence.source
    return f"[{evidence.source}]({evidence.url})"


def _headers_of(matrix: Matrix, column_id: ColumnId) -> str:
    """`FP8 KV Cache (MHA, MLA)` or `Page Size > 1 (native) (MHA); Native Page Sizes (MLA)`."""
    by_header: dict[str, list[str]] = {}
    for table in matrix.tables:
        header = dict(table.headers).get(column_id)
        if header is not None:
            by_header.setdefault(header, []).append(table.arch.label)
    return "; ".join(f"{header} ({', '.join(archs)})" for header, archs in by_header.items())


# -- the two tables ---------------------------------------------------------------------


def _table_view(table: Table) -> TableView:
    headers = ("Backend", *(header for _, header in table.headers))
    rows = tuple(
        (_row_label(row), *(row.cells[column_id].symbol for column_id in table.columns))
        for row in table.rows
    )
    return TableView(
        title=table.title,
        anchor=_anchor(table.title),
        headers=tuple(_cell_text(h) for h in headers),
        rows=tuple(tuple(_cell_text(c) for c in r) for r in rows),
        source=_link(table.evidence),
    )


# -- notes ------------------------------------------------------------------------------


def _phase_limited(matrix: Matrix) -> tuple[Item, ...]:
    items = []
    for backend in matrix.phase_only_backends():
        missing = [phase for phase in Phase if phase not in backend.phases]
        flags = _and([_code(phase.flag) for phase in Phase if phase in backend.phases])
        text = (
            f"serves only the {_phases(backend.phases)} phase; select it with {flags} and "
            f"choose another backend for the {_phases(frozenset(missing))} phase "
            f"(rule {_code(phase_rule_id(backend))})."
        )
        if backend.note:
            text += f" {backend.note}"
        items.append(Item(_code(backend.name), text))
    return tuple(items)


def _rowless(matrix: Matrix) -> tuple[Item, ...]:
    items = []
    for backend in matrix.backends:
        if any(matrix.row(table.arch, backend.name) is not None for table in matrix.tables):
            continue
        parts = [backend.note] if backend.note else []
        if backend.requires_features:
            features = _and(_feature_labels(backend.requires_features))
            parts.append(f"It needs a model with {features}.")
        refused = [arch.label for arch in Arch if arch in backend.refuses_archs]
        if refused:
            parts.append(f"Known not to work with {_and(refused)} models.")
        items.append(Item(_code(backend.name), " ".join(parts)))
    return tuple(items)


def _requirement_text(requirement: DtypeRequirement) -> str:
    parts = []
    if requirement.platforms is not None:
        platforms = _and([p.label for p in Platform if p in requirement.platforms])
        parts.append(f"runs only on {platforms}")
    if requirement.min_cuda is not None:
        parts.append(f"needs CUDA {_version(requirement.min_cuda)} or newer")
    if requirement.min_torch is not None:
        parts.append(f"needs PyTorch {_version(requirement.min_torch)} or newer")
    if requirement.torch_dtype is not None:
        parts.append(f"is stored as `torch.{requirement.torch_dtype}`")
    return _and(parts)


def _pairing_notes(matrix: Matrix) -> tuple[PairingNote, ...]:
    notes = []
    for rule in matrix.pairing_rules:
        column_id = kv_column(rule.kv_dtype)
        capable = tuple(
            Item(table.arch.label, _code_list(matrix.supporting(table.arch, column_id)) or "none")
            for table in matrix.tables
            if column_id in table.columns
        )
        requirement = matrix.dtype_requirement(rule.kv_dtype)
        requirement_text = (
            f"{_code(rule.kv_dtype.value)} {_requirement_text(requirement)} "
            f"(rule {_code(requirement.rule_id)})."
            if requirement is not None
            else ""
        )
        cautions = tuple(
            f"SGLang starts any other pair of different prefill and decode backends with "
            f"`--kv-cache-dtype {caution.kv_dtype.value}` with a warning "
            f"(rule {_code(caution.id)}): hybrid pairs are less exercised with this cache. "
            "The page still marks each phase by its own FP4 cell."
            for caution in matrix.hybrid_caution_rules
            if caution.kv_dtype is rule.kv_dtype
        )
        notes.append(
            PairingNote(
                title=f"{rule.kv_dtype.value} KV cache with {rule.prefill_backend}",
                rule_id=rule.id,
                statement=wording.statement(rule, matrix),
                capable=capable,
                requirement=requirement_text,
                cautions=cautions,
            )
        )
    return tuple(notes)


def _spec_note(matrix: Matrix) -> SpecNote:
    topk_1 = matrix.column(ColumnId.SPEC_TOPK_1)
    topk_gt1 = matrix.column(ColumnId.SPEC_TOPK_GT1)
    return SpecNote(
        topk_1_header=_headers_of(matrix, ColumnId.SPEC_TOPK_1),
        topk_1_description=topk_1.description,
        topk_gt1_header=_headers_of(matrix, ColumnId.SPEC_TOPK_GT1),
        topk_gt1_description=topk_gt1.description,
    )


def _paging_note(matrix: Matrix) -> PagingNote:
    column = matrix.column(ColumnId.NATIVE_PAGE_SIZES)
    fixed = tuple(
        Item(
            f"{_row_label(row)} ({arch.label})",
            f"{join_or([str(size) for size in sizes])}; any other page size becomes {max(sizes)}.",
        )
        for row, arch, sizes in matrix.fixed_page_sizes()
    )
    return PagingNote(
        header=_headers_of(matrix, ColumnId.NATIVE_PAGE_SIZES),
        description=column.description,
        why=column.why,
        fixed=fixed,
    )


def _mla_page_sizes(matrix: Matrix) -> tuple[Item, ...]:
    table = matrix.table(Arch.MLA)
    headers = dict(table.headers)
    items = []
    for row in table.rows:
        for column_id in table.columns:
            cell = row.cells[column_id]
            sizes = join_or([str(size) for size in cell.page_sizes])
            if cell.kind is CellKind.PAGE_SIZES and cell.fixed:
                largest = max(cell.page_sizes)
                text = f"runs only with page size {sizes}; any other size becomes {largest}."
            elif cell.kind is CellKind.PAGE_SIZES:
                text = f"pages natively at size {sizes}."
            elif cell.kind is CellKind.CONDITIONAL:
                text = f"{headers[column_id]} works only with page size {sizes}."
            else:
                continue
            items.append(Item(_row_label(row), text))
    return tuple(items)


def _hybrid_note() -> HybridNote:
    default = AttentionConfig.__dataclass_fields__["speculative_attention_mode"].default
    return HybridNote(
        backend_flag="--attention-backend",
        prefill_flag=Phase.PREFILL.flag,
        decode_flag=Phase.DECODE.flag,
        mode_flag="--speculative-attention-mode",
        modes=join_or(
            [
                _code(mode.value) + (" (the default)" if mode.value == default else "")
                for mode in SpeculativeAttentionMode
            ]
        ),
    )


def _hybrid_spec_note(matrix: Matrix) -> HybridSpecNote:
    only_topk_1: list[Item] = []
    no_spec: list[Item] = []
    conditional: list[Item] = []
    for table in matrix.tables:
        if not {ColumnId.SPEC_TOPK_1, ColumnId.SPEC_TOPK_GT1} <= set(table.columns):
            continue
        one, many, partly = [], [], []
        for row in table.rows:
            topk_1 = row.cells[ColumnId.SPEC_TOPK_1].kind
            topk_gt1 = row.cells[ColumnId.SPEC_TOPK_GT1]
            if topk_gt1.kind is CellKind.UNSUPPORTED and topk_1 is CellKind.SUPPORTED:
                one.append(row.backend)
            elif topk_gt1.kind is CellKind.UNSUPPORTED and topk_1 is CellKind.UNSUPPORTED:
                many.append(row.backend)
            elif topk_gt1.kind is CellKind.CONDITIONAL:
                sizes = join_or([str(size) for size in topk_gt1.page_sizes])
                partly.append(f"{_code(row.backend)} (page size {sizes})")
        label = table.arch.label
        if one:
            only_topk_1.append(Item(label, _code_list(one)))
        if many:
            no_spec.append(Item(label, _code_list(many)))
        if partly:
            conditional.append(Item(label, ", ".join(partly)))
    paged = tuple(
        f"For {rule.arch.label} models, topk > 1 with a page size above 1 runs only on "
        f"{_codes(sorted(rule.backends))} (rule {_code(rule.id)})."
        for rule in matrix.spec_paged_rules
    )
    phases = matrix.column(ColumnId.SPEC_TOPK_GT1).phases
    return HybridSpecNote(
        phases=_phases(phases),
        only_topk_1=tuple(only_topk_1),
        no_spec=tuple(no_spec),
        conditional=tuple(conditional),
        paged=paged,
    )


def _dtype_fallbacks(matrix: Matrix) -> tuple[str, ...]:
    return tuple(
        f"{_code(rule.backend)} with `--kv-cache-dtype {rule.kv_dtype.value}`: SGLang runs "
        f"{_code(rule.replacement)} instead and warns (rule {_code(rule.id)}). {rule.why}"
        for rule in matrix.dtype_fallback_rules
    )


def _notes(matrix: Matrix) -> NotesView:
    return NotesView(
        multimodal_header=_headers_of(matrix, ColumnId.MULTIMODAL),
        multimodal_description=matrix.column(ColumnId.MULTIMODAL).description,
        phase_limited=_phase_limited(matrix),
        rowless=_rowless(matrix),
        pairings=_pairing_notes(matrix),
        spec=_spec_note(matrix),
        paging=_paging_note(matrix),
        mla_page_sizes=_mla_page_sizes(matrix),
        hybrid=_hybrid_note(),
        hybrid_spec=_hybrid_spec_note(matrix),
        dtype_fallbacks=_dtype_fallbacks(matrix),
        cuda_graph_off=_and([_code(b.name) for b in matrix.backends if b.disables_cuda_graph]),
    )


# -- tables beyond the baseline ------------------------------------------------------------


def _capability(backend: Backend) -> str:
    ranges: dict[Arch, CapabilityRange] = dict(backend.capability)
    if not ranges:
        return "any"
    return "; ".join(f"{arch.label}: {ranges[arch].label}" for arch in Arch if arch in ranges)


def _platforms(backend: Backend) -> str:
    return ", ".join(
        platform.label + (" (untested)" if backend.platforms[platform] is CellKind.UNTESTED else "")
        for platform in Platform
        if platform in backend.platforms
    )


def _features(backend: Backend) -> str:
    parts = []
    if backend.requires_features:
        parts.append("needs " + _and(_feature_labels(backend.requires_features)))
    if backend.refuses_features:
        parts.append("refuses " + _and(_feature_labels(backend.refuses_features)))
    return "; ".join(parts) or "—"


def _feature_labels(features: frozenset[ModelFeature]) -> list[str]:
    return [feature.label for feature in ModelFeature if feature in features]


def _kv_dtypes(backend: Backend) -> str:
    if backend.kv_dtypes is None:
        return "any"
    return "only " + ", ".join(_code(d.value) for d in KvDtype if d in backend.kv_dtypes)


def _hardware(matrix: Matrix) -> GridView:
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
    rows = []
    for backend in matrix.backends:
        statuses = []
        for arch in Arch:
            status = matrix.arch_status(backend.name, arch)
            statuses.append("✅ " + status.value if status is ArchStatus.ROW else status.value)
        rows.append(
            (
                _code(backend.name),
                _platforms(backend),
                _capability(backend),
                _phases(backend.phases),
                *statuses,
                _kv_dtypes(backend),
                _features(backend),
                backend.note or "—",
            )
        )
    return _grid(headers, rows)


def _legend(matrix: Matrix) -> GridView:
    headers = (
        "Column",
        "Meaning",
        "Guard action on an unsupported cell",
        "Why",
        "Phases checked",
        "Finding id",
    )
    rows = [
        (
            _headers_of(matrix, column.id),
            column.description,
            column.action.value,
            column.why,
            _phases(column.phases),
            _code(column.id.rule_id),
        )
        for column in _used_columns(matrix)
    ]
    return _grid(headers, rows)


def _used_columns(matrix: Matrix) -> tuple[Column, ...]:
    used = {column_id for table in matrix.tables for column_id in table.columns}
    return tuple(column for column in matrix.columns if column.id in used)


def _rules(matrix: Matrix) -> GridView:
    headers = ("Rule", "Statement", "Source")
    rows: list[tuple[str, str, str]] = []
    grouped: dict[str, list[DtypeRequirement]] = {}
    for requirement in matrix.dtype_requirements:
        grouped.setdefault(requirement.rule_id, []).append(requirement)
    for rule_id, requirements in grouped.items():
        statement = " ".join(
            f"`--kv-cache-dtype {r.dtype.value}` {_requirement_text(r)}." for r in requirements
        )
        sources = _unique(r.evidence for r in requirements if r.evidence is not None)
        rows.append((_code(rule_id), statement, "; ".join(_linked(e) for e in sources) or "—"))
    for pairing in matrix.pairing_rules:
        statement = wording.statement(pairing, matrix)
        rows.append((_code(pairing.id), statement, _linked(pairing.evidence)))
    for caution in matrix.hybrid_caution_rules:
        rows.append(
            (
                _code(caution.id),
                f"With `--kv-cache-dtype {caution.kv_dtype.value}`, SGLang starts different "
                "prefill and decode backends that no pairing rule covers with a warning; each "
                "phase is still judged by its own FP4 cell.",
                _linked(caution.evidence),
            )
        )
    for spec in matrix.spec_paged_rules:
        rows.append(
            (
                _code(spec.id),
                f"For {spec.arch.label} models, speculative decoding with topk > 1 and a page "
                f"size above 1 runs only on {_codes(sorted(spec.backends))}.",
                _linked(spec.evidence),
            )
        )
    for fallback in matrix.dtype_fallback_rules:
        rows.append(
            (
                _code(fallback.id),
                f"With `--kv-cache-dtype {fallback.kv_dtype.value}`, SGLang replaces "
                f"{_code(fallback.backend)} by {_code(fallback.replacement)}. {fallback.why}",
                _linked(fallback.evidence),
            )
        )
    for backend in matrix.phase_only_backends():
        flags = _and([_code(phase.flag) for phase in Phase if phase in backend.phases])
        rows.append(
            (
                _code(phase_rule_id(backend)),
                f"{_code(backend.name)} serves only the {_phases(backend.phases)} phase; "
                f"set it with {flags}.",
                _linked(backend.evidence) if backend.evidence is not None else "—",
            )
        )
    return _grid(headers, rows)


def _defaults(rules: ReleaseRules) -> GridView:
    return _grid(("#", "Architecture", "When", "Backend"), startup_text.default_rows(rules))


def _startup(matrix: Matrix, rules: ReleaseRules) -> StartupView:
    return StartupView(
        release=rules.release,
        overrides=tuple(startup_text.override_text(o) for o in rules.model_overrides),
        fa3_architectures=startup_text.fa3_architectures(rules),
        enforcement=_grid(
            ("Column or rule", f"What SGLang {rules.release} does at start-up"),
            startup_text.enforcement_rows(matrix, rules),
        ),
        divergences=tuple(startup_text.divergences(matrix, rules)),
        evidence=tuple(sorted({f"{e.source}" for e in rules.evidence.values()})),
    )


def _unique(evidence: Iterable[Evidence]) -> list[Evidence]:
    seen: list[Evidence] = []
    for item in evidence:
        if item not in seen:
            seen.append(item)
    return seen


def _claims(matrix: Matrix) -> dict[Evidence, list[str]]:
    """Every piece of evidence in the matrix, in a stable order, with the claims it backs."""
    claims: dict[Evidence, list[str]] = {evidence: [] for evidence in matrix.sources}

    def back(evidence: Evidence | None, claim: str) -> None:
        if evidence is not None:
            claims.setdefault(evidence, []).append(claim)

    for table in matrix.tables:
        back(table.evidence, f"the {table.title} table")
    for column in matrix.columns:
        back(column.evidence, f"the {_headers_of(matrix, column.id)} column")
    for table in matrix.tables:
        headers = dict(table.headers)
        for row in table.rows:
            for column_id in table.columns:
                cell = row.cells[column_id]
                back(cell.evidence, f"{table.arch.label} {_row_label(row)}: {headers[column_id]}")
    backend_claims: dict[Evidence, list[str]] = {}
    for backend in matrix.backends:
        if backend.evidence is not None:
            backend_claims.setdefault(backend.evidence, []).append(_code(backend.name))
    for evidence, names in backend_claims.items():
        back(evidence, f"hardware and model facts of {_and(names)}")
    for requirement in matrix.dtype_requirements:
        back(requirement.evidence, f"rule {_code(requirement.rule_id)} ({requirement.dtype.value})")
    for rule_id, evidence in (
        *((r.id, r.evidence) for r in matrix.pairing_rules),
        *((r.id, r.evidence) for r in matrix.hybrid_caution_rules),
        *((r.id, r.evidence) for r in matrix.spec_paged_rules),
        *((r.id, r.evidence) for r in matrix.dtype_fallback_rules),
    ):
        back(evidence, f"rule {_code(rule_id)}")
    return claims


def _sources(matrix: Matrix) -> GridView:
    headers = ("Source", "Link", "Tested on", "Models", "Note", "Backs")
    rows = [
        (
            evidence.source,
            f"<{evidence.url}>" if evidence.url else "—",
            evidence.tested_on or "—",
            ", ".join(evidence.models) or "—",
            evidence.note or "—",
            "; ".join(backs) or "general background",
        )
        for evidence, backs in _claims(matrix).items()
    ]
    return _grid(headers, rows)


def _grid(headers: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> GridView:
    return GridView(
        headers=tuple(_cell_text(header) for header in headers),
        rows=tuple(tuple(_cell_text(cell) for cell in row) for row in rows),
    )


# -- the page -----------------------------------------------------------------------------


def build_page(matrix: Matrix = MATRIX, release: str | None = None, here: str = "") -> PageView:
    """The view model of the page of `release` (the newest by default), from `matrix`.

    `here` is the page's folder below docs/ (for links between pages).
    """
    rules = RELEASES[release or NEWEST]
    return PageView(
        baseline=_link(matrix.tables[0].evidence),
        tables=tuple(_table_view(table) for table in matrix.tables),
        notes=_notes(matrix),
        hardware=_hardware(matrix),
        legend=_legend(matrix),
        rules=_rules(matrix),
        defaults=_defaults(rules),
        sources=_sources(matrix),
        startup=_startup(matrix, rules),
        release=_release_view(rules, here),
        examples=_examples(matrix, rules.release),
        gpus=_gpus(),
    )


def _release_view(rules: ReleaseRules, here: str) -> ReleaseView:
    up = "../" if here else ""
    return ReleaseView(
        name=rules.release,
        baseline=rules.release == RELEASE_NAMES[0],
        backends=_code_list(rules.backend_choices),
        kv_dtypes=_code_list(rules.kv_choices),
        news=release_text.news(rules.release),
        same_as=release_text.same_as(rules.release),
        home=f"{up}{PAGE_PATH.name}" if here else "",
        pages=tuple(
            (name, f"{up}{RELEASE_DIR}/{name}.md" if not here else f"{name}.md")
            for name in release_text.releases_with_changes()
        ),
        changes_link=f"{up}{CHANGES_PATH.name}",
    )


@functools.lru_cache(maxsize=8)
def _environment(template_dir: Path) -> jinja2.Environment:
    """One environment per template folder, so each template compiles once per process."""
    # Sandboxed: a template named by --template-dir cannot reach os.system and friends.
    return SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(
    matrix: Matrix = MATRIX,
    template_dir: Path | None = None,
    release: str | None = None,
    here: str = "",
) -> str:
    """The Markdown of `docs/attention_backend.md`, ending in exactly one newline."""
    directory = template_dir if template_dir is not None else package_templates()
    template = _environment(directory).get_template(TEMPLATE_NAME)
    text = template.render(page=build_page(matrix, release, here))
    return text.rstrip("\n") + "\n"


def render_pages(template_dir: Path | None = None) -> tuple[tuple[Path, str], ...]:
    """Every generated page: the main one (newest release), one per release, what changed."""
    pages = [(PAGE_PATH, render_page(template_dir=template_dir))]
    for name in release_text.releases_with_changes():
        content = render_page(release_matrix(name), template_dir, name, RELEASE_DIR)
        pages.append((Path("docs") / RELEASE_DIR / f"{name}.md", content))
    directory = template_dir if template_dir is not None else package_templates()
    template = _environment(directory).get_template(CHANGES_TEMPLATE)
    news = tuple(release_text.news(r) for r in release_text.releases_with_changes()[1:])
    text = template.render(news=news, releases=RELEASE_DIR, newest=NEWEST)
    pages.append((CHANGES_PATH, text.rstrip("\n") + "\n"))
    return tuple(pages)
