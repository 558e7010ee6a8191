"""The JSON export of the matrix: valid, deterministic, complete and committed fresh."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cells import fp4_partner_candidate, opposite, with_cell
from jsonschema import Draft202012Validator

from compat.cli import main
from compat.export import (
    EXPORT_PATH,
    SCHEMA_PATH,
    export_matrix,
    matrix_schema,
    render_export,
    render_schema,
)
from compat.matrix import MATRIX
from compat.outputs import project_root
from compat.releases import NEWEST, RELEASES
from compat.schema import ColumnId
from compat.vocab import Arch, CellKind

ROOT = project_root()


def _committed_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ROOT / SCHEMA_PATH).read_text(encoding="utf-8"))
    return schema


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = _committed_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_export_validates_against_the_committed_schema() -> None:
    validator = Draft202012Validator(_committed_schema())
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(export_matrix())]
    assert errors == []


def test_the_schema_rejects_a_broken_export() -> None:
    validator = Draft202012Validator(_committed_schema())
    broken = export_matrix()
    broken["tables"][0]["rows"][0]["cells"]["fp4_kv"]["kind"] = "maybe"
    assert not validator.is_valid(broken)
    broken = export_matrix()
    del broken["backends"][0]["phases"]
    assert not validator.is_valid(broken)


def test_render_is_deterministic() -> None:
    first, second = render_export(), render_export()
    assert first == second
    assert first.endswith("}\n")
    assert json.loads(first) == export_matrix()
    assert render_schema() == render_schema()


def test_committed_files_are_fresh() -> None:
    assert (ROOT / EXPORT_PATH).read_text(encoding="utf-8") == render_export(), (
        "docs/matrix.json is stale: run `compat export`"
    )
    assert (ROOT / SCHEMA_PATH).read_text(encoding="utf-8") == render_schema(), (
        "docs/matrix.schema.json is stale: run `compat export`"
    )


def test_every_cell_appears_with_its_symbol() -> None:
    exported = {table["arch"]: table for table in export_matrix()["tables"]}
    for table in MATRIX.tables:
        rows = {row["backend"]: row for row in exported[table.arch.value]["rows"]}
        assert list(rows) == [row.backend for row in table.rows]
        assert exported[table.arch.value]["columns"] == [c.value for c in table.columns]
        for row in table.rows:
            assert rows[row.backend]["display_name"] == row.display_name
            for column_id, cell in row.cells.items():
                out = rows[row.backend]["cells"][column_id.value]
                assert out["symbol"] == cell.symbol
                assert out["kind"] == cell.kind.value
                assert out["page_sizes"] == list(cell.page_sizes)


def test_evidence_is_listed_once_and_every_reference_resolves() -> None:
    exported = export_matrix()
    evidence = exported["evidence"]
    assert [entry["index"] for entry in evidence] == list(range(len(evidence)))
    keys = [json.dumps({k: v for k, v in e.items() if k != "index"}) for e in evidence]
    assert len(set(keys)) == len(keys)
    references: list[int] = []

    def collect(node: object, key: str = "") -> None:
        if isinstance(node, dict):
            for child_key, child in node.items():
                collect(child, child_key)
        elif isinstance(node, list):
            for child in node:
                collect(child, key)
        elif key == "evidence" and isinstance(node, int):
            references.append(node)

    collect({k: v for k, v in exported.items() if k != "evidence"})
    assert references
    assert all(0 <= ref < len(evidence) for ref in references)
    fp4 = exported["tables"][0]["rows"][0]["cells"]["fp4_kv"]["evidence"]
    assert "14467" in evidence[fp4]["source"]


def test_backends_columns_and_rules_come_from_the_matrix() -> None:
    exported = export_matrix()
    assert [b["name"] for b in exported["backends"]] == list(MATRIX.backend_names)
    fa4 = next(b for b in exported["backends"] if b["name"] == "fa4")
    assert fa4["phases"] == ["prefill"]
    assert fa4["phase_rule_id"] == "fa4-prefill-only"
    trtllm_mha = next(b for b in exported["backends"] if b["name"] == "trtllm_mha")
    assert trtllm_mha["archs"] == {"mha": "row", "mla": "refused"}
    assert [c["id"] for c in exported["columns"]] == [c.id.value for c in MATRIX.columns]
    pairing = exported["rules"]["pairing"][0]
    rule = MATRIX.pairing_rules[0]
    for arch in Arch:
        assert pairing["decode_partners"][arch.value] == list(MATRIX.decode_partners(rule, arch))
    assert [p["id"] for p in exported["rules"]["phase_only"]] == ["fa4-prefill-only"]
    assert len(exported["defaults"]) == len(RELEASES[NEWEST].defaults)
    assert set(exported["releases"]) == set(RELEASES)


def test_flipping_one_cell_changes_the_export() -> None:
    # One FP4 cell that decides whether its backend is an MLA decode partner of the pairing
    # rule, picked from the live matrix and flipped whichever way it points today.
    row = fp4_partner_candidate(Arch.MLA)
    old = row.cells[ColumnId.FP4_KV]
    flipped = with_cell(MATRIX, Arch.MLA, row.backend, ColumnId.FP4_KV, opposite(old))
    before, after = export_matrix(), export_matrix(flipped)
    assert render_export(flipped) != render_export()

    def cell(data: dict[str, Any]) -> str:
        mla = next(t for t in data["tables"] if t["arch"] == "mla")
        exported = next(r for r in mla["rows"] if r["backend"] == row.backend)
        return str(exported["cells"]["fp4_kv"]["symbol"])

    assert (cell(before), cell(after)) == (old.symbol, opposite(old).symbol)
    partners = {
        name: data["rules"]["pairing"][0]["decode_partners"]["mla"]
        for name, data in (("before", before), ("after", after))
    }
    supported_now = old.kind is CellKind.SUPPORTED
    assert (row.backend in partners["before"]) is supported_now
    assert (row.backend in partners["after"]) is not supported_now
    assert set(partners["before"]) ^ set(partners["after"]) == {row.backend}
    Draft202012Validator(matrix_schema()).validate(after)


# -- the command ------------------------------------------------------------------------------


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the committed export files in a scratch checkout."""
    for relative in (EXPORT_PATH, SCHEMA_PATH):
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, target)
    return tmp_path


