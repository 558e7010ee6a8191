"""A move of the fix search: one flag change, and how to write it on a command line."""

from __future__ import annotations

from typing import Any

import msgspec

Flags = tuple[tuple[str, str], ...]


class Move(msgspec.Struct, frozen=True):
    """One flag change: the config fields it sets, and how to write it on a command line."""

    kind: str
    rank: int
    """Position in its kind's preference order (0 is best)."""
    fields: tuple[tuple[str, Any], ...]
    sets: Flags
    removes: tuple[str, ...]
    reason: str
    priority: int = 0
    """Ranks the kind: `_KIND_ORDER`, or -1 for the phase that alone has errors."""
    backend: str | None = None
    """The backend a backend or phase move runs."""

    @property
    def key(self) -> tuple[int, int]:
        return (self.priority, self.rank)
