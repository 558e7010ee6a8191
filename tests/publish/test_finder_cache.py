"""The finder data's build cache: keyed by the package's sources, never served stale, and
trusted only when nobody else could have written it (each defect of a review reproduced)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from compat.publish import finder, finder_cache
from compat.publish.outputs import PACKAGE_DIR

KEY = "a" * 64
OTHER_KEY = "b" * 64
NAMES = ("javascripts/finder-releases.js", "javascripts/finder-data-0.5.7.js")
GOOD = [(NAMES[0], "window.X = 1;\n"), (NAMES[1], "é")]


@pytest.fixture(autouse=True)
def _cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(finder_cache.DISABLE_VARIABLE, raising=False)
    return tmp_path / "cache"


def _counting(
    files: finder_cache.Files = GOOD,
) -> tuple[list[int], Callable[[], finder_cache.Files]]:
    calls: list[int] = []

    def compute() -> finder_cache.Files:
        calls.append(1)
        return files

    return calls, compute


def _plant(
    root: Path, key: str, files: finder_cache.Files, kind: str = "finder", **changes: object
) -> Path:
    """An entry as a writer that knows the format would leave it: a correct digest of what
    it holds unless `changes` say otherwise."""
    entry = {
        "format": finder_cache.FORMAT,
        "sources": key,
        "digest": finder_cache.content_digest(key, files),
        "files": files,
    }
    path = root / kind / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    for directory in (root, path.parent):
        directory.chmod(0o700)
    path.write_text(json.dumps({**entry, **changes}), encoding="utf-8")
    path.chmod(0o600)
    return path


def _cached(key: str = KEY) -> tuple[finder_cache.Files, list[int], list[str]]:
    calls, compute = _counting()
    said: list[str] = []
    return finder_cache.cached(compute, NAMES, key=key, say=said.append), calls, said


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
    # The key also says which files: a build of fewer releases keeps its own entry.
    names = finder.generated_names()
    assert finder_cache.entry_key(names) != finder_cache.entry_key(names[:2])


def test_computed_once_then_read_back(_cache_in: Path) -> None:
    first, calls, said = _cached()
    second, more, _ = _cached()
    assert first == second == GOOD
    assert len(calls) == 1 and not more and not said
    # The directories the cache made are the user's alone.
    for directory in (_cache_in, _cache_in / "finder"):
        assert directory.stat().st_mode & 0o077 == 0
    _cached(OTHER_KEY)
    assert len(list((_cache_in / "finder").glob("*.json"))) == 2


def test_only_the_most_recently_used_entries_are_kept(_cache_in: Path) -> None:
    keys = [f"{digit}" * 64 for digit in "123456"]
    for age, key in enumerate(keys):
        finder_cache.write_entry(_cache_in, key, GOOD, keep=4)
        entry = _cache_in / "finder" / f"{key}.json"
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))  # written in this order
    folder = _cache_in / "finder"
    assert sorted(p.stem for p in folder.glob("*.json")) == sorted(keys[2:])
    # Reading the oldest entry left makes it the most recently used: it outlives the next.
    assert finder_cache.read_entry(_cache_in, keys[2], NAMES) == GOOD
    finder_cache.write_entry(_cache_in, "7" * 64, GOOD, keep=4)
    assert sorted(p.stem for p in folder.glob("*.json")) == sorted([keys[2], *keys[4:], "7" * 64])
    # Only entries are pruned: another file of the folder is left alone.
    (folder / "notes.txt").write_text("mine")
    finder_cache.write_entry(_cache_in, "8" * 64, GOOD, keep=1)
    assert sorted(p.name for p in folder.iterdir()) == ["8" * 64 + ".json", "notes.txt"]


def test_a_damaged_entry_is_recomputed_and_replaced(_cache_in: Path) -> None:
    _plant(_cache_in, KEY, GOOD)
    (_cache_in / "finder" / f"{KEY}.json").write_text('[["a.js"]]')
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert len(said) == 1 and "not an entry" in said[0]
    assert _cached() == (GOOD, [], [])


def test_disabled_or_unusable_cache_still_builds(
    _cache_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cache_in.parent.mkdir(parents=True, exist_ok=True)
    _cache_in.write_text("a file where the cache directory should be")
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1 and len(said) == 1
    monkeypatch.setenv(finder_cache.DISABLE_VARIABLE, "1")
    assert _cached()[1] == [1]


# -- H1: an entry must not make the build write any file ------------------------------


@pytest.mark.parametrize(
    "name", ["/tmp/planted.js", "../planted.js", "javascripts/../../x.js", "index.html"]
)
def test_h1_an_entry_naming_a_file_outside_the_finders_own_is_refused(
    _cache_in: Path, name: str
) -> None:
    planted = [*GOOD, (name, "planted")]
    _plant(_cache_in, KEY, planted)
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert len(said) == 1 and "may not hold" in said[0] and repr(name) in said[0]
    assert "\n" not in said[0]


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_h1_a_directory_others_can_write_is_not_trusted(_cache_in: Path, mode: int) -> None:
    _plant(_cache_in, KEY, GOOD)
    (_cache_in / "finder").chmod(mode)
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert len(said) == 1 and f"writable by others (mode {mode:o})" in said[0]
    # The entry stays where it was: nothing is written into a directory others control.
    (_cache_in / "finder").chmod(0o700)
    root_mode = 0o777
    _cache_in.chmod(root_mode)
    assert "writable by others" in _cached()[2][0]


def test_h1_a_directory_of_another_user_is_not_trusted(
    _cache_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plant(_cache_in, KEY, GOOD)
    owner = (_cache_in / "finder").stat().st_uid
    # Another user's directory, seen from our side: our id is not its owner's.
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert len(said) == 1 and f"belongs to user id {owner}, not to you" in said[0]


def test_h1_a_linked_entry_is_not_followed(_cache_in: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    _plant(_cache_in, KEY, GOOD).rename(elsewhere)
    (_cache_in / "finder" / f"{KEY}.json").symlink_to(elsewhere)
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1 and "cannot read" in said[0]


# -- M1: cache contents are checked against what the key promises ---------------------


def test_m1_a_changed_script_does_not_match_the_digest(_cache_in: Path) -> None:
    path = _plant(_cache_in, KEY, GOOD)
    entry = json.loads(path.read_text(encoding="utf-8"))
    entry["files"][0][1] = "window.X = 2; fetch('https://example.invalid');\n"
    path.write_text(json.dumps(entry), encoding="utf-8")
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert "does not match its digest" in said[0]


def test_m1_an_entry_of_other_sources_is_stale(_cache_in: Path) -> None:
    # Stale verdicts: an entry computed from other package sources, under today's key.
    stale = [(NAMES[0], "window.X = 0;\n"), (NAMES[1], "old")]
    _plant(_cache_in, OTHER_KEY, stale).rename(_cache_in / "finder" / f"{KEY}.json")
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1
    assert "computed from other package sources" in said[0]


def test_m1_an_entry_in_a_world_writable_directory_is_not_used(_cache_in: Path) -> None:
    _plant(_cache_in, KEY, [(NAMES[0], "planted"), (NAMES[1], "planted")])
    _cache_in.chmod(0o1777)  # like /tmp
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1 and "writable by others" in said[0]


def test_m1_an_entry_cannot_replace_the_finders_own_script(_cache_in: Path) -> None:
    _plant(_cache_in, KEY, [*GOOD, ("javascripts/finder.js", "alert(1)")])
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1 and "'javascripts/finder.js'" in said[0]


def test_m1_an_entry_missing_a_file_is_not_used(_cache_in: Path) -> None:
    _plant(_cache_in, KEY, GOOD[:1])
    files, calls, said = _cached()
    assert files == GOOD and len(calls) == 1 and "exactly once" in said[0]


def test_the_site_build_adds_only_the_finders_files(
    _cache_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through MkDocs' own hook dispatch: a planted entry under the package's real key
    neither writes outside the site nor replaces the finder's script; the build computes."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files
    from paths import ROOT

    from compat.publish import finder_build, finder_keys

    monkeypatch.setenv("COMPAT_FINDER_MODELS", "mha")
    names = finder.generated_names()
    part = (finder.offered_releases()[0], "mha")
    name = finder.data_path(*part)
    assert names == (finder.INDEX_PATH, name)
    fresh = f"// fresh {name}\n"
    monkeypatch.setattr(
        finder_build.finder, "stream_rows", lambda parts, say=None: ((p, []) for p in parts)
    )
    monkeypatch.setattr(finder_build.finder, "part_script", lambda part, rows: fresh)
    outside = tmp_path / "outside.js"
    _plant(
        _cache_in,
        finder_keys.part_key(*part),
        [(name, "planted"), (str(outside), "x"), ("javascripts/finder.js", "x")],
        kind=finder_cache.PARTS,
    )
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    files = config.plugins.on_files(Files([]), config=config)
    added = {f.src_uri: f.content_string for f in files if f.generated_by}
    assert set(added) == set(names) and added[name] == fresh
    assert not outside.exists()
