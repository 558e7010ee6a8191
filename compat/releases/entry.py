"""The shape of one release's entry: what changed in its start-up code and on its page.

A release is data: its entry lists only what changed since the release before, each change
with where it was read. `Change` is a change of the start-up rules (`compat.engine`);
`DocChange` one of the documented matrix (`compat.claim`). The two are kept apart: a
documented change never moves a start-up rule, nor the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compat.claim.backends import Backend
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Phase


@dataclass(frozen=True)
class Change:
    """One change of the start-up rules in one release, with where it was read."""

    summary: str
    evidence: Evidence
    updates: Mapping[str, Any]
    """ReleaseRules field -> new value, or a function of the previous value."""


@dataclass(frozen=True)
class DocChange:
    """One change of what the page documents, with its source."""

    summary: str
    evidence: Evidence
    backends: tuple[Backend, ...] = ()
    """Backends the page speaks of from this release on."""
    phases: Mapping[str, frozenset[Phase]] = field(default_factory=dict)
    """Backends whose phases change."""


@dataclass(frozen=True)
class Release:
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
