"""Facts read from a release's wheel, kept beside the wheels between runs.

A tool that reads a wheel statically (every model module parsed, a pinned package's files
read), or a test that runs the wheel's own code over the harness, computes a pure function
of what it reads and of its own code. The tests compute the same facts again for each
release they check, and the tool for every release: seconds per release, each time.
`cached_facts` keeps the result under a key of the wheel, the other package releases it
reads and the source of the code that computes it, so a change of any of them computes it
afresh; `COMPAT_CONFORMANCE_FRESH=1` always does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from conformance.wheel import FRESH, cache_dir, harness_digest


def cached_facts(
    kind: str,
    release: str,
    reads: Iterable[str | Path],
    compute: Callable[[], Any],
) -> Any:
    """`compute()` (a JSON value) for `release`, or what an earlier run computed from the
    same inputs: the release's wheel and the conformance harness (`harness_digest`), and
    `reads`: each other package release read, by name and version (a released wheel
    never changes), and each source file of the code that computes it."""
    digest = harness_digest(release)
    for read in reads:
        if isinstance(read, Path):
            digest.update(read.name.encode() + b"\0" + read.read_bytes())
        else:
            digest.update(read.encode() + b"\0")
    path = cache_dir() / kind / f"{release}-{digest.hexdigest()[:16]}.json"
    if path.is_file() and not os.environ.get(FRESH):
        return json.loads(path.read_text(encoding="utf-8"))
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    staging.write_text(json.dumps(value), encoding="utf-8")
    staging.replace(path)  # a concurrent reader never sees half a file
    return value
