"""Issue 44's finder in Chromium: it opens on a launch that passes, a GPU change moves a KV
dtype that cannot run there, other platforms' backends fold under one line, SGLang's two
default backends are told apart, and a phone shows the menus and tables whole."""

from __future__ import annotations

from typing import Any

import pytest
from finder_browser import Watched, menu, open_finder, select, shown_rows
from finder_menus import default_launch_passes, menu_fields
from finder_sample import SAMPLE_MODELS

from compat import AttentionConfig, check
from compat.publish.finder_options import finder_backends, finder_options, opening_selection
from compat.releases import NEWEST, release_matrix
from compat.vocab.terms import Platform

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _compatible(page: Any) -> list[str]:
    return [name for name, (verdict, _) in shown_rows(page).items() if verdict == "compatible"]


def test_the_finder_opens_on_a_passing_launch_and_h100_too(base_url: str, watched: Watched) -> None:
    """No URL hash: the computed opening (newest release, first model and GPU of the menus
    whose default launch passes), at least one compatible row, SGLang's default among them;
    on an H100, still at least one."""
    page = watched.page
    page.goto(f"{base_url}/finder/")
    page.wait_for_selector("#compat-finder[data-ready='true']")
    opening = opening_selection(NEWEST, SAMPLE_MODELS)
    assert page.input_value("select[data-release]") == NEWEST
    for axis_id, value in opening.items():
        assert page.input_value(menu(axis_id)) == value, axis_id
    compatible = _compatible(page)
    assert compatible, page.inner_text(".compat-finder-summary")
    defaults = set((page.get_attribute("#compat-finder-results", "data-defaults") or "").split())
    assert defaults and defaults <= set(compatible)
    assert not page.inner_text(".compat-finder-summary").startswith("\u2705 0 ")
    page.select_option(menu("gpu"), "h100")
    page.wait_for_function(
        "document.getElementById('compat-finder-results').dataset.combination !== undefined"
    )
    assert _compatible(page), page.inner_text("#compat-finder-results")
    watched.assert_local_only()


def test_a_gpu_that_cannot_run_the_kv_dtype_moves_it(base_url: str, watched: Watched) -> None:
    """nvfp4 on a B200, then an H100, where no backend runs it: the dtype moves to the first
    (menu order) on which SGLang's default launch passes on the H100, and the page says so."""
    page = watched.page
    open_finder(page, f"{base_url}/finder/", release=None)
    select(page, {"model": "mla", "gpu": "b200", "kv_cache_dtype": "nvfp4"})
    assert page.locator(".compat-finder-followed").count() == 0
    page.select_option(menu("gpu"), "h100")
    dtypes = [o.value for o in finder_options(NEWEST)[2].options]
    values = {"model": "mla", "gpu": "h100", "page_size": "", "topk": ""}
    expected = next(
        d for d in dtypes if default_launch_passes({**values, "kv_cache_dtype": d}, NEWEST)
    )
    assert page.input_value(menu("kv_cache_dtype")) == expected
    note = page.locator(".compat-finder-followed")
    assert note.get_attribute("data-from") == "nvfp4" and note.get_attribute("data-to") == expected
    assert "nvfp4" in note.inner_text() and expected in note.inner_text()
    assert _compatible(page)
    # The shown rows are the guard's for the moved dtype.
    fields = menu_fields({**values, "kv_cache_dtype": expected}, NEWEST)
    for backend, (verdict, _) in shown_rows(page).items():
        report = check(AttentionConfig(attention_backend=backend, **fields))
        assert verdict == ("incompatible" if not report.ok else
                           "warnings" if report.warnings else "compatible"), backend  # fmt: skip
    # Picking the dtype by hand again is the reader's choice: no note, nothing moves.
    page.select_option(menu("kv_cache_dtype"), "nvfp4")
    assert page.locator(".compat-finder-followed").count() == 0
    assert page.input_value(menu("kv_cache_dtype")) == "nvfp4"
    assert not _compatible(page)
    watched.assert_local_only()


def test_two_default_backends_are_tagged_by_phase(base_url: str, watched: Watched) -> None:
    """Where SGLang picks one backend per phase, each row's tag names its phase: never two
    rows tagged "default"."""
    page = watched.page
    open_finder(page, f"{base_url}/finder/", release=None)
    menus = {"model": "mla", "gpu": "h100", "kv_cache_dtype": "nvfp4", "page_size": "", "topk": ""}
    select(page, menus)
    resolved = check(AttentionConfig(**menu_fields(menus, NEWEST))).resolved
    assert resolved.prefill_backend != resolved.decode_backend  # the case this test is about
    tags = dict(
        page.eval_on_selector_all(
            "#compat-finder-results tr[data-backend]",
            """rows => rows.map(r => [r.dataset.backend, r.querySelector('.compat-finder-default')])
                .filter(([, tag]) => tag).map(([name, tag]) => [name, tag.textContent])""",
        )
    )
    assert tags == {
        resolved.prefill_backend: "default prefill",
        resolved.decode_backend: "default decode",
    }
    # One backend for both phases: one row, tagged "default".
    select(page, {"kv_cache_dtype": "auto"})
    defaults = page.locator(".compat-finder-default")
    assert defaults.count() == 1 and defaults.inner_text() == "default"
    watched.assert_local_only()


