"""The built site in a real browser: the finder agrees with `check()`, tables sort, no CDN.

Builds the site with `mkdocs build --strict`, serves it on 127.0.0.1 and drives Debian's
Chromium through Playwright. Screenshots land in `tests/artifacts/` for a human to look at.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from finder_browser import (
    Watched,
    guard_row,
    menu,
    open_finder,
    select,
    shown_rows,
    switch_release,
)
from finder_menus import menu_fields
from finder_sample import DATA_BUDGET_BYTES, SAMPLE_MODELS, SAMPLE_RELEASES
from paths import ARTIFACTS

from compat import AttentionConfig, check
from compat.claim.baseline import MATRIX
from compat.inputs.config import speculation_with_topk
from compat.publish.finder import data_path
from compat.publish.finder_options import finder_backends, finder_options, opening_selection
from compat.releases import NEWEST, release_matrix
from compat.vocab.terms import Arch

pytestmark = [pytest.mark.browser, pytest.mark.slow]


# Each selection: the finder's menu values and the same inputs as AttentionConfig fields.
SELECTIONS: list[tuple[dict[str, str], dict[str, Any]]] = [
    (
        {"model": "mla", "gpu": "b200", "kv_cache_dtype": "fp4_e2m1"},
        {
            "attention_arch": "mla",
            "platform": "cuda",
            "compute_capability": (10, 0),
            "kv_cache_dtype": "fp4_e2m1",
        },
    ),
    (
        {
            "model": "mha",
            "gpu": "b200",
            "kv_cache_dtype": "fp4_e2m1",
            "topk": "2",
            "page_size": "16",
        },
        {
            "attention_arch": "mha",
            "platform": "cuda",
            "compute_capability": (10, 0),
            "kv_cache_dtype": "fp4_e2m1",
            **speculation_with_topk(2),
            "page_size": 16,
        },
    ),
    (
        {"model": "mha", "gpu": "mi300x", "kv_cache_dtype": "auto", "topk": "", "page_size": ""},
        {"attention_arch": "mha", "platform": "rocm", "kv_cache_dtype": "auto"},
    ),
    (
        {"model": "mla", "gpu": "h100", "kv_cache_dtype": "fp8_e4m3", "page_size": "64"},
        {
            "attention_arch": "mla",
            "platform": "cuda",
            "compute_capability": (9, 0),
            "kv_cache_dtype": "fp8_e4m3",
            "page_size": 64,
        },
    ),
]


def test_finder_shows_the_guards_verdict_for_every_backend(base_url: str, watched: Watched) -> None:
    page = watched.page
    open_finder(page, f"{base_url}/finder/")
    initial = {axis.id: axis.initial for axis in finder_options("0.5.7")}
    for axis_id, value in initial.items():
        assert page.input_value(menu(axis_id)) == value
    # The release opens on its computed selection, which 0.5.7 shares with the newest.
    assert initial == opening_selection("0.5.7") == opening_selection(NEWEST, SAMPLE_MODELS)

    checked_rules: set[str] = set()
    verdicts_seen: set[str] = set()
    previous = initial
    for menus, fields in SELECTIONS:
        wanted = {**initial, **menus}
        before = page.get_attribute("#compat-finder-results", "data-combination")
        select(page, wanted)
        after = page.get_attribute("#compat-finder-results", "data-combination")
        assert after is not None and (after != before) == (wanted != previous)
        previous = wanted
        shown = shown_rows(page)
        assert sorted(shown) == sorted(MATRIX.backend_names)
        for backend in MATRIX.backend_names:
            config = AttentionConfig(attention_backend=backend, sglang_version="0.5.7", **fields)
            expected = guard_row(check(config))
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
    select(page, initial)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "finder.png"), full_page=True)
    watched.assert_local_only()


NEWEST_SELECTIONS: list[dict[str, str]] = [
    {"model": "mla", "gpu": "b200", "kv_cache_dtype": "nvfp4", "page_size": "", "topk": ""},
    {"model": "mha", "gpu": "b200", "kv_cache_dtype": "nvfp4", "page_size": "16", "topk": "2"},
    {"model": "mha", "gpu": "h100", "kv_cache_dtype": "mxfp8", "page_size": "", "topk": "1"},
    {"model": "mla", "gpu": "mi300x", "kv_cache_dtype": "auto", "page_size": "64", "topk": ""},
]


def _kv_options(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "select[data-axis='kv_cache_dtype'] option", "nodes => nodes.map(n => n.value)"
    )


def test_the_release_menu_switches_the_option_space_and_the_verdicts(
    base_url: str, watched: Watched
) -> None:
    """Newest first and selected on load; switching loads that release's own file, whose KV
    dtypes, backends and verdicts are that release's."""
    page = watched.page
    open_finder(page, f"{base_url}/finder/", release=None)
    releases = page.eval_on_selector_all(
        "select[data-release] option", "nodes => nodes.map(n => n.value)"
    )
    assert releases == list(SAMPLE_RELEASES) and releases[0] == NEWEST
    assert page.input_value("select[data-release]") == NEWEST
    loaded = [url for url in watched.requests if "finder-data-" in url]
    opening = opening_selection(NEWEST, SAMPLE_MODELS)["model"]
    assert [urlsplit(url).path.rsplit("/", 1)[1] for url in loaded] == [
        data_path(NEWEST, opening).rsplit("/", 1)[1]
    ], "only the selected release and model's data loads on open"
    assert "nvfp4" in _kv_options(page) and "fp4_e2m1" not in _kv_options(page)
    for release, selections in (
        (NEWEST, NEWEST_SELECTIONS),
        ("0.5.7", [menus for menus, _ in SELECTIONS[:2]]),
    ):
        switch_release(page, release)
        kv = _kv_options(page)
        assert ("fp4_e2m1" in kv) == (release == "0.5.7")
        assert ("nvfp4" in kv) == (release != "0.5.7")
        initial = {axis.id: axis.initial for axis in finder_options(release)}
        for menus in selections:
            wanted = {**initial, **menus}
            select(page, wanted)
            shown = shown_rows(page)
            assert sorted(shown) == sorted(finder_backends(release))
            fields = menu_fields(wanted, release)
            for backend in shown:
                report = check(AttentionConfig(attention_backend=backend, **fields))
                assert shown[backend] == guard_row(report), (release, menus, backend)
            command = page.inner_text(".md-content .highlight code")
            # The command names the release once, so `compat check` gets the same verdicts.
            assert command.startswith(f"compat check --sglang-version {release} ")
            assert command.count("--sglang-version") == 1
    switch_release(page, NEWEST)
    initial = {axis.id: axis.initial for axis in finder_options(NEWEST)}
    # The newest release's pairs: fa4 prefill with each decode backend, as check() has them.
    pair = {**initial, "model": "mha"}
    select(page, pair)
    page.select_option("select[data-prefill]", label="fa4")
    shown = shown_rows(page)
    assert sorted(shown) == sorted(set(finder_backends(NEWEST)) - {"fa4"})
    for decode, row in shown.items():
        report = check(
            AttentionConfig(
                prefill_attention_backend="fa4",
                decode_attention_backend=decode,
                **menu_fields(pair, NEWEST),
            )
        )
        assert row == guard_row(report), decode
    page.select_option("select[data-prefill]", value="")
    # Where nothing passes (an MLA model, nvfp4, an H100), the newest release's fixes are
    # the guard's.
    hopper = {**initial, "model": "mla", "gpu": "h100", "kv_cache_dtype": "nvfp4"}
    select(page, hopper)
    fields = menu_fields(hopper, NEWEST)
    assert not any(
        check(AttentionConfig(attention_backend=b, **fields)).ok for b in finder_backends(NEWEST)
    )
    fixes = page.eval_on_selector_all(
        ".compat-finder-fix code", "nodes => nodes.map(n => n.textContent)"
    )
    suggestions = check(AttentionConfig(**fields)).suggestions
    assert fixes and fixes == [s.summary for s in suggestions[: len(fixes)]]
    select(page, initial)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "finder-newest.png"), full_page=True)
    watched.assert_local_only()


