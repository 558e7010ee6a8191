"""Running `compat` in process or as a module, and asserting a clean refusal (exit 2, one line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from compat.cli import main
from compat.publish.export import EXPORT_MARKER
from compat.publish.pages import GENERATED_MARKER, PAGE_PATH

PAGE = PAGE_PATH.as_posix()
GENERATED = (PAGE, "docs/matrix.json", "docs/matrix.schema.json")
STALE_PAGE = f"<!-- {GENERATED_MARKER} -->\nstale\n"
"""A generated page gone stale: it carries the marker, so `compat docs` may replace it."""
STALE_EXPORT = f"{{{EXPORT_MARKER}}}\n"
"""An old `compat export` output: it carries the marker, so `--output` may replace it."""


def generated_pages() -> tuple[str, ...]:
    """Every page `compat docs` writes (the main one, the release pages, what changed)."""
    from compat.publish.pages import render_pages

    return tuple(path.as_posix() for path, _ in render_pages())


MHA = ["check", "--platform", "cuda", "--attention-arch", "mha"]


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Exit 2 with exactly one line on stderr that holds every needle."""
    code, _, err = cli(argv, capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def run_module(*args: str | bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "compat", *args],
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def copy_generated(root: Path) -> Path:
    """A root whose docs/ holds fresh copies of the generated files."""
    for relative in (*GENERATED, *generated_pages()):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes((ROOT / relative).read_bytes())
    return root
