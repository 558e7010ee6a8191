"""Does the package index have an SGLang release newer than the newest one modelled?

    python tools/freshness.py

A step of `.ci/run` that never fails the build: it asks pip (`pip index versions sglang`,
from the index pip is configured with) for sglang's released versions and prints a warning
naming each final release newer than the newest modelled, with the command that takes it in
(`python tools/intake.py X`). Without an answer (no network, no index) it says that the
freshness was not checked. Exit 0 always.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

# `pip index versions NAME` prints "Available versions: 0.5.23, 0.5.22, ..." (final releases
# only, unless --pre), whatever else it prints around it.
_AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.MULTILINE)
_COMMAND = (
    *("-m", "pip", "index", "versions", "sglang"),
    *("--disable-pip-version-check", "--timeout", "15", "--retries", "1"),
)
TIMEOUT_S = 120

Runner = Callable[..., Any]
"""`subprocess.run`'s shape: what asks pip (a test passes its own)."""


class IndexUnavailableError(RuntimeError):
    """The package index did not answer: no network, no index, or pip failed."""


def index_versions(run: Runner = subprocess.run) -> tuple[str, ...]:
    """sglang's released versions on the package index, as pip lists them."""
    try:
        done = run(
            [sys.executable, *_COMMAND],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise IndexUnavailableError(f"pip could not be asked ({error})") from None
    found = _AVAILABLE.search(done.stdout or "")
    if done.returncode != 0 or found is None:
        said = (done.stderr or done.stdout or "").strip().splitlines()
        errors = [line for line in said if line.startswith("ERROR")]
        detail = (errors or said or ["no output"])[-1][:200]
        raise IndexUnavailableError(f"pip index exited {done.returncode}: {detail}")
    return tuple(v.strip() for v in found.group(1).split(",") if v.strip())


def newer_than(versions: Sequence[str], newest: str) -> tuple[str, ...]:
    """The final releases among `versions` after `newest`, oldest first (a post release of
    a modelled release shares its rules, and a pre-release is not released)."""
    from compat.releases import release_key

    limit = release_key(newest)
    final = re.compile(r"^\d+\.\d+\.\d+$")
    keyed = [(release_key(v), v) for v in versions if final.match(v.strip())]
    return tuple(
        v for key, v in sorted(keyed) if key is not None and limit is not None and key > limit
    )


def report(run: Runner = subprocess.run) -> str:
    """What the check says: a warning per newer release, all is well, or not checked."""
    from compat.releases import NEWEST

    try:
        versions = index_versions(run)
    except IndexUnavailableError as error:
        return f"freshness not checked: the package index did not answer ({error})"
    newer = newer_than(versions, NEWEST)
    if not newer:
        return f"the newest SGLang on the package index is modelled (newest modelled: {NEWEST})"
    return "\n".join(
        f"warning: the package index has SGLang {release}, newer than the newest release "
        f"modelled ({NEWEST}): take it in with `python tools/intake.py {release}` "
        "(docs/contributing.md, Record a release)"
        for release in newer
    )


def main() -> int:
    try:
        print(report())
    except Exception as error:  # a warning step: it never fails the build, it says why
        print(f"freshness not checked: {type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
