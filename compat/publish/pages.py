"""Render the capability matrix into the Markdown pages that MkDocs publishes.

The templates receive domain objects (the matrix, the release's start-up rules) and hold
the page's prose; rules are worded by `compat.claim.words`, tables built by
`compat.publish.tables`, text formatted by the filters of `compat.publish.filters`. This module
assembles the context and is the only one that imports Jinja.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2 import TemplateError

from compat.claim.backends import Backend
from compat.claim.cells import CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix, Row
from compat.engine.rules import ReleaseRules
from compat.guard.audit import audit
from compat.guard.audit_facts import Dispute
from compat.inputs.config import AttentionConfig
from compat.inputs.gpus import GPUS
from compat.publish import changes_text as release_text
from compat.publish.changes_text import ReleaseNews
from compat.publish.filters import FILTERS
from compat.publish.outputs import package_templates
from compat.publish.tables import DISPUTE_MARK, TABLE_FILTERS
from compat.publish.templating import ConfinedLoader, Sandbox, render
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, Phase, SpeculativeAttentionMode

if TYPE_CHECKING:
    from compat.publish.examples import CheckedExample

__all__ = [
    "PAGE_PATH",
    "TEMPLATE_NAME",
    "TemplateError",
    "build_page",
    "render_page",
    "render_pages",
]

PAGE_PATH = Path("docs") / "attention_backend.md"
"""Where the rendered page lives, relative to the project root."""
# One page per release whose start-up rules changed, and the page listing the changes.
RELEASE_DIR = "releases"
CHANGES_PATH = Path("docs") / "changes.md"
FINDER_PATH = Path("docs") / "finder.md"
CHANGES_TEMPLATE = "changes.md.j2"

TEMPLATE_NAME = "attention_backend.md.j2"
GENERATED_MARKER = "Generated file: do not edit it by hand."
"""The comment every generated page carries (`{{ generated_marker }}` in the templates): a
file without it was not written by `compat docs`, which never replaces it."""


class ExampleCheckError(TemplateError):
    """A launch example of the page fails the guard: the page is not rendered."""


@dataclass(frozen=True)
class ReleaseView:
    """Which release a page describes, and the links from it to the other pages."""

    name: str
    baseline: bool
    news: ReleaseNews
    same_as: str
    home: str
    """The link from this page to the main page (empty on the main page)."""
    pages: tuple[tuple[str, str], ...]
    """(release, link) of every release page."""
    changes_link: str
    finder_link: str


class SpecLimit(enum.Enum):
    """How a row's speculative-decoding cells limit the server (the hybrid note's groups)."""

    ONLY_TOPK_1 = "only_topk_1"
    NO_SPEC = "no_spec"
    TOPK_BY_PAGE_SIZE = "topk_by_page_size"


def _spec_limit(row: Row) -> SpecLimit | None:
    topk_1 = row.cells[ColumnId.SPEC_TOPK_1].kind
    topk_gt1 = row.cells[ColumnId.SPEC_TOPK_GT1].kind
    if topk_gt1 is CellKind.UNSUPPORTED and topk_1 is CellKind.SUPPORTED:
        return SpecLimit.ONLY_TOPK_1
    if topk_gt1 is CellKind.UNSUPPORTED and topk_1 is CellKind.UNSUPPORTED:
        return SpecLimit.NO_SPEC
    if topk_gt1 is CellKind.CONDITIONAL:
        return SpecLimit.TOPK_BY_PAGE_SIZE
    return None


@dataclass(frozen=True)
class SpecGroup:
    """The rows of one table that share a speculative-decoding limit."""

    arch: Arch
    rows: tuple[Row, ...]


def _spec_groups(matrix: Matrix, limit: SpecLimit) -> tuple[SpecGroup, ...]:
    spec = {ColumnId.SPEC_TOPK_1, ColumnId.SPEC_TOPK_GT1}
    groups = (
        SpecGroup(table.arch, tuple(row for row in table.rows if _spec_limit(row) is limit))
        for table in matrix.tables
        if spec <= set(table.columns)
    )
    return tuple(group for group in groups if group.rows)


@dataclass(frozen=True)
class Notes:
    """The selections behind the notes that a template expression cannot make."""

    rowless: tuple[Backend, ...]
    """Backends that neither table describes."""
    aliases: tuple[tuple[str, str], ...]
    """(name, backend) of each other name the release accepts for a backend."""
    only_topk_1: tuple[SpecGroup, ...]
    no_spec: tuple[SpecGroup, ...]
    topk_by_page_size: tuple[SpecGroup, ...]
    cuda_graph_off: tuple[str, ...]


def _notes(matrix: Matrix) -> Notes:
    rowless = tuple(
        backend
        for backend in matrix.backends
        if all(matrix.row(table.arch, backend.name) is None for table in matrix.tables)
    )
    return Notes(
        rowless=rowless,
        aliases=tuple(matrix.aliases.items()),
        only_topk_1=_spec_groups(matrix, SpecLimit.ONLY_TOPK_1),
        no_spec=_spec_groups(matrix, SpecLimit.NO_SPEC),
        topk_by_page_size=_spec_groups(matrix, SpecLimit.TOPK_BY_PAGE_SIZE),
        cuda_graph_off=tuple(b.name for b in matrix.backends if b.disables_cuda_graph),
    )


@dataclass(frozen=True)
class PageView:
    """What the page template receives."""

    matrix: Matrix
    startup: ReleaseRules
    """What the release's start-up code does."""
    release: ReleaseView
    notes: Notes
    examples: tuple[CheckedExample, ...]
    spec_mode_default: str
    page_source: Evidence
    """The page the tables restate: the source of every cell without its own."""
    baseline: Evidence
    """The PR #14467 page every release's tables start from."""
    disputes: tuple[Dispute, ...] = ()
    """The cells the release's own code contradicts (`compat audit`), in page order."""


