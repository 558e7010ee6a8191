"""The benchmark runs end to end and prints every figure (its timings are not asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

SCRIPT = ROOT / "benchmarks" / "run.py"

LABELS = (
    'start-up: python -c "pass"',
    'start-up: python -c "import compat"',
    "start-up: import compat adds",
    "start-up: load the guard of the newest release and check once",
    "start-up: torch, jinja2, mkdocs not imported by the guard",
    "check(): configuration mix",
    "check() per configuration",
    "check() throughput",
    "check() by verdict",
    "check() single call, finding memo cold / warm",
    "AttentionConfig(...) construction",
    "KV4 if-chain floor (PR #14467 rules)",
    "check() / floor",
    "consistency proof: time",
    "consistency proof: configurations",
    "consistency proof: claims compared",
    "consistency proof: mismatches",
    "compat docs --check (end to end)",
    "mkdocs build --strict",
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the quick run writes its performance page (`--write`)."""
    return tmp_path_factory.mktemp("benchmark") / "performance.md"


@pytest.fixture(scope="module")
def quick_run(page: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--no-budgets", "--write", str(page)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_quick_benchmark_exits_0(quick_run: subprocess.CompletedProcess[str]) -> None:
    assert quick_run.returncode == 0, quick_run.stdout + quick_run.stderr
    assert "Traceback" not in quick_run.stderr


@pytest.mark.parametrize("label", LABELS)
def test_every_figure_is_printed(label: str, quick_run: subprocess.CompletedProcess[str]) -> None:
    lines = quick_run.stdout.splitlines()
    assert any(line.startswith(label + " ") for line in lines), quick_run.stdout


def test_every_budget_gets_a_verdict(quick_run: subprocess.CompletedProcess[str]) -> None:
    rows = [line for line in quick_run.stdout.splitlines() if line.startswith(LABELS)]
    budgeted = [row for row in rows if any(word in row for word in (" <", " >=", " must "))]
    assert len(budgeted) >= 7  # 4 budgets (check() twice), heavy modules, mismatches, mkdocs
    assert {row.split()[-1] for row in budgeted} <= {"PASS", "FAIL"}
    assert any(line.startswith("budgets: ") for line in quick_run.stdout.splitlines())


def test_the_proof_found_no_mismatch(quick_run: subprocess.CompletedProcess[str]) -> None:
    (line,) = [
        line
        for line in quick_run.stdout.splitlines()
        if line.startswith("consistency proof: mismatches")
    ]
    assert line.split()[3] == "0"
    assert line.rstrip().endswith("PASS")


def test_the_page_it_writes_has_one_header_line_and_every_figure(
    quick_run: subprocess.CompletedProcess[str], page: Path
) -> None:
    """docs/performance.md is this page: the date, the machine and its pace in one line."""
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0] == (ROOT / "docs" / "performance.md").read_text().splitlines()[0]
    (header,) = [line for line in lines if line.startswith("Measured on ")]
    assert "cores" in header and "pace " in header and "quick run" in header
    for label in LABELS:
        assert any(line.startswith(f"| {label} |") for line in lines), label
    assert not list(page.parent.glob("*.partial"))  # written whole, then renamed
