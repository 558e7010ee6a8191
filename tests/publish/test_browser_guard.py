"""Every combination the finder's menus offer, in Chromium, against `check()`.

The issue's proof that the browser's answer is the guard's: both architectures of the newest
release and 0.5.7 in full, a sample of the other releases and models. A module of its own,
so that it runs beside the other browser tests (`tests/publish/conftest.py` builds each
module its site and browser).
"""

from __future__ import annotations

import gc
import json
import os
from typing import Any

import pytest
from finder_browser import Watched, guard_row, open_finder, select, switch_release
from finder_menus import menu_fields
from finder_sample import SAMPLE_MODELS, SAMPLE_RELEASES
from paths import ARTIFACTS

from compat import AttentionConfig, check
from compat.inputs.config import replaced
from compat.publish.finder_options import finder_backends
from compat.releases import NEWEST

pytestmark = [pytest.mark.browser, pytest.mark.slow]


_DRIVE = """([combos]) => {
    const form = document.getElementById('compat-finder');
    const results = document.getElementById('compat-finder-results');
    const selects = {};
    form.querySelectorAll('select[data-axis]').forEach(s => { selects[s.dataset.axis] = s; });
    const prefill = form.querySelector('select[data-prefill]');
    // One JSON string: Playwright's own transfer of a value this large (a batch's rows)
    // cost twice the page's work.
    return JSON.stringify(combos.map(([menus, pair]) => {
        // The model's menu is not driven here: its data is the one loaded (the test says).
        for (const [axis, value] of Object.entries(menus)) {
            if (axis !== 'model') selects[axis].value = value;
        }
        const option = Array.from(prefill.options).find(o => o.textContent === pair);
        prefill.value = option ? option.value : '';
        prefill.dispatchEvent(new Event('change'));
        return [
            Array.from(results.querySelectorAll('tr[data-backend]')).map(row => [
                row.dataset.backend,
                row.dataset.verdict,
                Array.from(row.querySelectorAll('.compat-finder-rule')).map(c => c.textContent),
            ]),
            Array.from(results.querySelectorAll('.compat-finder-refused [data-rule]'))
                .map(item => item.dataset.rule),
            results.dataset.defaults,
            results.dataset.prefill,
        ];
    }));
}"""


