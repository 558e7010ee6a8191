"""The maintainer's loop, measured side by side in one run: the site, the finder, the tests.

Run from the repository root after the README's test set-up:

    python benchmarks/loop.py                 # site builds, finder data and browser, proof
    python benchmarks/loop.py --tests         # also `python -m pytest` and its fast tier
    python benchmarks/loop.py --tests --ci    # also `.ci/run` in a fresh clone
    python benchmarks/loop.py --no-budgets    # report, but exit 0 when a budget is missed
    python benchmarks/loop.py --all-releases  # sites offering every release (default: the
                                              # tests' sample, tests/support/finder_sample.py)

Every figure is wall-clock time on this machine, measured in this run: a budget relative to
a one-page Material site's build uses that build's median from the same run, measured
between the site's builds. It prints the date and the machine, then one line per figure
with its budget; it exits 1 when a budget is missed or a command fails.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT / "tests" / "support", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The consistency proof is about the PR #14467 baseline, which SGLang 0.5.7 shipped (as in
# the tests and benchmarks/run.py).
os.environ.setdefault("COMPAT_SGLANG_VERSION", "0.5.7")

from finder_sample import (  # noqa: E402 (tests/support is on the path above)
    DATA_BUDGET_BYTES,
    DATA_BUDGET_GZIP_BYTES,
    sample_env,
)
from machine import machine, pace  # noqa: E402 (benchmarks/, this script's folder)
from sample_site import served  # noqa: E402

from compat.publish.finder_options import MODELS_VARIABLE, RELEASES_VARIABLE  # noqa: E402

BUILD_NO_CACHE_RATIO = 5.0
BUILD_CACHED_RATIO = 2.0
DATA_BYTES = DATA_BUDGET_BYTES
DATA_GZIP_BYTES = DATA_BUDGET_GZIP_BYTES
FIRST_VERDICT_MS = 100.0
SWITCH_MS = 100.0
PYTEST_S = 240.0
FAST_TIER_S = 60.0
CI_S = 720.0
PROOF_S = 10.0
FAST_TIER = "not slow"
"""The fast tier's marker expression (`python -m pytest -m "not slow"`)."""


@dataclass(frozen=True)
class Figure:
    label: str
    value: str
    budget: str
    ok: bool | None
    """None: a figure without a budget."""


def print_figures(figures: Sequence[Figure], budget_width: int = 28) -> list[str]:
    """One line per figure with its budget and verdict, then the budgets' summary; the
    labels of the figures that missed theirs."""
    width = max(len(f.label) for f in figures)
    for f in figures:
        verdict = "" if f.ok is None else "PASS" if f.ok else "FAIL"
        print(f"{f.label:<{width}}  {f.value:<38}  {f.budget:<{budget_width}}  {verdict}")
    missed = [f.label for f in figures if f.ok is False]
    print("budgets: " + ("all met" if not missed else "missed: " + "; ".join(missed)))
    return missed


