"""The browser tests' fixtures: the site built with the tests' sample, served on 127.0.0.1,
and Debian's Chromium (one of each per test module, so that modules run side by side)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from finder_browser import CHROMIUM_ARGS, Watched, chromium
from sample_site import build_sample_site, served


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium()
    site_dir = tmp_path_factory.mktemp("browser") / "site"
    result = build_sample_site(site_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    return site_dir


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    with served(site) as url:
        yield url


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