def test_check_passes_when_fresh(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--check", "--root", str(checkout)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_fails_after_a_hand_edit(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = checkout / EXPORT_PATH
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"symbol": "✅"', '"symbol": "❌"', 1), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert main(["export", "--check", "--root", str(checkout)]) == 1
    out = capsys.readouterr().out
    assert "compat export" in out and "stale" in out
    removed = [line for line in out.splitlines() if line.startswith("-") and "symbol" in line]
    added = [line for line in out.splitlines() if line.startswith("+") and "symbol" in line]
    assert len(removed) == len(added) == 1
    assert removed[0].endswith('"❌",') and added[0].endswith('"✅",')
    assert path.read_text(encoding="utf-8") == before, "--check must not write"
    assert "Traceback" not in out


def test_export_writes_then_reports_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--check", "--root", str(tmp_path)]) == 1
    assert "does not exist" in capsys.readouterr().out
    assert main(["export", "--root", str(tmp_path)]) == 0
    assert "wrote docs/matrix.json" in capsys.readouterr().out
    assert (tmp_path / EXPORT_PATH).read_text(encoding="utf-8") == render_export()
    assert main(["export", "--root", str(tmp_path)]) == 0
    assert "docs/matrix.json is up to date" in capsys.readouterr().out
    assert main(["export", "--check", "--root", str(tmp_path)]) == 0


def test_output_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--output", "-"]) == 0
    assert capsys.readouterr().out == render_export()


def test_bad_root_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--check", "--root", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "is not a directory" in err and "Traceback" not in err
