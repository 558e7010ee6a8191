"""The built site in a real browser: the finder agrees with `check()`, tables sort, no CDN.

Builds the site with `mkdocs build --strict`, serves it on 127.0.0.1 and drives Debian's
Chromium through Playwright. Screenshots land in `tests/artifacts/` for a human to look at.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from compat import AttentionConfig, Report, check
from compat.finder import finder_options
from compat.matrix import MATRIX
from compat.vocab import Arch

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
LOCAL_SCHEMES = {"data", "blob", "about", "file"}

# Each selection: the finder's menu values and the same inputs as AttentionConfig fields.
SELECTIONS: list[tuple[dict[str, str], dict[str, Any]]] = [
    (
        {"arch": "mla", "gpu": "cuda-sm100", "kv_cache_dtype": "fp4_e2m1"},
        {
            "attention_arch": "mla",
            "platform": "cuda",
            "compute_capability": (10, 0),
            "kv_cache_dtype": "fp4_e2m1",
        },
    ),
    (
        {
            "arch": "mha",
            "gpu": "cuda-sm100",
            "kv_cache_dtype": "fp4_e2m1",
            "topk": "2",
            "page_size": "16",
        },
        {
            "attention_arch": "mha",
            "platform": "cuda",
            "compute_capability": (10, 0),
            "kv_cache_dtype": "fp4_e2m1",
            "speculative_algorithm": "EAGLE",
            "speculative_eagle_topk": 2,
            "page_size": 16,
        },
    ),
    (
        {"arch": "mha", "gpu": "rocm", "kv_cache_dtype": "auto", "topk": "", "page_size": ""},
        {"attention_arch": "mha", "platform": "rocm", "kv_cache_dtype": "auto"},
    ),
    (
        {"arch": "mla", "gpu": "cuda-sm90", "kv_cache_dtype": "fp8_e4m3", "page_size": "64"},
        {
            "attention_arch": "mla",
            "platform": "cuda",
            "compute_capability": (9, 0),
            "kv_cache_dtype": "fp8_e4m3",
            "page_size": 64,
        },
    ),
]


def _chromium() -> Path:
    if CHROMIUM.is_file():
        return CHROMIUM
    message = (
        f"{CHROMIUM} is missing: install it with `apt-get install chromium fonts-noto-color-emoji`"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must provide the browser)")
    pytest.skip(message)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _chromium()
    site_dir = tmp_path_factory.mktemp("browser") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return site_dir


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
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
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A page plus every URL it requested and every uncaught script error."""

    def __init__(self, browser: Any, **context: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, **context)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def assert_local_only(self, *, tolerated: str | None = None) -> None:
        """No request left the machine; no script error except ones mentioning `tolerated`."""
        assert self.requests, "no request was recorded"
        remote = [
            url
            for url in self.requests
            if urlsplit(url).scheme not in LOCAL_SCHEMES
            and urlsplit(url).hostname not in LOCAL_HOSTS
        ]
        assert not remote, f"requests left the machine: {remote}"
        errors = [e for e in self.errors if tolerated is None or tolerated not in e]
        assert not errors, f"script errors: {errors}"


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    view = Watched(browser)
    try:
        yield view
    finally:
        view.context.close()


def _expected(report: Report) -> tuple[str, list[str]]:
    if not report.ok:
        verdict = "incompatible"
    elif report.warnings:
        verdict = "warnings"
    else:
        verdict = "compatible"
    ordered = [*report.errors, *report.warnings, *report.infos]
    return verdict, [finding.rule for finding in ordered]


def _shown_rows(page: Any) -> dict[str, tuple[str, list[str]]]:
    rows = page.eval_on_selector_all(
        "#compat-finder-results tr[data-backend]",
        """rows => rows.map(row => [
            row.dataset.backend,
            row.dataset.verdict,
            Array.from(row.querySelectorAll('.compat-finder-rule')).map(code => code.textContent),
        ])""",
    )
    shown = {name: (verdict, rules) for name, verdict, rules in rows}
    assert len(shown) == len(rows), "a backend appears twice"
    return shown