def test_finder_in_dark_mode(base_url: str, browser: Any) -> None:
    view = Watched(browser, color_scheme="dark")
    try:
        open_finder(view.page, f"{base_url}/finder/")
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
    open_finder(watched.page, (site / "finder" / "index.html").as_uri())
    assert len(shown_rows(watched.page)) == len(MATRIX.backend_names)
    # Material's search runs in a worker that browsers refuse to start from file://.
    watched.assert_local_only(tolerated="/search/")


def test_matrix_tables_sort_on_header_click(base_url: str, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{base_url}/attention_backend/")
    table = page.locator("xpath=//h2[@id='mha-backends']/following::table[1]")
    rows = table.locator("tbody tr")
    # The main page shows the newest release's tables.
    expected_rows = len(release_matrix(NEWEST).table(Arch.MHA).rows)
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


FA4_CASE = {
    "model": "mha", "gpu": "b200", "kv_cache_dtype": "fp4_e2m1", "page_size": "", "topk": ""
}  # fmt: skip
FA4_FIELDS: dict[str, Any] = {
    "sglang_version": "0.5.7",
    "attention_arch": "mha",
    "platform": "cuda",
    "compute_capability": (10, 0),
    "kv_cache_dtype": "fp4_e2m1",
}
PAYLOAD_BUDGET = DATA_BUDGET_BYTES
"""Bytes of one release's data file, pairs included (also gzipped: benchmarks/loop.py)."""
FIRST_VERDICT_BUDGET_MS = 100


def test_fa4_prefill_with_fp4_on_b200_lists_its_decode_partners(
    base_url: str, watched: Watched
) -> None:
    """PR #14467's headline question, answered in the browser as check() answers it."""
    page = watched.page
    open_finder(page, f"{base_url}/finder/")
    select(page, FA4_CASE)
    page.select_option("select[data-prefill]", label="fa4")
    assert page.get_attribute("#compat-finder-results", "data-prefill") == "fa4"
    shown = shown_rows(page)
    assert sorted(shown) == sorted(set(MATRIX.backend_names) - {"fa4"})
    passing = set()
    for decode, (verdict, rules) in shown.items():
        report = check(
            AttentionConfig(
                prefill_attention_backend="fa4", decode_attention_backend=decode, **FA4_FIELDS
            )
        )
        assert (verdict, rules) == guard_row(report), decode
        if report.ok:
            passing.add(decode)
        else:
            assert rules, f"{decode} is refused without a reason"
    assert passing and "trtllm_mha" not in passing
    # The page's pairing rule, and SGLang's own start-up refusal of the same pair.
    # One finding for the fact both state (one finding per fact).
    assert "kv4-fa4-decode-partner" in shown["trtllm_mha"][1]
    # Passing partners come first, and the command names the first of them.
    order = page.eval_on_selector_all(
        "#compat-finder-results tr[data-backend]", "rows => rows.map(r => r.dataset.backend)"
    )
    assert set(order[: len(passing)]) == passing
    command = page.inner_text(".md-content .highlight code")
    assert f"--prefill-attention-backend fa4 --decode-attention-backend {order[0]}" in command
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "finder-fa4-pairs.png"), full_page=True)
    watched.assert_local_only()


