"""What a release's wheel knows about models is read once per wheel and harness, then reused.

`release_data_in_subprocess` imports the release in a fresh interpreter (seconds per
release); its result is a pure function of the wheel and of the harness's code, so it is
kept under the wheel cache, keyed by both, and `COMPAT_CONFORMANCE_FRESH=1` recomputes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance import model_data
from conformance.wheel import FRESH


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The releases actually read from a wheel; the wheel cache is an empty directory
    holding a stand-in wheel file (the key reads its name, never its content)."""
    monkeypatch.setenv("COMPAT_SGLANG_WHEELS", str(tmp_path))
    monkeypatch.delenv(FRESH, raising=False)
    (tmp_path / "sglang-0.5.7-py3-none-any.whl").write_bytes(b"")
    done: list[str] = []

    def read(release: str) -> dict[str, list[str]]:
        done.append(release)
        return {"architectures": [f"Read{len(done)}ForCausalLM"]}

    monkeypatch.setattr(model_data, "_read_in_subprocess", read)
    return done


def test_a_second_run_reuses_the_first_runs_reading(reads: list[str], tmp_path: Path) -> None:
    first = model_data.release_data_in_subprocess("0.5.7")
    again = model_data.release_data_in_subprocess("0.5.7")
    assert reads == ["0.5.7"] and again == first
    assert [path.suffix for path in (tmp_path / "model-data").iterdir()] == [".json"]


def test_another_wheel_is_read_afresh(reads: list[str], tmp_path: Path) -> None:
    first = model_data.release_data_in_subprocess("0.5.7")
    (tmp_path / "sglang-0.5.7-py3-none-any.whl").rename(tmp_path / "sglang-0.5.7-cp311.whl")
    assert model_data.release_data_in_subprocess("0.5.7") != first
    assert reads == ["0.5.7", "0.5.7"]


def test_fresh_always_reads_the_wheel(reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    model_data.release_data_in_subprocess("0.5.7")
    monkeypatch.setenv(FRESH, "1")
    model_data.release_data_in_subprocess("0.5.7")
    assert reads == ["0.5.7", "0.5.7"]
