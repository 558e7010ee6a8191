"""The README's main job as a newcomer runs it: a fresh clone, no cache of any kind.

Run from the repository root (any Python 3.10+ with `mkdocs-material`, for the one-page
site it is measured against; the README's docs set-up has it):

    python benchmarks/readme.py

It clones the committed tree, then runs the README's first command (the site) exactly as
written, in that clone, with an empty build cache (`COMPAT_CACHE_DIR`) and pip's cache off,
next to a one-page Material site's build measured in the same run. It prints the date, the
machine and its pace, then one line per figure with its budget (issue #43):

- the whole command (venv, install, `compat docs`, `compat export`, `mkdocs build`) at most
  200x the one-page site's build;
- no process of it over 2 GiB of memory (the largest one's peak resident set);
- the site build's first line of finder progress within 30 s of the build's first line;
- the newest modelled release offered by the finder.

Exit 1 when a budget is missed or the command fails.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from loop import (  # benchmarks/, this script's folder
    Figure,
    mkdocs,
    print_figures,
    timed,
    trivial_project,
)
from machine import machine, pace

ROOT = Path(__file__).resolve().parent.parent
BUDGET_RATIO = 200.0
BUDGET_PROCESS_MIB = 2048.0
BUDGET_FIRST_LINE_S = 30.0
ONE_PAGE_RUNS = 3
FINDER_LINE = "finder:"
"""What the finder's progress lines start with (`compat.publish.finder_build`)."""
_FENCE = re.compile(r"```bash\n(.*?)\n```", re.DOTALL)


def main_command(readme: Path) -> str:
    """The README's first shell block: the command that sets up and builds the site."""
    found = _FENCE.search(readme.read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{readme}: no ```bash block, so no main command to run")
    return found.group(1).strip()


def newcomer_env(cache: Path) -> dict[str, str]:
    """This machine's environment as a newcomer's shell has it: no venv active, no settings
    of this project, Python's default bytecode cache, an empty build cache, pip's cache off."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("COMPAT_")
        and name not in ("VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    return env | {"COMPAT_CACHE_DIR": str(cache), "PIP_NO_CACHE_DIR": "1"}


_PEAK = """
import resource, subprocess, sys
code = subprocess.call(["bash", "-c", sys.argv[1]])
print("PEAK_KIB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, flush=True)
sys.exit(code)
"""
"""Runs the command and prints the peak resident set of its largest process: on Linux a
waited-for tree's `ru_maxrss` is its largest member's, and the build waits for its workers."""


def run_main_job(command: str, clone: Path, env: dict[str, str]) -> dict[str, float]:
    """Run `command` in `clone`, each line of its output timed as it comes."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _PEAK, command],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    build_start = first_finder = peak_kib = None
    tail: list[str] = []
    for line in process.stdout:
        now = time.perf_counter() - start
        words = line.strip()
        if words.startswith("PEAK_KIB "):
            peak_kib = float(words.split()[1])
            continue
        tail = [*tail[-40:], line]
        message = re.sub(r"^(INFO|WARNING|ERROR|DEBUG)\s+-\s+", "", words)
        if build_start is None and message != words:  # MkDocs' log format: the build began
            build_start = now
        if first_finder is None and message.startswith(FINDER_LINE):
            first_finder = now
            print(f"  {now:6.1f} s  {message}", flush=True)
        elif message.startswith(FINDER_LINE):
            print(f"  {now:6.1f} s  {message}", flush=True)
    code = process.wait()
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"the README's main command failed (exit {code}):\n{''.join(tail)}")
    if build_start is None or first_finder is None or peak_kib is None:
        raise SystemExit("the build printed no MkDocs log line or no finder progress")
    return {
        "seconds": seconds,
        "first_line_s": first_finder - build_start,
        "peak_mib": peak_kib / 1024,
    }


def offers_newest(clone: Path) -> bool:
    """Whether the built site's finder index offers the newest modelled release."""
    sys.path.insert(0, str(ROOT))
    from compat.publish.finder import INDEX_GLOBAL, INDEX_PATH
    from compat.releases import NEWEST

    script = (clone / "site" / INDEX_PATH).read_text(encoding="utf-8")
    prefix = f"window.{INDEX_GLOBAL} = "
    line = next(line for line in script.splitlines() if line.startswith(prefix))
    index = json.loads(line.removeprefix(prefix).removesuffix(";"))
    return any(entry["release"] == NEWEST for entry in index)


def main(argv: Sequence[str] | None = None) -> int:
    if argv if argv is not None else sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    command = main_command(ROOT / "README.md")
    print(f"{datetime.date.today().isoformat()}, {machine()}, pace {pace():.3f} s", flush=True)
    print(f"the README's main command: {command}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        trivial = trivial_project(work / "trivial")
        quiet = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        one = [timed(mkdocs(trivial, work / "one"), quiet) for _ in range(ONE_PAGE_RUNS)]
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        measured = run_main_job(command, clone, newcomer_env(work / "cache"))
        newest = offers_newest(clone)
        one += [timed(mkdocs(trivial, work / "one"), quiet) for _ in range(ONE_PAGE_RUNS)]
    page = statistics.median(one)
    ratio = measured["seconds"] / page
    figures = [
        Figure("one-page Material site: mkdocs build --strict", f"{page:.2f} s", "", None),
        Figure(
            "the README's main command, fresh clone, no cache",
            f"{measured['seconds']:.0f} s, {ratio:.0f}x the one-page site",
            f"<= {BUDGET_RATIO:g}x",
            ratio <= BUDGET_RATIO,
        ),
        Figure(
            "its largest process (peak resident set)",
            f"{measured['peak_mib']:.0f} MiB",
            f"<= {BUDGET_PROCESS_MIB:g} MiB",
            measured["peak_mib"] <= BUDGET_PROCESS_MIB,
        ),
        Figure(
            "the build's first finder line, after its first line",
            f"{measured['first_line_s']:.1f} s",
            f"<= {BUDGET_FIRST_LINE_S:g} s",
            measured["first_line_s"] <= BUDGET_FIRST_LINE_S,
        ),
        Figure("the finder offers the newest release", "yes" if newest else "no", "", newest),
    ]
    return 1 if print_figures(figures, budget_width=14) else 0


if __name__ == "__main__":
    sys.exit(main())