def test_the_command_is_ready_to_paste_and_has_a_copy_button(
    base_url: str, watched: Watched
) -> None:
    page = watched.page
    open_finder(page, f"{base_url}/finder/")
    select(page, {"model": "mla", "gpu": "b200", "kv_cache_dtype": "fp4_e2m1"})
    command = page.inner_text(".md-content .highlight code").strip()
    assert "NAME" not in command and command.startswith("compat check ")
    # The verdicts are those of the selected release: the command names it first, so it
    # gets the same ones.
    assert command.startswith("compat check --sglang-version 0.5.7 ")
    first = page.eval_on_selector(
        "#compat-finder-results tr[data-backend]", "row => row.dataset.backend"
    )
    assert command.endswith(f"--attention-backend {first}")
    # SGLang's default for this selection leads the compatible rows.
    unset = check(
        AttentionConfig(
            sglang_version="0.5.7",
            attention_arch="mla",
            platform="cuda",
            compute_capability=(10, 0),
            kv_cache_dtype="fp4_e2m1",
        )
    )
    assert first == unset.resolved.decode_backend and unset.ok
    assert page.locator(".md-content .highlight [data-clipboard-target]").count() == 1
    result = subprocess.run(
        [sys.executable, "-m", "compat", *shlex.split(command)[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nothing_passes_shows_checked_multi_flag_fixes(base_url: str, watched: Watched) -> None:
    page = watched.page
    open_finder(page, f"{base_url}/finder/")
    select(
        page,
        {
            "model": "mla",
            "gpu": "b200",
            "kv_cache_dtype": "fp4_e2m1",
            "page_size": "64",
            "topk": "4",
        },
    )
    fixes = page.eval_on_selector_all(
        ".compat-finder-fix code", "nodes => nodes.map(n => n.textContent)"
    )
    unset = check(
        AttentionConfig(
            sglang_version="0.5.7",
            attention_arch="mla",
            platform="cuda",
            compute_capability=(10, 0),
            kv_cache_dtype="fp4_e2m1",
            page_size=64,
            **speculation_with_topk(4),
        )
    )
    assert fixes and fixes == [s.summary for s in unset.suggestions[: len(fixes)]]
    assert any(s.changes >= 2 for s in unset.suggestions[: len(fixes)])


def test_phone_layout_keeps_the_reasons_on_screen(base_url: str, browser: Any) -> None:
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 390, "height": 844})
        open_finder(page, f"{base_url}/finder/")
        widths = page.evaluate(
            """() => {
                const results = document.getElementById('compat-finder-results');
                const reasons = Array.from(results.querySelectorAll('.compat-finder-reasons'));
                return {
                    page: document.documentElement.scrollWidth,
                    results: [results.scrollWidth, results.clientWidth],
                    rightmost: Math.max(...reasons.map(r => r.getBoundingClientRect().right)),
                };
            }"""
        )
        assert widths["page"] <= 390, widths
        assert widths["results"][0] <= widths["results"][1], widths
        assert widths["rightmost"] <= 390, widths
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "finder-390px.png"), full_page=True)
        view.assert_local_only()
    finally:
        view.context.close()


