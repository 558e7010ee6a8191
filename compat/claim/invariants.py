"""The invariants of a capability matrix, checked when one is built (`Matrix.__post_init__`).

A matrix whose parts disagree (a typo in a backend name, a missing cell, a column the
guard could not honour) is refused at import, before any page or verdict is derived.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compat.claim.cells import Action
from compat.claim.columns import KvDtypeIn, PageSizeAbove
from compat.vocab.terms import KvFamily

if TYPE_CHECKING:
    from compat.claim.matrix import Column, Matrix


def check_consistency(matrix: Matrix) -> None:
    """Refuse a matrix whose parts disagree (a typo in a backend name, a missing cell)."""
    names = {backend.name for backend in matrix.backends}
    column_ids = {column.id for column in matrix.columns}
    problems = _column_problems(matrix.columns)
    for table in matrix.tables:
        for row in table.rows:
            if row.backend not in names:
                problems.append(f"{table.arch.value} row names unknown backend {row.backend!r}")
            if set(row.cells) != set(table.columns):
                cells = sorted(column.value for column in row.cells)
                problems.append(f"{table.arch.value} row {row.backend!r} has cells {cells}")
        for column_id in table.columns:
            if column_id not in column_ids:
                problems.append(f"{table.arch.value} table uses undeclared column {column_id}")
    referenced = [rule.prefill_backend for rule in matrix.pairing_rules]
    referenced += [name for rule in matrix.pairing_rules for name in rule.excluded_decode]
    referenced += [name for rule in matrix.spec_paged_rules for name in rule.backends]
    referenced += [r.backend for r in matrix.dtype_fallback_rules]
    referenced += [r.replacement for r in matrix.dtype_fallback_rules]
    problems += [
        f"a rule names unknown backend {name!r}" for name in referenced if name not in names
    ]
    if problems:
        raise ValueError("inconsistent capability matrix: " + "; ".join(problems))


def _column_problems(columns: tuple[Column, ...]) -> list[str]:
    """Declarations the guard could not honour: two columns for one KV family, a snap
    without a page size to snap."""
    problems = []
    families = [c.when.family for c in columns if isinstance(c.when, KvDtypeIn)]
    problems += [
        f"two columns speak for {family.value} KV dtypes"
        for family in KvFamily
        if families.count(family) > 1
    ]
    problems += [
        f"column {c.id.value} snaps page sizes but is not triggered by a page size"
        for c in columns
        if c.action is Action.SNAP and not isinstance(c.when, PageSizeAbove)
    ]
    return problems
