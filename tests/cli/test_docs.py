"""`compat docs` and `compat docs --check` on a temporary copy of the project's docs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cells import opposite, page_cell_position, page_row_index
from paths import ROOT

from compat.claim.baseline import MATRIX
from compat.claim.cells import CellKind
from compat.claim.columns import ColumnId
from compat.vocab.terms import Arch

PAGE = Path("docs") / "attention_backend.md"


def hand_edit(page: str) -> tuple[str, str]:
    """(fresh line, edited line): the first MLA row with a ✅ or ❌ FP4 cell, that cell flipped.

    Picked from the live matrix, so it holds after any single-cell change.
    """
    table = MATRIX.table(Arch.MLA)
    row = next(
        r
        for r in table.rows
        if r.cells[ColumnId.FP4_KV].kind in (CellKind.SUPPORTED, CellKind.UNSUPPORTED)
    )
    cell = row.cells[ColumnId.FP4_KV]
    lines = page.splitlines()
    fresh = lines[page_row_index(lines, Arch.MLA, row.backend)]
    cells = fresh.split("|")
    column = page_cell_position(Arch.MLA, ColumnId.FP4_KV)
    assert cells[column].strip() == cell.symbol
    cells[column] = f" {opposite(cell).symbol} "
    return fresh, "|".join(cells)


def _compat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compat", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copytree(ROOT / "templates", root / "templates")
    return root


def test_check_passes_on_a_fresh_page(project: Path) -> None:
    result = _compat("docs", "--check", "--root", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


def test_check_fails_on_a_hand_edit_then_docs_repairs_it(project: Path) -> None:
    page = project / PAGE
    fresh = page.read_text(encoding="utf-8")
    fresh_row, edited_row = hand_edit(fresh)
    assert fresh_row in fresh and edited_row != fresh_row
    edited = fresh.replace(fresh_row, edited_row, 1)
    page.write_text(edited, encoding="utf-8")

    check = _compat("docs", "--check", "--root", str(project))
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    assert any(line.startswith("--- ") for line in lines)
    assert any(line.startswith("+++ ") for line in lines)
    assert any(line.startswith(f"-{edited_row}") for line in lines)
    assert any(line.startswith(f"+{fresh_row}") for line in lines)
    assert "compat docs" in check.stdout
    assert page.read_text(encoding="utf-8") == edited, "--check must not write"

    write = _compat("docs", "--root", str(project))
    assert write.returncode == 0, write.stderr
    assert "wrote docs/attention_backend.md" in write.stdout
    assert page.read_text(encoding="utf-8") == fresh

    again = _compat("docs", "--root", str(project))
    assert again.returncode == 0
    assert "up to date" in again.stdout
    assert "wrote" not in again.stdout


def test_check_reports_a_missing_page(project: Path) -> None:
    (project / PAGE).unlink()
    result = _compat("docs", "--check", "--root", str(project))
    assert result.returncode == 1
    assert "compat docs" in result.stdout
    assert not (project / PAGE).exists()


@pytest.mark.parametrize(
    "args",
    [("docs", "--chek"), ("docs", "--root"), ("docs", "--root", "/nonexistent/compat-root")],
)
def test_bad_arguments_exit_2_without_a_traceback(args: tuple[str, ...]) -> None:
    result = _compat(*args)
    assert result.returncode == 2
    assert result.stderr.strip()
    assert "Traceback" not in result.stderr + result.stdout


def test_missing_template_is_a_clear_error(project: Path) -> None:
    shutil.rmtree(project / "templates")
    result = _compat("docs", "--root", str(project), "--template-dir", str(project / "templates"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "not found" in result.stderr


def test_template_error_is_a_clear_error(project: Path) -> None:
    template = project / "templates" / "attention_backend.md.j2"
    text = template.read_text(encoding="utf-8")
    broken = text.replace("page.notes.cuda_graph_off", "page.notes.cuda_graph_of", 1)
    assert broken != text
    template.write_text(broken, encoding="utf-8")
    result = _compat(
        "docs", "--check", "--root", str(project), "--template-dir", str(template.parent)
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "cuda_graph_of" in result.stderr
