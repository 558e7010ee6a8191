"""A table cell and the kinds of support it states; what a column does with an unsupported one."""

from __future__ import annotations

import msgspec

from compat.vocab.evidence import Evidence
from compat.vocab.spelling import join_or
from compat.vocab.terms import Severity, Term

_ACTION_SEVERITY = {
    "error": Severity.ERROR,
    "warn": Severity.WARNING,
    "snap": Severity.WARNING,
    "info": Severity.INFO,
    "documentation-only": Severity.INFO,
}


class Action(Term):
    """What the guard does when a configuration meets an unsupported cell of a column."""

    ERROR = "error"
    WARN = "warn"
    SNAP = "snap"
    INFO = "info"
    DOCUMENTATION_ONLY = "documentation-only"

    def __init__(self, value: str) -> None:
        self.severity = _ACTION_SEVERITY[value]
        """The severity of the finding for an unsupported cell."""


class PlatformSupport(Term):
    """How far a backend runs on a platform it lists (a platform it does not list: not at all)."""

    SUPPORTED = "supported"
    UNTESTED = "untested"


class CellKind(Term):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    PAGE_SIZES = "page_sizes"
    NOT_APPLICABLE = "n/a"
    CONDITIONAL = "conditional"
    UNTESTED = "untested"
    NOT_STATED = "not_stated"
    """Neither ✅ nor ❌: the page has no such cell and the release's code does not settle it."""


class Cell(msgspec.Struct, frozen=True):
    """One claim of a table.

    PAGE_SIZES lists the native page sizes; `fixed` means the kernel only runs with
    them, so the engine snaps any other size to the largest. CONDITIONAL means
    supported only when the page size is one of `page_sizes`. NOT_STATED is a cell of a row
    read from code where the code does not settle the column; its evidence says why.
    """

    kind: CellKind
    page_sizes: tuple[int, ...] = ()
    fixed: bool = False
    evidence: Evidence | None = None

    @property
    def symbol(self) -> str:
        kind = self.kind
        if kind is CellKind.SUPPORTED:
            return "✅"
        if kind is CellKind.UNSUPPORTED:
            return "❌"
        if kind is CellKind.NOT_APPLICABLE:
            return "n/a"
        if kind is CellKind.UNTESTED:
            return "❔ untested"
        if kind is CellKind.NOT_STATED:
            return "❓ not stated"
        sizes = join_or([str(size) for size in self.page_sizes])
        if kind is CellKind.PAGE_SIZES:
            return sizes
        return f"⚠️ (page_size={sizes} only)"
