"""Where a fact comes from: every claim of the page and every start-up rule carries one."""

from __future__ import annotations

import msgspec


class Evidence(msgspec.Struct, frozen=True):
    """Where a claim comes from."""

    source: str
    url: str | None = None
    tested_on: str | None = None
    models: tuple[str, ...] = ()
    note: str | None = None
