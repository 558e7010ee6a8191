"""`compat docs --sglang-mdx RELEASE`: SGLang's own page tables in the release's page format,
read back cell for cell, and the baseline's against the stored copy of its page."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_tables import table_under
from paths import ROOT

from compat.cli import main
from compat.publish.sglang_page import PageFormat, page_format, page_rows, read_tables, render
from compat.releases import RELEASE_NAMES, release_matrix
from compat.releases.doc import read_from_code
from compat.vocab.terms import Arch

FIXTURE = ROOT / "tests" / "fixtures" / "baseline_tables.md"


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_tables_read_back_equal_the_release_s_matrix(release: str) -> None:
    matrix = release_matrix(release)
    text = render(release)
    mintlify = page_format(matrix) is PageFormat.MINTLIFY
    assert ("<table" in text) is mintlify
    assert (matrix.tables[0].evidence.url or "").endswith(".mdx") is mintlify
    tables = read_tables(text)
    assert set(tables) == set(Arch)
    for table in matrix.tables:
        read = tables[table.arch]
        assert read.header == ("Backend", *(header for _, header in table.headers))
        kept = page_rows(table)
        assert read.rows == tuple(
            (row.display_name, *(row.cells[c].symbol for c in table.columns)) for row in kept
        )
        # Only rows read from code alone are left out (this package's pages show them).
        for row in table.rows:
            if row not in kept:
                assert all(c.evidence and read_from_code(c.evidence) for c in row.cells.values())
    fp4 = " or ".join(f"`{d.value}`" for d in matrix.kv_dtypes(matrix.pairing_rules[0].kv_family))
    assert fp4 in text  # the FA4 + KV4 note names the release's FP4 spellings


@pytest.mark.parametrize("arch", list(Arch))
def test_the_baseline_round_trips_against_the_stored_copy_of_its_page(arch: Arch) -> None:
    """0.5.7's page (PR #14467) is the one page whose tables the package stores."""
    stored = table_under(FIXTURE.read_text(encoding="utf-8"), f"{arch.label} backends")
    read = read_tables(render("0.5.7"))[arch]
    assert list(read.header) == stored.header
    labels = [row[0].rsplit(" [", 1)[0] for row in stored.rows]
    assert [list(row) for row in read.rows] == [
        [label, *row[1:]] for label, row in zip(labels, stored.rows, strict=True)
    ]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_check_passes_on_its_own_output_and_names_a_flipped_cell(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _run(capsys, "docs", "--sglang-mdx", "0.5.23")
    assert code == 0 and out == render("0.5.23")
    page = tmp_path / "attention_backend.mdx"
    page.write_text(out, encoding="utf-8")
    assert _run(capsys, "docs", "--sglang-mdx", "0.5.23", "--check", str(page))[0] == 0
    page.write_text(out.replace(">64</td>", ">128</td>", 1), encoding="utf-8")
    code, out, _ = _run(capsys, "docs", "--sglang-mdx", "0.5.23", "--check", str(page))
    assert code == 1 and "'128', not '64'" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--sglang-mdx", "0.4.0"],
        ["--sglang-mdx", "0.5.23", "--check"],
        ["--sglang-mdx", "0.5.23", "--check", "no/such/page.mdx"],
        ["--check", "some/page.mdx"],
    ],
)
def test_bad_input_is_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "docs", *argv)
    assert code == 2 and err
