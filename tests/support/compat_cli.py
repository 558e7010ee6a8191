"""`compat check` as a user runs it: a fresh interpreter, its output and exit code kept."""

from __future__ import annotations

import subprocess
import sys


def compat_check(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m compat check ARGS` in a fresh interpreter (never raises on exit 1 or 2)."""
    return subprocess.run(
        [sys.executable, "-m", "compat", "check", *args],
        capture_output=True,
        text=True,
        check=False,
    )
