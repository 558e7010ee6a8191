"""Python's cyclic garbage collector, paused while the guard runs in bulk.

The guard's records (configurations, launches, findings, reports) hold no reference cycles:
reference counting frees them as soon as they are dropped. What the cyclic collector adds
while the guard runs is its full collections, each of which walks every object the process
holds (the guard's memos, the caller's configurations; in SGLang's process, everything torch
and SGLang made). Measured: nine tenths of the SGLang plugin's cost in the real launcher; a
fifth of the consistency proof's time (16.5 and 17.0 s, then 12.8 s paused, on 2 processes);
less in the finder's parts, which hold fewer objects (5.9 s of CPU for one, 5.5 s paused).
Whatever cyclic garbage a paused block leaves is collected afterwards, as usual.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector paused inside the block, and restored as it was after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
