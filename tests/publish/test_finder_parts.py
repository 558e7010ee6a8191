"""The site's finder, part by part: the newest release by default, each part cached under a
key of what it reads (so one release's edit recomputes that release's parts alone), a line
of progress per part, and workers that never outlive the build."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from msgspec.structs import replace

from compat.publish import finder, finder_build, finder_cache, finder_keys
from compat.publish.finder import INDEX_PATH, data_path
from compat.publish.finder_layout import Row
from compat.publish.finder_options import (
    FINDER_RELEASES,
    MODELS_VARIABLE,
    RELEASES_VARIABLE,
    offered_releases,
)
from compat.publish.finder_progress import Part
from compat.publish.outputs import PACKAGE_DIR
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES

OFFERED = ("0.5.23", "0.5.22", "0.5.21")
MODELS = ("mha", "gpt-oss-120b")


@pytest.fixture(autouse=True)
def _cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(finder_cache.DISABLE_VARIABLE, raising=False)
    monkeypatch.setenv(RELEASES_VARIABLE, ",".join(OFFERED))
    monkeypatch.setenv(MODELS_VARIABLE, ",".join(MODELS))
    return tmp_path / "cache"


def _keys() -> dict[Part, str]:
    finder_keys.release_digest.cache_clear()
    finder_keys.menus_digest.cache_clear()
    return {(r, m): finder_keys.part_key(r, m) for r in RELEASE_NAMES for m in MODELS}


def test_the_default_build_offers_the_newest_release_and_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(RELEASES_VARIABLE)
    assert offered_releases() == (NEWEST,)
    page = (Path(__file__).parents[2] / "docs" / "finder.md").read_text(encoding="utf-8")
    named = finder_build.name_offered(page)
    assert f"This build offers SGLang {NEWEST}." in named
    assert finder_build.OFFERED_MARKER not in named
    assert "COMPAT_FINDER_RELEASES=all" in named and "--sglang-version" in named
    monkeypatch.setenv(RELEASES_VARIABLE, "all")
    assert offered_releases() == FINDER_RELEASES
    every = finder_build.name_offered(page)
    assert all(f"SGLang {release}" in every for release in RELEASE_NAMES)
    with pytest.raises(ValueError, match="no <!-- compat:offered-releases -->"):
        finder_build.name_offered("# Compatibility finder\n")


def test_one_releases_data_moves_only_that_releases_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _keys()
    assert len(set(before.values())) == len(before), "every part has its own key"
    assert _keys() == before, "the same data, the same keys"
    # 0.5.22's folded rules change (as an edit to its file would): its parts move, no other.
    folded = RELEASES["0.5.22"]
    changed = replace(folded, prefill_only=(*folded.prefill_only, "a_new_backend"))
    monkeypatch.setitem(RELEASES._folded, "0.5.22", changed)  # type: ignore[attr-defined]
    after = _keys()
    moved = sorted(part for part in before if before[part] != after[part])
    assert moved == [("0.5.22", model) for model in sorted(MODELS)]


def test_the_code_key_reads_the_finders_modules_only(tmp_path: Path) -> None:
    package = tmp_path / "compat"
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))

    def digest() -> str:
        finder_keys.code_digest.cache_clear()
        return finder_keys.code_digest(package)

    before = digest()
    # Not read by the finder: the CLI, the page templates' code, a release file (its
    # effect is its folded data, in the release's own key).
    for path in ("cli/check.py", "publish/pages.py", "releases/v0_5_22.py"):
        (package / path).write_text((package / path).read_text() + "\n# an edit\n")
        assert digest() == before, path
    # Read by the finder: the guard, the menus' data.
    (package / "guard" / "check.py").write_text("# an edit\n", encoding="utf-8")
    assert digest() != before
    moved = digest()
    (package / "inputs" / "zoo.json").write_text("{}", encoding="utf-8")
    assert digest() != moved


def _stand_in(computed: list[Part], monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `stream_rows` record the parts it is asked for, and `part_script` name its part."""

    def stream_rows(parts: Sequence[Part], say: object = None) -> Iterator[tuple[Part, list[Row]]]:
        for part in parts:
            computed.append(part)
            yield part, []

    monkeypatch.setattr(finder, "stream_rows", stream_rows)
    monkeypatch.setattr(finder, "part_script", lambda part, rows: f"// {part}\n")