def _open_finder(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#compat-finder[data-ready='true']")
    page.wait_for_selector("#compat-finder-results tr[data-backend]")


def test_finder_shows_the_guards_verdict_for_every_backend(base_url: str, watched: Watched) -> None:
    page = watched.page
    _open_finder(page, f"{base_url}/finder/")
    initial = {axis.id: axis.initial for axis in finder_options()}
    for axis_id, value in initial.items():
        assert page.input_value(f"select[data-axis='{axis_id}']") == value
    assert initial["arch"] == "mla" and initial["kv_cache_dtype"] == "fp4_e2m1"

    checked_rules: set[str] = set()
    verdicts_seen: set[str] = set()
    previous = initial
    for menus, fields in SELECTIONS:
        wanted = {**initial, **menus}
        before = page.get_attribute("#compat-finder-results", "data-combination")
        for axis_id, value in wanted.items():
            page.select_option(f"select[data-axis='{axis_id}']", value)
        after = page.get_attribute("#compat-finder-results", "data-combination")
        assert after is not None and (after != before) == (wanted != previous)
        previous = wanted
        shown = _shown_rows(page)
        assert sorted(shown) == sorted(MATRIX.backend_names)
        for backend in MATRIX.backend_names:
            report = check(AttentionConfig(attention_backend=backend, **fields))
            expected = _expected(report)
            assert shown[backend] == expected, (menus, backend, shown[backend], expected)
            checked_rules.update(expected[1])
            verdicts_seen.add(expected[0])
    # The selections exercise every verdict and a good number of rules.
    assert verdicts_seen == {"compatible", "warnings", "incompatible"}
    assert len(checked_rules) >= 8, checked_rules

    # Glyphs are emoji characters in the DOM (the screenshot shows how they render).
    glyphs = page.eval_on_selector_all(
        ".compat-finder-verdict .compat-finder-glyph", "nodes => nodes.map(n => n.textContent)"
    )
    assert set(glyphs) <= {"\u2705", "\u26a0\ufe0f", "\u274c"} and glyphs

    # Back to the initial selection for the screenshot.
    for axis_id, value in initial.items():
        page.select_option(f"select[data-axis='{axis_id}']", value)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "finder.png"), full_page=True)
    watched.assert_local_only()


def test_finder_in_dark_mode(base_url: str, browser: Any) -> None:
    view = Watched(browser, color_scheme="dark")
    try:
        _open_finder(view.page, f"{base_url}/finder/")
        scheme = view.page.get_attribute("body", "data-md-color-scheme")
        assert scheme == "slate"
        colors = view.page.eval_on_selector(
            ".compat-finder-table td",
            "td => [getComputedStyle(td).color, getComputedStyle(document.body).backgroundColor]",
        )
        assert colors[0] != colors[1]
        ARTIFACTS.mkdir(exist_ok=True)
        view.page.screenshot(path=str(ARTIFACTS / "finder-dark.png"), full_page=True)
        view.assert_local_only()
    finally:
        view.context.close()


def test_finder_works_opened_from_disk(site: Path, watched: Watched) -> None:
    """The data is a script, not fetched JSON, so a site opened from file:// works too."""
    _open_finder(watched.page, (site / "finder" / "index.html").as_uri())
    assert len(_shown_rows(watched.page)) == len(MATRIX.backend_names)
    # Material's search runs in a worker that browsers refuse to start from file://.
    watched.assert_local_only(tolerated="/search/")


def test_matrix_tables_sort_on_header_click(base_url: str, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{base_url}/attention_backend/")
    table = page.locator("xpath=//h2[@id='mha-backends']/following::table[1]")
    rows = table.locator("tbody tr")
    expected_rows = len(MATRIX.table(Arch.MHA).rows)
    assert expected_rows == 13
    assert rows.count() == expected_rows

    def first_column() -> list[str]:
        return [text.strip() for text in rows.locator("td:first-child").all_inner_texts()]

    before = first_column()
    header = table.locator("th").first
    header.click()
    assert header.get_attribute("aria-sort") in ("ascending", "descending")
    after = first_column()
    assert after != before
    assert sorted(after) == sorted(before)
    assert after in (sorted(before, key=str.lower), sorted(before, key=str.lower, reverse=True))

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "matrix-page.png"), full_page=True)
    watched.assert_local_only()
