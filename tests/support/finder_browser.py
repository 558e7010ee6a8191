"""The built site in Chromium, for the browser tests: the browser, a watched page, and the
finder's menus and rows as the page shows them (`tests/publish/conftest.py` makes the
fixtures of these)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from compat import Report

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


def chromium() -> Path:
    if CHROMIUM.is_file():
        return CHROMIUM
    message = (
        f"{CHROMIUM} is missing: install it with `apt-get install chromium fonts-noto-color-emoji`"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must provide the browser)")
    pytest.skip(message)


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


def guard_row(report: Report) -> tuple[str, list[str]]:
    if not report.ok:
        verdict = "incompatible"
    elif report.warnings:
        verdict = "warnings"
    else:
        verdict = "compatible"
    ordered = [*report.errors, *report.warnings, *report.infos]
    return verdict, [finding.rule for finding in ordered]


def shown_rows(page: Any) -> dict[str, tuple[str, list[str]]]:
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


def open_finder(page: Any, url: str, release: str | None = "0.5.7") -> None:
    """Opens the finder; with `release`, switches to it (the tests' selections are 0.5.7's
    unless they say otherwise)."""
    page.goto(url)
    page.wait_for_selector("#compat-finder[data-ready='true']")
    page.wait_for_selector("#compat-finder-results tr[data-backend]")
    if release is not None:
        switch_release(page, release)


def switch_release(page: Any, release: str) -> None:
    page.select_option("select[data-release]", release)
    page.wait_for_selector(f"#compat-finder-results[data-release='{release}']")
    page.wait_for_selector("#compat-finder[data-ready='true']")


def menu(axis_id: str) -> str:
    """The selector of one menu: the model's has its own attribute (its data loads apart)."""
    return "select[data-model]" if axis_id == "model" else f"select[data-axis='{axis_id}']"


def select(page: Any, menus: dict[str, str]) -> None:
    """Picks `menus`, the model first: a model's data loads when it is first picked."""
    model = menus.get("model")
    if model is not None and page.input_value(menu("model")) != model:
        page.select_option(menu("model"), model)
        page.wait_for_selector(f"#compat-finder-results[data-model='{model}']")
        page.wait_for_selector("#compat-finder[data-ready='true']")
    for axis_id, value in menus.items():
        if axis_id != "model":
            page.select_option(menu(axis_id), value)
