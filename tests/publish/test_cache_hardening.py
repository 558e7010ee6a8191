"""The build cache against hostile or unlucky places (a hardening review's findings, each
reproduced): an entry that is a FIFO or a directory, two first builds side by side, the
user's own link as the cache directory, and no home directory at all."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from compat.publish import finder_cache, page_cache, verified

KEY = "c" * 64
NAMES = ("javascripts/finder-data-0.5.23-mha.js",)
GOOD = [(NAMES[0], "// data\n")]
KINDS = [finder_cache.FINDER, page_cache.PAGES, verified.VERIFIED]


@pytest.fixture(autouse=True)
def _cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(finder_cache.DISABLE_VARIABLE, raising=False)
    return tmp_path / "cache"


def _cached() -> tuple[finder_cache.Files, int, list[str]]:
    calls: list[int] = []
    said: list[str] = []

    def compute() -> finder_cache.Files:
        calls.append(1)
        return GOOD

    files = finder_cache.cached(compute, NAMES, key=KEY, say=said.append)
    return files, len(calls), said


def _within(seconds: float, call: Callable[[], object]) -> object:
    """`call()`'s result, failing (not hanging) when it takes longer than `seconds`."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    return result[0]


def _entry(root: Path, kind: str) -> Path:
    folder = root / kind
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    root.chmod(0o700)
    return folder / f"{KEY}.json"


@pytest.mark.parametrize("kind", KINDS)
def test_m3_an_entry_that_is_a_fifo_is_refused_at_once(_cache_in: Path, kind: str) -> None:
    os.mkfifo(_entry(_cache_in, kind), 0o600)

    def read() -> str:
        try:
            finder_cache.read_entry(_cache_in, KEY, NAMES, kind=kind)
        except finder_cache.Untrusted as error:
            return str(error)
        return "read"

    assert "is not a regular file" in str(_within(5, read))


@pytest.mark.parametrize("kind", KINDS)
def test_m4_an_entry_that_is_a_directory_is_refused(_cache_in: Path, kind: str) -> None:
    _entry(_cache_in, kind).mkdir()
    with pytest.raises(finder_cache.Untrusted, match="is not a regular file"):
        finder_cache.read_entry(_cache_in, KEY, NAMES, kind=kind)
    if kind == verified.VERIFIED:
        assert verified.found_fresh(KEY) is False


@pytest.mark.parametrize("plant", [os.mkfifo, os.mkdir])
def test_m3_m4_the_build_computes_afresh_with_one_line(
    _cache_in: Path, plant: Callable[[Path], None]
) -> None:
    plant(_entry(_cache_in, finder_cache.FINDER))
    files, calls, said = _within(10, _cached)  # type: ignore[misc]
    assert files == GOOD and calls == 1
    assert len(said) == 1 and "is not a regular file" in said[0] and "\n" not in said[0]


def test_l7_the_first_build_makes_the_directory_then_holds_the_lock(_cache_in: Path) -> None:
    assert not _cache_in.exists()
    with finder_cache.computing(_cache_in, ".a.lock"):
        lock = _cache_in / finder_cache.FINDER / ".a.lock"
        for directory in (_cache_in, lock.parent):
            assert directory.stat().st_mode & 0o777 == 0o700
        # A second build beside it would wait here: the lock is taken.
        handle = os.open(lock, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(handle)


def test_l8_the_users_own_link_to_their_own_directory_is_used(
    _cache_in: Path, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    _cache_in.symlink_to(target)
    assert _cached()[1:] == (1, [])
    assert _cached()[1:] == (0, []), "the second build reads what the first stored"
    assert (target / finder_cache.FINDER / f"{KEY}.json").is_file()
    # The target is checked as the directory itself would be.
    target.chmod(0o777)
    try:
        files, calls, said = _cached()
        assert files == GOOD and calls == 1 and len(said) == 1
        assert "writable by others" in said[0]
    finally:
        target.chmod(0o700)


def test_l12_no_home_and_no_passwd_entry_skips_the_cache_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pwd

    for name in (finder_cache.CACHE_VARIABLE, "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_entry(uid: int) -> object:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    with pytest.raises(finder_cache.NoCacheDirectory, match="HOME is unset"):
        finder_cache.cache_dir()
    files, calls, said = _cached()
    assert files == GOOD and calls == 1
    assert len(said) == 1 and "no cache directory" in said[0]
    # The finder's parts, the record of fresh pages and the page cache skip it too.
    from compat.publish import finder_build

    monkeypatch.setattr(finder_build.finder, "part_script", lambda part, rows: "// x\n")
    monkeypatch.setattr(
        finder_build.finder, "stream_rows", lambda parts, say=None: ((p, []) for p in parts)
    )
    monkeypatch.setenv("COMPAT_FINDER_MODELS", "mha")
    lines: list[str] = []
    finder_build.site_files(lines.append)
    assert sum("no cache directory" in line for line in lines) == 1
    assert verified.found_fresh(KEY) is False
    verified.remember(KEY)
    converted: list[int] = []
    page = SimpleNamespace(render=lambda config, files: converted.append(1))
    page_cache.convert_once(page)  # type: ignore[arg-type]
    page.render(None, None)
    assert converted == [1]
