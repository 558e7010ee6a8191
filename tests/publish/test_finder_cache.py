"""The finder data's build cache: keyed by the package's sources, never served stale."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from compat.publish import finder_cache
from compat.publish.outputs import PACKAGE_DIR


@pytest.fixture(autouse=True)
def _cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(finder_cache.DISABLE_VARIABLE, raising=False)
    return tmp_path / "cache"


def _counting(files: finder_cache.Files) -> tuple[list[int], Callable[[], finder_cache.Files]]:
    calls: list[int] = []

    def compute() -> finder_cache.Files:
        calls.append(1)
        return files

    return calls, compute


def test_an_edit_to_any_package_source_changes_the_key(tmp_path: Path) -> None:
    package = tmp_path / "compat"
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    before = finder_cache.source_digest(package)
    assert finder_cache.source_digest(package) == before
    matrix = package / "claim" / "baseline.py"
    matrix.write_text(matrix.read_text() + "\n# a cell changed\n")
    assert finder_cache.source_digest(package) != before
    (package / "cli" / "new.py").write_text("")
    assert len({before, finder_cache.source_digest(package)}) == 2


def test_computed_once_then_read_back() -> None:
    calls, compute = _counting([("a.js", "window.X = 1;\n"), ("b.js", "é")])
    first = finder_cache.cached(compute, key="k")
    second = finder_cache.cached(compute, key="k")
    assert first == second == [("a.js", "window.X = 1;\n"), ("b.js", "é")]
    assert len(calls) == 1
    finder_cache.cached(compute, key="other")
    assert len(calls) == 2


def test_a_damaged_entry_is_recomputed(_cache_in: Path) -> None:
    calls, compute = _counting([("a.js", "x")])
    (_cache_in / "finder").mkdir(parents=True)
    (_cache_in / "finder" / "k.json").write_text('[["a.js"]]')
    assert finder_cache.cached(compute, key="k") == [("a.js", "x")]
    assert len(calls) == 1
    assert finder_cache.cached(compute, key="k") == [("a.js", "x")]
    assert len(calls) == 1


def test_disabled_or_unwritable_cache_still_builds(
    _cache_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, compute = _counting([("a.js", "x")])
    _cache_in.parent.mkdir(parents=True, exist_ok=True)
    _cache_in.write_text("a file where the cache directory should be")
    assert finder_cache.cached(compute, key="k") == [("a.js", "x")]
    monkeypatch.setenv(finder_cache.DISABLE_VARIABLE, "1")
    finder_cache.cached(compute, key="k")
    assert len(calls) == 2
