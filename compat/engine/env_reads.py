"""One read of an environment variable in a release's start-up code (`env_data`'s rows)."""

from __future__ import annotations

import msgspec


class EnvRead(msgspec.Struct, frozen=True, array_like=True):
    """One read of an environment variable in a release's start-up code."""

    name: str
    file: str
    """The file in the wheel (`sglang/srt/server_args.py`)."""
    line: int
    function: str
    """The enclosing function, qualified by its class (`ServerArgs._handle_page_size`)."""