def _examples(matrix: Matrix, release: str) -> tuple[CheckedExample, ...]:
    from compat.publish.examples import ExampleFailsError, checked_examples

    try:
        return checked_examples(matrix, release=release)
    except ExampleFailsError as error:
        raise ExampleCheckError(f"launch examples: {error}") from None


def _release_view(rules: ReleaseRules, here: str) -> ReleaseView:
    up = "../" if here else ""
    return ReleaseView(
        name=rules.release,
        baseline=rules.release == RELEASE_NAMES[0],
        news=release_text.news(rules.release),
        same_as=release_text.same_as(rules.release),
        home=f"{up}{PAGE_PATH.name}" if here else "",
        pages=tuple(
            (name, f"{up}{RELEASE_DIR}/{name}.md" if not here else f"{name}.md")
            for name in release_text.releases_with_changes()
        ),
        changes_link=f"{up}{CHANGES_PATH.name}",
        finder_link=f"{up}{FINDER_PATH.name}",
    )


def build_page(
    matrix: Matrix | None = None, release: str | None = None, here: str = ""
) -> PageView:
    """What the page of `release` (the newest by default) shows, from `matrix` (that
    release's by default).

    `here` is the page's folder below docs/ (for links between pages).
    """
    rules = RELEASES[release or NEWEST]
    if matrix is None:
        matrix = release_matrix(rules.release)
    default = AttentionConfig.__dataclass_fields__["speculative_attention_mode"].default
    return PageView(
        matrix=matrix,
        startup=rules,
        release=_release_view(rules, here),
        notes=_notes(matrix),
        examples=_examples(matrix, rules.release),
        spec_mode_default=str(default),
        page_source=matrix.tables[0].evidence,
        baseline=release_matrix(RELEASE_NAMES[0]).tables[0].evidence,
        disputes=_disputes(matrix, rules.release),
    )


def _disputes(matrix: Matrix, release: str) -> tuple[Dispute, ...]:
    """The audit's rows whose cell `matrix` still shows as the audit read it (a matrix
    other than the release's own, as a test's, keeps only those)."""
    kept = []
    for dispute in audit(release):
        row = matrix.row(dispute.arch, dispute.backend)
        if row is not None and row.cells[dispute.column].symbol == dispute.documented:
            kept.append(dispute)
    return tuple(kept)


# What the templates may name besides the page: the vocabulary they compare against.
_GLOBALS: dict[str, Any] = {
    "generated_marker": GENERATED_MARKER,
    "Arch": Arch,
    "CellKind": CellKind,
    "ColumnId": ColumnId,
    "DISPUTE_MARK": DISPUTE_MARK,
    "GPUS": GPUS,
    "Phase": Phase,
    "SpeculativeAttentionMode": SpeculativeAttentionMode,
}


@functools.lru_cache(maxsize=8)
def _environment(template_dir: Path) -> jinja2.Environment:
    """One environment per template folder, so each template compiles once per process."""
    # Sandboxed: a template named by --template-dir cannot reach os.system and friends;
    # immutable: it receives the live matrix, whose caches the guard reads, and must not
    # change them.
    environment = Sandbox(
        loader=ConfinedLoader(template_dir),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(FILTERS)
    environment.filters.update(TABLE_FILTERS)
    environment.globals.update(_GLOBALS)
    return environment


def render_page(
    matrix: Matrix | None = None,
    template_dir: Path | None = None,
    release: str | None = None,
    here: str = "",
) -> str:
    """The Markdown of the page of `release` (the newest by default: `docs/attention_backend.md`)
    from `matrix` (that release's by default), ending in exactly one newline."""
    directory = template_dir if template_dir is not None else package_templates()
    template = _environment(directory).get_template(TEMPLATE_NAME)
    text = render(template, page=build_page(matrix, release, here))
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
    text = render(
        template, news=news, releases=RELEASE_DIR, newest=NEWEST, baseline=RELEASE_NAMES[0]
    )
    pages.append((CHANGES_PATH, text.rstrip("\n") + "\n"))
    return tuple(pages)
