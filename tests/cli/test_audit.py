"""`compat audit RELEASE`: the disputed cells as a Markdown table or JSON; exit 2 for a
release not modelled."""

from __future__ import annotations

import json

import pytest

from compat.cli import main
from compat.guard.audit import audit
from compat.releases import RELEASE_NAMES


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_table_has_one_row_per_dispute_and_exits_0(
    release: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "audit", release)
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    disputes = audit(release)
    assert len(rows) == (len(disputes) + 1 if disputes else 0)
    for dispute, line in zip(disputes, rows[1:], strict=True):
        assert f"`{dispute.backend}`" in line and dispute.header in line
        for _, site in dispute.sites:
            assert site is not None and site in line


def test_0_5_23_lists_flashmla_and_trtllm_mla_fp4_with_the_refusing_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "audit", "0.5.23")
    assert code == 0
    for backend in ("flashmla", "trtllm_mla"):
        line = next(row for row in out.splitlines() if f"(`{backend}`)" in row)
        assert "FP4 KV Cache" in line and "| ✅ |" in line
        assert "`--kv-cache-dtype nvfp4`: `sglang/srt/" in line and ".py:" in line


def test_json_carries_each_dispute_and_its_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "0.5.7", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["release"] == "0.5.7"
    assert [d["backend"] for d in data["disputes"]] == [d.backend for d in audit("0.5.7")]
    for dispute in data["disputes"]:
        assert dispute["page_evidence"]["source"]
        assert all(site["site"] for site in dispute["sites"])


@pytest.mark.parametrize("release", ["0.5.6", "0.9.0", "latest"])
def test_a_release_not_modelled_is_exit_2_naming_the_modelled_ones(
    release: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "audit", release)
    assert code == 2 and out == ""
    assert release in err and ", ".join(RELEASE_NAMES) in err