def test_payload_size_and_first_verdict(base_url: str, site: Path, watched: Watched) -> None:
    """Each release and model's data, pairs included, within budget; a verdict soon after
    load; a model's data loads when it is picked."""
    files = {data_path(r, m).rsplit("/", 1)[1]: data_path(r, m) for r in SAMPLE_RELEASES
             for m in SAMPLE_MODELS}  # fmt: skip
    payloads = {name: (site / path).stat().st_size for name, path in files.items()}
    page = watched.page
    sizes: dict[str, int] = {}

    def record(response: Any) -> None:
        if "finder-data-" in response.url:
            sizes[urlsplit(response.url).path.rsplit("/", 1)[1]] = len(response.body())

    page.on("response", record)
    timings = []
    for _ in range(3):
        page.goto(f"{base_url}/finder/")
        page.wait_for_selector("#compat-finder[data-ready='true']")
        first = float(page.get_attribute("#compat-finder-results", "data-first-verdict-ms") or "")
        loaded = page.evaluate(
            "performance.getEntriesByType('navigation')[0].domContentLoadedEventStart"
        )
        timings.append(first - loaded)
    for release in SAMPLE_RELEASES:
        switch_release(page, release)
        for model in SAMPLE_MODELS:
            select(page, {"model": model})
    assert sizes == payloads
    assert max(payloads.values()) <= PAYLOAD_BUDGET, payloads
    best = min(timings)
    report = (
        "finder payload per release and model: "
        + ", ".join(f"{r} {size} bytes" for r, size in payloads.items())
        + f"; first verdict {best:.0f} ms after DOMContentLoaded fired"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "finder-metrics.txt").write_text(report + f" (runs: {timings})\n")
    # Each load shows its first verdict once the page is there (the finder starts when
    # DOMContentLoaded fires, its handlers may still be running); how soon is a budget
    # (FIRST_VERDICT_BUDGET_MS), measured by benchmarks/loop.py rather than asserted here.
    assert len(timings) == 3 and all(t >= 0 for t in timings), report