def test_a_cached_build_recomputes_only_the_parts_whose_data_changed(
    monkeypatch: pytest.MonkeyPatch, _cache_in: Path
) -> None:
    computed: list[Part] = []
    _stand_in(computed, monkeypatch)
    said: list[str] = []
    files = finder_build.site_files(said.append)
    parts = [(r, m) for r in OFFERED for m in MODELS]
    assert computed == parts
    assert [name for name, _ in files] == [INDEX_PATH, *(data_path(*p) for p in parts)]
    assert said[0].startswith("finder: 6 parts to publish (3 release(s): 0.5.23, 0.5.22, 0.5.21")
    # One entry per part, in a folder of their own.
    assert len(list((_cache_in / finder_cache.PARTS).glob("*.json"))) == len(parts)
    computed.clear()
    assert finder_build.site_files(said.append) == files and computed == []
    # A build offering fewer releases reads the parts it shares.
    monkeypatch.setenv(RELEASES_VARIABLE, "0.5.22")
    finder_build.site_files(said.append)
    assert computed == []
    # 0.5.21's data changes: its parts alone are computed again.
    monkeypatch.setenv(RELEASES_VARIABLE, ",".join(OFFERED))
    digest = finder_keys.release_digest
    monkeypatch.setattr(
        finder_keys, "release_digest", lambda r: digest(r) + ("!" if r == "0.5.21" else "")
    )
    assert finder_build.site_files(said.append) == files
    assert computed == [("0.5.21", model) for model in MODELS]


def _sleeping_rows(release: str, model: int, hardware: int) -> list[Row]:
    """A stand-in for a piece (module level: forked workers look it up)."""
    time.sleep(0.05)
    return [Row((), "", (release, f"{model}/{hardware}"), None)]


def test_progress_says_each_part_with_its_time_and_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(finder, "release_rows", _sleeping_rows)
    said: list[str] = []
    parts = [("0.5.23", "mha"), ("0.5.23", "gpt-oss-120b"), ("0.5.7", "mla")]
    rows = dict(finder.stream_rows(parts, said.append))
    assert list(rows) == parts
    assert len(said) == len(parts)
    for number, (line, (release, model)) in enumerate(zip(said, parts, strict=True), 1):
        assert line.startswith(f"finder: SGLang {release}, model {model} computed in ")
        assert f"({number} of 3 parts, " in line and " left, " in line
    assert "about 0 s left" in said[-1]


WORKER_SCRIPT = """
import os, signal, sys, time
from pathlib import Path
from compat.publish import finder

signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's build has it
marks = Path(sys.argv[1])

def endless(release, model, hardware):
    (marks / str(os.getpid())).touch()
    time.sleep(600)
    return []

finder.release_rows = endless
print(os.getpid(), flush=True)
for _ in finder.stream_rows([("0.5.23", "mha")]):
    pass
"""


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_worker_outlives_a_stopped_build(tmp_path: Path, stop: signal.Signals) -> None:
    """SIGTERM and Ctrl-C stop the workers; a build killed outright (SIGKILL: no handler
    runs) takes them with it, by the kernel's parent-death signal."""
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "build.py"
    script.write_text(textwrap.dedent(WORKER_SCRIPT), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR.parent)}
    build = subprocess.Popen(
        [sys.executable, str(script), str(marks)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(marks.iterdir())) < min(2, os.cpu_count() or 1):
            assert time.monotonic() < deadline, "the workers did not start"
            assert build.poll() is None
            time.sleep(0.1)
        workers = [int(mark.name) for mark in marks.iterdir()]
        assert all(_alive(pid) for pid in workers)
        build.send_signal(stop)
        build.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "a worker outlived the build"
        assert build.returncode != 0
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
