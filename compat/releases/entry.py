"""The shape of one release's entry: what changed in its start-up code and on its page.

A release is data: its entry lists only what changed since the release before, each change
with where it was read. `Change` is a change of the start-up rules (`compat.engine`);
`DocChange` one of the documented matrix (`compat.claim`). The two are kept apart: a
documented change never moves a start-up rule, nor the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from compat.claim.backends import Backend
from compat.claim.cells import Cell
from compat.claim.columns import Column, ColumnId
from compat.claim.matrix import Row
from compat.claim.rules import DtypeRequirement
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, KvDtype


class Change(msgspec.Struct, frozen=True):
    """One change of the start-up rules in one release, with where it was read."""

    summary: str
    evidence: Evidence
    updates: Mapping[str, Any]
    """ReleaseRules field -> new value, or a function of the previous value."""


class NewRow(msgspec.Struct, frozen=True):
    """A row of the `arch` table: a new backend's, or one replacing that backend's row."""

    arch: Arch
    row: Row


class CellChange(msgspec.Struct, frozen=True):
    """One cell of an existing row, changed; without evidence of its own, the change's."""

    arch: Arch
    backend: str
    column: ColumnId
    cell: Cell


class DocChange(msgspec.Struct, frozen=True):
    """One change of what the page documents, with its source.

    The fields say what moved; the release's matrix is the one before with them applied, in
    the order below (`compat.releases.release_matrix`).
    """

    summary: str
    evidence: Evidence
    page: Evidence | None = None
    """The release's page, when this change names it: the source of every cell without its
    own (and, where the page could not be read, why no change of it is known)."""
    removed: tuple[str, ...] = ()
    """Backends that leave the release, with their rows (and aliases of them)."""
    backends: tuple[Backend, ...] = ()
    """Backends the page speaks of from this release on (replacing one of the same name)."""
    rows: tuple[NewRow, ...] = ()
    cells: tuple[CellChange, ...] = ()
    aliases: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Names the release accepts for another backend, judged by that backend's row."""
    columns: tuple[Column, ...] = ()
    """Columns whose declaration changes (matched by id): the KV spellings they speak for."""
    requirements: tuple[DtypeRequirement, ...] = ()
    """KV dtype requirements that start (or replace the one of the same dtype)."""
    dropped_dtypes: tuple[KvDtype, ...] = ()
    """KV dtypes whose requirement leaves the page (the release no longer accepts them)."""
    tagged_in: str | None = None
    """The release whose tag already held this page change, when earlier than the release
    that records it (the baseline stays the upstream page it restates)."""


class Release(msgspec.Struct, frozen=True):
    """One SGLang release: what changed at start-up, and on the page."""

    name: str
    changes: tuple[Change, ...] = ()
    doc_changes: tuple[DocChange, ...] = ()


def plus(*names: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """An update that appends `names` (those not yet there) to a list."""
    return lambda before: (*before, *(n for n in names if n not in before))


def minus(*names: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """An update that drops `names` from a list."""
    return lambda before: tuple(n for n in before if n not in names)