def test_tables_fit_a_1400_px_window(base_url: str, browser: Any) -> None:
    """Every column of every table on the backend page, the hardware table's Note included,
    is on screen at 1400 px without scrolling the table."""
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"{base_url}/attention_backend/")
        tables = page.evaluate(
            """() => Array.from(document.querySelectorAll('.md-typeset table')).map(t => {
                const last = t.querySelector('thead th:last-child');
                return {
                    first: t.querySelector('th').textContent,
                    lastHeader: last.textContent,
                    lastRight: last.getBoundingClientRect().right,
                    width: t.scrollWidth,
                    room: t.parentElement.clientWidth,
                };
            })"""
        )
        assert len(tables) >= 7
        for table in tables:
            assert table["width"] <= table["room"], table
            assert table["lastRight"] <= 1400, table
        hardware = page.locator("xpath=//h2[@id='hardware-requirements']/following::table[1]")
        assert hardware.locator("thead th").last.inner_text() == "Note"
        hardware.scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "hardware-1400px.png"))
        view.assert_local_only()
    finally:
        view.context.close()


# -- issue #22: what an operator sees at 1400 and 390 px ----------------------------------


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )  # fmt: skip


@pytest.mark.parametrize("width", [1400, 390])
def test_finder_copy_button_keeps_clear_of_the_command_text(
    base_url: str, browser: Any, width: int
) -> None:
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": width, "height": 900 if width > 500 else 844})
        # The longest command the menus make: the newest release, a pair, every flag.
        open_finder(page, f"{base_url}/finder/", release=None)
        select(page, {"model": "mla", "gpu": "b200", "kv_cache_dtype": "nvfp4", "topk": "4"})
        page.hover(".md-content .highlight")  # Material shows the button on hover
        boxes = page.evaluate(
            """() => {
                const code = document.querySelector('.md-content .highlight code');
                const button = document.querySelector(
                    '.md-content .highlight [data-clipboard-target]');
                const range = document.createRange();
                range.selectNodeContents(code);
                const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
                const style = getComputedStyle(code);
                return {
                    button: box(button.getBoundingClientRect()),
                    text: Array.from(range.getClientRects()).filter(r => r.width > 0).map(box),
                    // Where a line of text may reach, whatever the command's words.
                    textRight: code.getBoundingClientRect().right - parseFloat(style.paddingRight),
                };
            }"""
        )
        assert boxes["text"], boxes
        assert not [t for t in boxes["text"] if _overlaps(t, boxes["button"])], boxes
        assert boxes["textRight"] <= boxes["button"]["left"], boxes
        ARTIFACTS.mkdir(exist_ok=True)
        # Hovering scrolled the block into view: Material's header then swaps the site name
        # for the page title with a short transition. Shoot the header at rest, as read.
        page.wait_for_timeout(600)
        page.screenshot(path=str(ARTIFACTS / f"finder-{width}px-top.png"))
    finally:
        view.context.close()


