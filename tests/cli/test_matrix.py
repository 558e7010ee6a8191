"""`compat matrix` and `compat explain`: the tables in a terminal, filtered by the guard."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from paths import MODELS

from compat.claim.baseline import MATRIX
from compat.claim.columns import ColumnId
from compat.cli import COMMANDS, main
from compat.guard.audit import audit
from compat.guard.check import check
from compat.inputs.config import AttentionConfig, speculation_with_topk
from compat.releases import NEWEST, RELEASES
from compat.vocab.terms import Arch


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse errors
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def accepted_in_text(out: str) -> set[str]:
    return {line.split()[1] for line in out.splitlines() if line.startswith("ok ")}


def refused_in_text(out: str) -> set[str]:
    return {line.split()[1] for line in out.splitlines() if line.startswith("refused ")}


def expected_ok(arch: str, **fields: Any) -> set[str]:
    return {
        name
        for name in MATRIX.backend_names
        if check(AttentionConfig(attention_backend=name, attention_arch=arch, **fields)).ok
    }


def test_commands_are_registered() -> None:
    assert {"matrix", "explain", "export"} <= set(COMMANDS)


def test_unfiltered_output_has_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "matrix")
    assert code == 0
    for table in MATRIX.tables:
        block = out.split(table.title, 1)[1]
        for _, header in table.headers:
            assert header in block
        for row in table.rows:
            line = next(line for line in block.splitlines() if line.startswith(row.display_name))
            assert row.backend in line
            for cell in row.cells.values():
                assert cell.symbol in line
    assert "ok " not in out and "refused " not in out


def test_table_columns_line_up(capsys: pytest.CaptureFixture[str]) -> None:
    from compat.cli.matrix import display_width

    _, out, _ = run(capsys, "matrix", "--attention-arch", "mla", "--platform", "cuda")
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("Backend "))
    table = MATRIX.table(Arch.MLA)
    shown = {line.split("  ")[0]: line for line in lines if "  " in line}
    rows = [row for row in table.rows if row.display_name in shown]
    assert len(rows) > 1  # the filter may hide backends the platform cannot run
    for row in rows:
        line = shown[row.display_name]
        position = line.index(f" {row.backend} ") + len(row.backend) + 1
        for column, title in table.headers:
            position = line.index(row.cells[column].symbol, position)
            assert display_width(line[:position]) == display_width(header[: header.index(title)])
            position += len(row.cells[column].symbol)


def test_fp4_mla_blackwell_lists_exactly_what_the_guard_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--attention-arch", "mla", "--kv-cache-dtype", "fp4_e2m1", "--platform", "cuda"]
    argv += ["--compute-capability", "10.0"]
    expected = expected_ok(
        "mla", kv_cache_dtype="fp4_e2m1", platform="cuda", compute_capability="10.0"
    )
    # Whatever the FP4 cells say today: some backends pass, and only ones with a ✅ FP4 cell
    # or a ❌ that the release's own code accepts (a disputed cell: the guard only warns).
    pinned = "0.5.7"  # the release the tests pin
    disputed = {d.backend for d in audit(pinned) if d.arch is Arch.MLA}
    assert expected and expected <= set(MATRIX.supporting(Arch.MLA, ColumnId.FP4_KV)) | disputed
    code, out, _ = run(capsys, "matrix", *argv)
    assert code == 0
    assert accepted_in_text(out) == expected
    assert refused_in_text(out) == set(MATRIX.backend_names) - expected
    assert "[fp4-kv]" in out
    assert "MHA backends" not in out
    code, out, _ = run(capsys, "matrix", *argv, "--json")
    data = json.loads(out)
    (mla,) = data["archs"]
    assert mla["attention_arch"] == "mla"
    assert {entry["backend"] for entry in mla["accepted"]} == expected
    assert all(entry["errors"] for entry in mla["refused"])


FILTER_CASES = [
    {"kv_cache_dtype": "fp8_e5m2", "compute_capability": "sm90"},
    {"speculative_eagle_topk": 2, "page_size": 16},
    {"platform": "rocm"},
    {"compute_capability": "100", "page_size": 64, "speculative_eagle_topk": 1},
    {"platform": "cpu", "kv_cache_dtype": "bfloat16"},
]


@pytest.mark.parametrize("fields", FILTER_CASES)
@pytest.mark.parametrize("arch", [arch.value for arch in Arch])
def test_filters_match_the_guard(
    capsys: pytest.CaptureFixture[str], arch: str, fields: dict[str, Any]
) -> None:
    argv = ["matrix", "--attention-arch", arch, "--json"]
    for name, value in fields.items():
        argv += ["--" + name.replace("_", "-"), str(value)]
    guard_fields = dict(fields)
    if "speculative_eagle_topk" in fields:
        guard_fields.update(speculation_with_topk(fields["speculative_eagle_topk"]))
    code, out, _ = run(capsys, *argv)
    assert code == 0
    (verdict,) = json.loads(out)["archs"]
    accepted = {entry["backend"] for entry in verdict["accepted"]}
    assert accepted == expected_ok(arch, **guard_fields)
    refused = {entry["backend"] for entry in verdict["refused"]}
    assert accepted | refused == set(MATRIX.backend_names) and not accepted & refused


def test_without_arch_both_tables_are_judged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "matrix", "--kv-cache-dtype", "fp4_e2m1")
    assert code == 0
    assert "MHA models" in out and "MLA models" in out
    blocks = out.split("MLA models")
    assert accepted_in_text(blocks[0]) == expected_ok("mha", kv_cache_dtype="fp4_e2m1")
    assert accepted_in_text(blocks[1]) == expected_ok("mla", kv_cache_dtype="fp4_e2m1")


def test_model_config_sets_arch_and_features(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "matrix", "--model-config", str(MODELS / "deepseek-v3.2"))
    assert code == 0
    assert "MHA models" not in out
    assert "nsa" in accepted_in_text(out)
    code, out, _ = run(capsys, "matrix", "--model-config", str(MODELS / "deepseek-r1"))
    assert "nsa" in refused_in_text(out)
    code, _, err = run(capsys, "matrix", "--model-config", str(MODELS / "missing"))
    assert code == 2 and "no such file" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--kv-cache-dtype", "fp4"], ["--kv-cache-dtype", "'fp4'", "valid choices"]),
        (["--platform", "cdua"], ["--platform", "did you mean", "cuda"]),
        (["--compute-capability", "ten"], ["--compute-capability", "'ten'"]),
        (["--compute-capability", "1000"], ["--compute-capability", "'1000'"]),
        (["--page-size", "0"], ["--page-size", "positive"]),
        (["--speculative-eagle-topk", "-1"], ["--speculative-eagle-topk", "positive"]),
    ],
)
def test_invalid_values_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: list[str]
) -> None:
    code, out, err = run(capsys, "matrix", *argv)
    assert code == 2
    assert out == ""
    for word in words:
        assert word in err


@pytest.mark.parametrize("argv", [["--attention-arch", "gqa"], ["--page-size", "big"], ["--bogus"]])
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run(capsys, "matrix", *argv)
    assert code == 2 and "error:" in err


# -- compat explain ---------------------------------------------------------------------------


def test_explain_fa4(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "fa4")
    assert code == 0
    assert "prefill only" in out
    assert "prefill and decode" not in out
    assert "FP4" in out
    assert "fa4-prefill-only" in out and "kv4-fa4-decode-partner" in out
    assert "sm10x" in out
    assert "FA4 (FlashAttention 4)" in out
    # No general default picks fa4; MiniMax-M3's own branch does on SM100 (0.5.16+).
    default = out.split("Default:\n", 1)[1].split("\n\n", 1)[0]
    assert "the default for" not in default
    assert "MiniMaxM3SparseForCausalLM" in default and "fa4 on SM100" in default
    assert "https://github.com/sgl-project/sglang/pull/14467" in out


@pytest.mark.parametrize("name", MATRIX.backend_names)
def test_explain_every_backend(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, "explain", name)
    assert code == 0
    assert out.startswith(name)
    backend = MATRIX.backend(name)
    if backend.note:
        assert backend.note in out
    for table in MATRIX.tables:
        row = MATRIX.row(table.arch, name)
        if row is None:
            assert f"{table.title}: no row ({MATRIX.arch_status(name, table.arch).label})" in out
        else:
            assert f"{table.title}: {row.display_name}" in out
    newest = RELEASES[NEWEST]
    is_default = any(b.backend == name for b in newest.defaults) or any(
        name in rule.default_backends for rule in newest.model_rules
    )
    assert ("not a default anywhere" not in out) is is_default
    accepted = [r for r, rules in RELEASES.items() if name in rules.backend_set]
    assert f"SGLang {accepted[0]}" in out


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "trtllm_mla", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["backend"]["name"] == "trtllm_mla"
    assert data["rows"]["mha"] is None and data["rows"]["mla"]["display_name"]
    assert data["defaults"]


def test_explain_unknown_backend(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "flashinferr")
    assert code == 2
    assert out == ""
    assert "did you mean 'flashinfer'" in err
    assert "valid choices" in err
    assert len(err.strip().splitlines()) == 1


def test_real_entry_point_has_no_traceback() -> None:
    for argv in (["explain", "flashinferr"], ["matrix", "--kv-cache-dtype", "fp5"]):
        done = subprocess.run(
            [sys.executable, "-m", "compat", *argv], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2
        assert "Traceback" not in done.stdout + done.stderr
        assert "error:" in done.stderr
