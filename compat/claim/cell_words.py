"""The words for cells and columns: what each kind of cell says, what a column means.

One place per sentence: the page's legend, the export and the guard's warning for a
"not stated" cell say these the same way.
"""

from __future__ import annotations

from compat.claim.cells import CellKind
from compat.claim.columns import Column
from compat.claim.words import code_list
from compat.vocab.terms import Arch


def meaning(column: Column) -> str:
    """What a column means (the legend, the notes, the export): its description, and for a
    KV column the spellings it speaks for in this release."""
    if not column.dtypes:
        return column.description
    return f"{column.description} In this release: {code_list(d.value for d in column.dtypes)}."


# -- what each kind of cell says ------------------------------------------------------------

NOT_STATED_WHY = "the page has no such cell and SGLang's code does not settle it"

_KIND_MEANINGS = {
    CellKind.SUPPORTED: "supported",
    CellKind.UNSUPPORTED: "not supported; the column's action applies",
    CellKind.NOT_APPLICABLE: "does not apply to this backend",
    CellKind.PAGE_SIZES: "the native page sizes (a fixed size is snapped to)",
    CellKind.CONDITIONAL: "supported only with the page sizes named",
    CellKind.UNTESTED: "untested; the guard warns",
    CellKind.NOT_STATED: f"not stated: {NOT_STATED_WHY}; the guard warns",
}


def kind_meaning(kind: CellKind) -> str:
    """The legend's words for a kind of cell."""
    return _KIND_MEANINGS[kind]


def not_stated_message(header: str, setting: str, backend: str, arch: Arch) -> str:
    """The guard's warning for a configuration that meets a "not stated" cell."""
    with_setting = f" ({setting})" if setting else ""
    return (
        f"{header}{with_setting} on {backend} for {arch.label} models is not stated: "
        f"{NOT_STATED_WHY}"
    )