def test_finder_form_starts_above_the_fold_at_390_px(base_url: str, browser: Any) -> None:
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 390, "height": 844})
        open_finder(page, f"{base_url}/finder/", release=None)
        top = page.evaluate("document.getElementById('compat-finder').getBoundingClientRect()")
        # The form begins on the first screen, its first menu wholly visible.
        first = page.evaluate(
            "document.querySelector('#compat-finder select').getBoundingClientRect().bottom"
        )
        assert top["top"] < 844 and first < 844, (top, first)
    finally:
        view.context.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_backend_page_links_to_the_finder_and_shows_the_navigation(
    base_url: str, browser: Any, width: int
) -> None:
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": width, "height": 900 if width > 500 else 844})
        page.goto(f"{base_url}/attention_backend/")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"backend-{width}px-top.png"))
        if width > 1220:  # Material shows the navigation column from 76.25em
            nav = page.locator(".md-sidebar--primary")
            assert nav.is_visible()
            assert nav.locator("a", has_text="Compatibility finder").count() >= 1
        link = page.locator(".md-content a", has_text="compatibility finder").first
        assert link.is_visible()
        link.click()
        page.wait_for_selector("#compat-finder[data-ready='true']")
        assert urlsplit(page.url).path.rstrip("/").endswith("/finder")
        view.assert_local_only()
    finally:
        view.context.close()


def _run_command(command: str) -> subprocess.CompletedProcess[str]:
    """The page's command, as a reader pastes it (`compat check ...`)."""
    words = shlex.split(command)
    assert words[:2] == ["compat", "check"], command
    return subprocess.run(
        [sys.executable, "-m", "compat", *words[1:]], capture_output=True, text=True, timeout=120
    )


def test_the_model_menu_applies_each_models_own_start_up_rules(
    base_url: str, watched: Watched
) -> None:
    """Issue 22's model menu: gpt-oss on B200 gets SGLang's GPT-OSS branch (flashinfer
    refused, trtllm_mha its default), as `compat check --model gpt-oss-120b` has it; the
    page's command is that command and passes. DeepSeek V3.2 with an nvfp4 cache on B200:
    nothing passes, and the page sends the reader to the command, which prints the fixes."""
    page = watched.page
    open_finder(page, f"{base_url}/finder/", release=None)
    labels = page.eval_on_selector_all(
        "select[data-model] option", "nodes => nodes.map(n => n.textContent)"
    )
    assert labels[:2] == ["any MHA model", "any MLA model"]
    assert "gpt-oss-120b" in labels
    menus = {"model": "gpt-oss-120b", "gpu": "b200", "kv_cache_dtype": "auto", "page_size": ""}
    select(page, {**menus, "topk": ""})
    shown = shown_rows(page)
    assert shown["flashinfer"][0] == "incompatible"
    assert "startup-gpt-oss-backends" in shown["flashinfer"][1]
    fields = menu_fields({**menus, "topk": ""}, NEWEST)
    for backend, row in shown.items():
        assert row == guard_row(check(AttentionConfig(attention_backend=backend, **fields)))
    assert page.get_attribute("#compat-finder-results", "data-defaults") == "trtllm_mha trtllm_mha"
    command = page.inner_text(".md-content .highlight code").strip()
    assert "--model gpt-oss-120b" in command and command.endswith("--attention-backend trtllm_mha")
    passed = _run_command(command)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "#" in page.url and "model=gpt-oss-120b" in page.url
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "finder-gpt-oss.png"), full_page=True)

    select(page, {"model": "deepseek-v3.2-exp", "kv_cache_dtype": "nvfp4"})
    verdicts = {verdict for verdict, _ in shown_rows(page).values()}
    assert verdicts == {"incompatible"}
    note = page.inner_text(".compat-finder-fixes-intro")
    assert "The command below prints the fixes" in note
    assert page.locator(".compat-finder-fix").count() == 0
    command = page.inner_text(".md-content .highlight code").strip()
    assert "--model DeepSeek-V3.2-Exp" in command and "--kv-cache-dtype nvfp4" in command
    refused = _run_command(command)
    assert refused.returncode == 1 and "suggested flags" in refused.stdout, refused.stdout
    watched.assert_local_only()