def timed(command: Sequence[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    """Wall-clock seconds of `command`; SystemExit naming it if it fails."""
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-2000:]
        raise SystemExit(f"{' '.join(command)} failed (exit {result.returncode}):\n{tail}")
    return seconds


def mkdocs(config: Path, site: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "-q",
        "-f",
        str(config),
        "-d",
        str(site),
    ]


def trivial_project(where: Path) -> Path:
    """A one-page Material site, themed as ours (no web fonts)."""
    (where / "docs").mkdir(parents=True)
    (where / "docs" / "index.md").write_text("# One page\n\nHello.\n", encoding="utf-8")
    config = where / "mkdocs.yml"
    config.write_text("site_name: one page\ntheme:\n  name: material\n  font: false\n")
    return config


def site_builds(work: Path, env: dict[str, str], runs: int) -> tuple[list[Figure], Path]:
    """The site without the build cache (`COMPAT_CACHE_DIR` emptied) and with it, each next to
    the one-page site."""
    trivial = trivial_project(work / "trivial")
    cache = work / "cache"
    ours = ROOT / "mkdocs.yml"
    site = work / "site"
    base: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    for run in range(runs):
        base.append(timed(mkdocs(trivial, work / "trivial-site"), env))
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(timed(mkdocs(ours, site), {**env, "COMPAT_CACHE_DIR": str(cache)}))
        base.append(timed(mkdocs(trivial, work / "trivial-site"), env))
        warm.append(timed(mkdocs(ours, site), {**env, "COMPAT_CACHE_DIR": str(cache)}))
        print(
            f"  build round {run + 1}: one page {base[-1]:.2f} s, "
            f"no cache {cold[-1]:.1f} s, cache {warm[-1]:.2f} s",
            flush=True,
        )
    one = statistics.median(base)
    figures = [Figure("one-page Material site: mkdocs build --strict", f"{one:.2f} s", "", None)]
    offered = f"{env.get(RELEASES_VARIABLE) or 'all'}; models: {env.get(MODELS_VARIABLE) or 'all'}"
    for label, times, ratio in (
        (f"site build without the build cache (releases: {offered})", cold, BUILD_NO_CACHE_RATIO),
        # The cache directory holds the finder's data, the converted pages and the record
        # of the pages found fresh (compat/publish/finder_cache.py, page_cache.py, verified.py).
        ("site build with the build cache", warm, BUILD_CACHED_RATIO),
    ):
        seconds = statistics.median(times)
        figures.append(
            Figure(
                label,
                f"{seconds:.2f} s = {seconds / one:.1f}x one page",
                f"<= {ratio:g}x",
                seconds <= ratio * one,
            )
        )
    return figures, site


def data_sizes(site: Path) -> list[Figure]:
    from compat.publish.finder import data_path
    from compat.publish.finder_options import offered_models, offered_releases

    sizes = {}
    for release in offered_releases():
        for model in offered_models():
            raw = (site / data_path(release, model)).read_bytes()
            sizes[f"{release} {model}"] = (len(raw), len(gzip.compress(raw, 9)))
    largest = max(sizes, key=lambda r: sizes[r][0])
    raw, packed = sizes[largest]
    total = sum(s for s, _ in sizes.values())
    fits = all(s <= DATA_BYTES and g <= DATA_GZIP_BYTES for s, g in sizes.values())
    return [
        Figure(
            f"finder data per release and model ({len(sizes)} files, {total / 1000:.0f} KB in all)",
            f"largest {largest}: {raw / 1000:.0f} KB, {packed / 1000:.1f} KB gzipped",
            f"<= {DATA_BYTES // 1000} KB, {DATA_GZIP_BYTES // 1000} KB gzipped",
            fits,
        )
    ]


def browser(site: Path, loads: int) -> list[Figure]:
    """Cold loads of the finder in Chromium: the first verdict after DOMContentLoaded fires, and
    each switch to another release (its data loaded then) until its verdicts show."""
    from playwright.sync_api import sync_playwright

    from compat.publish.finder_options import offered_releases

    firsts: list[float] = []
    switches: list[float] = []
    releases = offered_releases()
    with served(site) as url, sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        for _ in range(loads):
            context = chromium.new_context()
            page = context.new_page()
            page.goto(f"{url}/finder/")
            page.wait_for_selector("#compat-finder[data-ready='true']")
            first = float(page.get_attribute("#compat-finder-results", "data-first-verdict-ms"))
            loaded = page.evaluate(
                "performance.getEntriesByType('navigation')[0].domContentLoadedEventStart"
            )
            firsts.append(first - loaded)
            context.close()
        page = chromium.new_page()
        page.goto(f"{url}/finder/")
        page.wait_for_selector("#compat-finder[data-ready='true']")
        for release in releases[1:]:
            started = page.evaluate(
                """release => {
                    const menu = document.querySelector('select[data-release]');
                    menu.value = release;
                    const now = performance.now();
                    menu.dispatchEvent(new Event('change'));
                    return now;
                }""",
                release,
            )
            page.wait_for_selector(f"#compat-finder-results[data-release='{release}']")
            page.wait_for_selector("#compat-finder[data-ready='true']")
            shown = float(page.get_attribute("#compat-finder-results", "data-shown-ms"))
            switches.append(shown - started)
        chromium.close()
    first, switch = statistics.median(firsts), statistics.median(switches)
    return [
        Figure(
            f"first verdict after DOMContentLoaded fired (median of {loads} cold loads)",
            f"{first:.0f} ms (max {max(firsts):.0f})",
            f"<= {FIRST_VERDICT_MS:g} ms",
            first <= FIRST_VERDICT_MS,
        ),
        Figure(
            f"release switch, data loaded on first use (median of {len(switches)})",
            f"{switch:.0f} ms (max {max(switches):.0f})",
            f"<= {SWITCH_MS:g} ms",
            switch <= SWITCH_MS,
        ),
    ]


def proof() -> list[Figure]:
    import consistency

    start = time.perf_counter()
    configs, claims, mismatches = consistency.run_proof()
    seconds = time.perf_counter() - start
    return [
        Figure(
            f"consistency proof ({configs:,} configurations, {claims:,} claims, "
            f"{len(mismatches)} mismatches)",
            f"{seconds:.1f} s on {os.cpu_count()} processes",
            f"<= {PROOF_S:g} s",
            seconds <= PROOF_S and not mismatches,
        )
    ]


def tests(env: dict[str, str]) -> list[Figure]:
    figures = []
    for label, extra, budget in (
        (f'fast tier: python -m pytest -m "{FAST_TIER}"', ["-m", FAST_TIER], FAST_TIER_S),
        ("python -m pytest (the README's command)", [], PYTEST_S),
    ):
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
        start = time.perf_counter()
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        # The summary line ("1234 passed, 2 failed in ..."): a failing suite is reported with
        # its time, and the run goes on to the other figures.
        summary = (result.stdout.strip().splitlines() or [""])[-1].strip("= ")
        ok = seconds <= budget and result.returncode == 0
        figures.append(Figure(label, f"{seconds:.0f} s ({summary})", f"<= {budget:g} s", ok))
        print(f"  {label}: {seconds:.0f} s, exit {result.returncode}", flush=True)
        if result.returncode != 0:
            print(result.stdout[-4000:], flush=True)
    return figures


def ci(work: Path, env: dict[str, str]) -> list[Figure]:
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    seconds = timed(["bash", ".ci/run"], {**env, "CI": "true"}, cwd=clone)
    return [
        Figure(".ci/run in a fresh clone", f"{seconds / 60:.1f} min", "<= 12 min", seconds <= CI_S)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tests", action="store_true", help="time the test suite and its fast tier"
    )
    parser.add_argument("--ci", action="store_true", help="time .ci/run in a fresh clone")
    parser.add_argument("--runs", type=int, default=3, help="rounds of site builds (default 3)")
    parser.add_argument("--loads", type=int, default=5, help="cold browser loads (default 5)")
    parser.add_argument("--no-budgets", action="store_true", help="exit 0 when a budget fails")
    parser.add_argument(
        "--all-releases",
        action="store_true",
        help="build sites offering every release (default: the tests' sample; tens of minutes)",
    )
    args = parser.parse_args(argv)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # Python's default, as in .ci/run: each module compiled once and cached (__pycache__/).
    # A machine whose environment turns the cache off is measured as a fresh one would be.
    bytecode_off = env.pop("PYTHONDONTWRITEBYTECODE", None) is not None
    # The builds and this process (which reads the built site's data files) offer the same.
    if args.all_releases:
        for variable in (RELEASES_VARIABLE, MODELS_VARIABLE):
            env.pop(variable, None)
            os.environ.pop(variable, None)
    else:
        env = sample_env(env)
        for variable in (RELEASES_VARIABLE, MODELS_VARIABLE):
            os.environ[variable] = env[variable]
    env.pop("COMPAT_NO_FINDER_CACHE", None)
    print(f"{datetime.date.today().isoformat()}, {machine()}", flush=True)
    if bytecode_off:
        print("PYTHONDONTWRITEBYTECODE is set here; measured without it (Python's default)")
    figures: list[Figure] = []
    pace_before = pace()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        built, site = site_builds(work, env, args.runs)
        figures += built
        figures += data_sizes(site)
        figures += browser(site, args.loads)
        figures += proof()
        if args.tests:
            figures += tests(env)
        if args.ci:
            figures += ci(work, env)
    figures.append(
        Figure(
            "machine's pace: a fixed Python loop, at the start and the end",
            f"{pace_before:.3f} s, {pace():.3f} s",
            "",
            None,
        )
    )
    missed = print_figures(figures)
    return 1 if missed and not args.no_budgets else 0


if __name__ == "__main__":
    sys.exit(main())