def _menus_offered(page: Any) -> dict[str, list[str]]:
    """Every value of every menu, as the page offers it."""
    return page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll(
            '#compat-finder select[data-axis]')).map(s => [
                s.dataset.axis, Array.from(s.options).map(o => o.value)]))"""
    )


def _guard_answers(job: tuple[str, dict[str, str], str]) -> tuple[Any, ...]:
    """What check() says for one selection: each row's verdict and rules, SGLang's default."""
    release, menus, pair = job
    fields = menu_fields(menus, release)
    selected = AttentionConfig(**fields)
    unset = check(selected).resolved
    rows: dict[str, tuple[str, list[str]]] = {}
    errors: list[set[str]] = []
    # Each row's configuration is the selection's with its backends set: a copy that
    # `replaced` checks for the backends alone (as the finder's own fix search builds them).
    for backend in finder_backends(release):
        if not pair:
            config = replaced(selected, attention_backend=backend)
        elif backend != pair:
            config = replaced(
                selected, prefill_attention_backend=pair, decode_attention_backend=backend
            )
        else:
            continue
        report = check(config)
        rows[backend] = guard_row(report)
        errors.append({finding.rule for finding in report.errors})
    defaults = f"{unset.prefill_backend or ''} {unset.decode_backend or ''}"
    return rows, errors, defaults


def _selections(release: str, offered: dict[str, list[str]], sample: int | None) -> list[Any]:
    import itertools
    import random

    axes = list(offered)
    every = [
        (dict(zip(axes, values, strict=True)), pair)
        for values in itertools.product(*(offered[axis] for axis in axes))
        for pair in ("", "fa4")
    ]
    if sample is None:
        return every
    return random.Random(release).sample(every, sample)


EVERY_SELECTION = [
    *((release, model, None) for release in (NEWEST, "0.5.7") for model in ("mha", "mla")),
    (SAMPLE_RELEASES[1], "mla", 400),
    *((release, model, 300) for release in SAMPLE_RELEASES for model in SAMPLE_MODELS[2:]),
]
"""(release, model, sample): both architectures of the newest release and 0.5.7 in full,
one architecture of the middle release and each named model of the sample sampled."""


@pytest.mark.parametrize(("release", "model", "sample"), EVERY_SELECTION)
def test_every_selection_in_the_browser_is_the_guards_answer(
    base_url: str, watched: Watched, release: str, model: str, sample: int | None
) -> None:
    """Every combination the menus offer (GPU by GPU, with and without the fa4 prefill),
    as the page shows it: each row's verdict and rule ids, and SGLang's default backends,
    equal check()'s (for a named model, check() of `from_known_model`, as `compat check
    --model NAME` judges it)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    page = watched.page
    open_finder(page, f"{base_url}/finder/", release=None)
    switch_release(page, release)
    select(page, {"model": model})
    selections = _selections(release, _menus_offered(page), sample)
    selections = [({"model": model, **menus}, pair) for menus, pair in selections]
    shown: list[Any] = []
    for start in range(0, len(selections), 500):
        shown += json.loads(page.evaluate(_DRIVE, [selections[start : start + 500]]))
    assert page.get_attribute("#compat-finder-results", "data-model") == model
    jobs = [(release, menus, pair) for menus, pair in selections]
    # Selections that differ only by a GPU of the same class are the same configuration:
    # check() each once, side by side on every core.
    first: dict[Any, tuple[str, dict[str, str], str]] = {}
    for job in jobs:
        first.setdefault(_key_of(job), job)
    # The workers fork from the test session, whose every object a full collection would
    # walk: the guard's records hold no cycles, so its cyclic collector is only cost there.
    with ProcessPoolExecutor(
        os.cpu_count(), mp_context=multiprocessing.get_context("fork"), initializer=gc.disable
    ) as pool:
        found = pool.map(_guard_answers, list(first.values()), chunksize=64)
        answers = dict(zip(first, found, strict=True))
    compared = 0
    for job, (rows, refused, defaults, pair) in zip(jobs, shown, strict=True):
        expected_rows, errors, expected_defaults = answers[_key_of(job)]
        assert pair == job[2], job
        if job[2] and refused:
            # The prefill backend is refused whatever the partner: the page shows the
            # errors every pair shares, and every pair is refused.
            assert rows == [] and all(set(refused) <= e for e in errors), job
            assert all(verdict == "incompatible" for verdict, _ in expected_rows.values())
            compared += len(expected_rows)
            continue
        assert {name: (v, r) for name, v, r in rows} == expected_rows, job
        assert len(rows) == len(expected_rows), job
        if not job[2]:
            assert defaults == expected_defaults, job
        compared += len(rows)
    # Every selection compared a row per backend (but the fa4 prefill's own column).
    assert compared >= len(selections) * (len(finder_backends(release)) - 1)
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "finder-equals-guard.txt").open("a", encoding="utf-8") as log:
        log.write(
            f"{release} {model}: {len(selections)} selections, {compared} rows equal check()\n"
        )
    watched.assert_local_only()


def _gpu_class(value: str) -> tuple[str, Any]:
    from compat.inputs.gpus import find_gpu

    gpu = find_gpu(value.replace("-", " "))
    assert gpu is not None, value
    return gpu.platform.value, gpu.capability


def _rest(menus: dict[str, str]) -> tuple[str, ...]:
    return (menus["kv_cache_dtype"], menus["page_size"], menus["topk"])


def _key_of(job: tuple[str, dict[str, str], str]) -> tuple[Any, ...]:
    _, menus, pair = job
    return (menus["model"], _gpu_class(menus["gpu"]), *_rest(menus), pair)