def test_other_platforms_backends_fold_under_one_line(base_url: str, browser: Any) -> None:
    """On a CUDA GPU, ROCm's, Intel's and Ascend's backends are one closed line, "not for
    this platform (N)", N computed from the matrix; the page is the shorter for it."""
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 1400, "height": 900})
        open_finder(page, f"{base_url}/finder/", release=None)
        select(page, {"gpu": "b200"})
        matrix = release_matrix(NEWEST)
        foreign = [
            b for b in finder_backends(NEWEST) if not matrix.backend(b).runs_on(Platform.CUDA)
        ]
        assert {"aiter", "wave", "intel_amx", "ascend"} <= set(foreign)
        fold = page.locator("#compat-finder-results details.compat-finder-foreign")
        assert fold.count() == 1 and fold.get_attribute("open") is None
        assert fold.locator("summary").inner_text() == f"not for this platform ({len(foreign)})"
        folded = fold.locator("tr[data-backend]").evaluate_all(
            "rs => rs.map(r => r.dataset.backend)"
        )
        assert sorted(folded) == sorted(foreign)
        outside = page.eval_on_selector_all(
            "#compat-finder-results > .compat-finder-scroll tr[data-backend]",
            "rs => rs.map(r => r.dataset.backend)",
        )
        assert not set(outside) & set(foreign) and len(outside) + len(folded) == len(
            finder_backends(NEWEST)
        )
        height = page.evaluate("document.documentElement.scrollHeight")
        fold.locator("summary").click()
        opened = page.evaluate("document.documentElement.scrollHeight")
        assert height < opened, (height, opened)
        print(f"finder page at 1400 px: {height} px tall, {opened} px with the fold open")
        # On an AMD GPU, the CUDA backends are the ones folded.
        select(page, {"gpu": "mi300x"})
        summary = page.locator("details.compat-finder-foreign summary").inner_text()
        rocm = [b for b in finder_backends(NEWEST) if not matrix.backend(b).runs_on(Platform.ROCM)]
        assert summary == f"not for this platform ({len(rocm)})" and "flashinfer" in rocm
        view.assert_local_only()
    finally:
        view.context.close()


_TEXT_ROOM = """sel => {
    const style = getComputedStyle(sel);
    const context = document.createElement('canvas').getContext('2d');
    context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const text = sel.options[sel.selectedIndex].text;
    // The menu's arrow takes about 1.2em on the right.
    const room = sel.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
        - 1.2 * parseFloat(style.fontSize);
    return [text, context.measureText(text).width, room];
}"""


def test_a_phone_shows_the_model_menu_whole(base_url: str, browser: Any) -> None:
    """At 390 px every model's label fits its menu; the architecture it is judged as is
    the note under the menu."""
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 390, "height": 844})
        open_finder(page, f"{base_url}/finder/", release=None)
        for option in finder_options(NEWEST)[0].options:
            if option.value not in SAMPLE_MODELS:
                continue
            select(page, {"model": option.value})
            text, width, room = page.eval_on_selector(menu("model"), _TEXT_ROOM)
            assert text == option.label and width <= room, (text, width, room)
            assert page.inner_text("[data-model-note]") == option.note
            box = page.eval_on_selector("[data-model-note]", "n => n.getBoundingClientRect().right")
            assert box <= 390
        view.assert_local_only()
    finally:
        view.context.close()


def test_a_phone_keeps_the_backend_column_of_a_wide_table(base_url: str, browser: Any) -> None:
    """At 390 px the backend page's tables scroll sideways with their backend column fixed."""
    view = Watched(browser)
    try:
        page = view.page
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{base_url}/attention_backend/")
        scrolled = page.evaluate(
            """() => Array.from(document.querySelectorAll('.md-typeset__scrollwrap'))
                .filter(wrap => wrap.scrollWidth > wrap.clientWidth + 1)
                .map(wrap => {
                    wrap.scrollLeft = wrap.scrollWidth;
                    const cell = wrap.querySelector('tbody tr td:first-child');
                    const head = wrap.querySelector('thead th:first-child');
                    return {
                        header: head.textContent,
                        scrolled: wrap.scrollLeft,
                        cell: cell.getBoundingClientRect().left,
                        right: cell.getBoundingClientRect().right,
                        wrap: wrap.getBoundingClientRect().left,
                    };
                })"""
        )
        assert len(scrolled) >= 2, scrolled  # the MHA and MLA tables at least
        for table in scrolled:
            assert table["scrolled"] > 0, table
            assert abs(table["cell"] - table["wrap"]) <= 1 and table["right"] <= 390, table
        assert "Backend" in [t["header"] for t in scrolled]
        view.assert_local_only()
    finally:
        view.context.close()
