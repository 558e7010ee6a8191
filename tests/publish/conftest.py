"""The browser tests' fixtures: the site built with the tests' sample, served on 127.0.0.1,
and Debian's Chromium (one of each per test module, so that modules run side by side)."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from finder_browser import CHROMIUM_ARGS, QuietHandler, Watched, chromium
from finder_sample import sample_env
from paths import ROOT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium()
    site_dir = tmp_path_factory.mktemp("browser") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        # The sample of releases (test_finder.py checks that a default build offers every
        # one); the build cache entry is the one test_finder.py reads.
        env={**sample_env(), "NO_MKDOCS_2_WARNING": "1"},
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return site_dir


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    view = Watched(browser)
    try:
        yield view
    finally:
        view.context.close()
