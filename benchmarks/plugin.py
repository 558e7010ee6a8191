"""What the SGLang plugin adds to a launch: SGLang's own resolution with and without it.

Run from the repository root (the wheels cached in $COMPAT_SGLANG_WHEELS, see README):

    python benchmarks/plugin.py                 # 0.5.11, 0.5.16 and 0.5.23; exit 1 over budget
    python benchmarks/plugin.py 0.5.23 --repeats 5

Per release, in fresh interpreters (so `import compat` is paid, as in a real launch), the
conformance harness loads the release's start-up code with a fake torch for a B200, twice in
the same process: once without the plugin, once after the release's own `load_plugins()`
found it installed (importing compat, registering the hook). Each time it resolves one
launch as the launcher does (argument parser, ServerArgs construction, from 0.5.19
`resolve_once()`). A launch resolves once: added = load_plugins() + (first resolution with
the hook - first resolution without); the hook's first run imports the guard and its matrix.
Later resolutions and a refused launch (which also searches for suggested fixes) are shown
too. Figures are CPU time of the process, medians over interpreters that alternate which
runtime comes first; the wall-clock figure is printed beside it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from machine import installed_env  # benchmarks/, this script's folder

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ("0.5.11", "0.5.16", "0.5.23")
BUDGET_MS = 100.0  # the budget of a launch; exit 1 over it
MODEL = "Llama-3.1-8B"
VALID = ["--attention-backend", "flashinfer"]
REFUSED = ["--attention-backend", "fa3"]  # documented as unsupported on a B200


# CPU time of this process: what the plugin costs, whatever else the machine runs (a busy
# machine stretches the wall-clock time of everything alike; it is printed too).
CLOCK = time.process_time


def _ms(action: Callable[[], Any]) -> tuple[float, float]:
    """(CPU ms, wall-clock ms) of one call."""
    cpu, wall = CLOCK(), time.perf_counter()
    action()
    return (CLOCK() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def _median_ms(action: Callable[[], Any], repeats: int) -> float:
    return statistics.median(_ms(action)[0] for _ in range(repeats))


def worker(version: str, repeats: int, plugin_first: bool) -> dict[str, float]:
    """The figures for one release; run in a fresh interpreter (see main)."""
    for path in (ROOT / "tests" / "support", ROOT / "tools", ROOT):
        sys.path.insert(0, str(path))
    from conformance.harness import open_runtime

    assert "compat" not in sys.modules, "the plugin's own imports must be measured"
    os.environ.pop("COMPAT_POLICY", None)
    figures: dict[str, float] = {}

    def without() -> None:
        # Each runtime loads fresh copies of the release's modules, and SGLang imports some
        # of them on the first resolution: first resolutions are compared with each other.
        with open_runtime(version, "B200") as runtime:
            figures["without_first_ms"], figures["without_first_wall_ms"] = _ms(
                lambda: runtime.outcome(MODEL, VALID)
            )
            figures["without_ms"] = _median_ms(lambda: runtime.outcome(MODEL, VALID), repeats)

    def with_plugin(root: Path) -> None:
        from conformance import plugin_dist

        plugin_dist.install(root, version)
        with open_runtime(version, "B200") as runtime:
            plugins = importlib.import_module("sglang.srt.plugins")
            figures["load_ms"], figures["load_wall_ms"] = _ms(plugins.load_plugins)
            outcomes: list[Any] = []
            # The hook's first run imports the guard and its matrix.
            figures["first_ms"], figures["first_wall_ms"] = _ms(
                lambda: outcomes.append(runtime.outcome(MODEL, VALID))
            )
            assert not outcomes[0].refused, outcomes[0].error
            figures["with_ms"] = _median_ms(lambda: runtime.outcome(MODEL, VALID), repeats)
            refusal = runtime.outcome(MODEL, REFUSED)
            assert refusal.refused and "LaunchRefusedError" in (refusal.error or "")
            figures["refused_ms"] = _median_ms(lambda: runtime.outcome(MODEL, REFUSED), repeats)

    with tempfile.TemporaryDirectory() as root:
        sys.path.insert(0, root)
        if plugin_first:
            with_plugin(Path(root))
            without()
        else:
            without()
            with_plugin(Path(root))
    for clock in ("", "_wall"):
        figures[f"added{clock}_ms"] = figures[f"load{clock}_ms"] + max(
            0.0, figures[f"first{clock}_ms"] - figures[f"without_first{clock}_ms"]
        )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=list(RELEASES))
    parser.add_argument("--repeats", type=int, default=15, help="resolutions per median")
    parser.add_argument("--processes", type=int, default=6, help="fresh interpreters per release")
    parser.add_argument("--worker", choices=("plugin-first", "plugin-last"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        figures = worker(args.versions[0], args.repeats, args.worker == "plugin-first")
        print(json.dumps(figures))
        return 0
    worst = 0.0
    env = installed_env(ROOT / "compat")  # the plugin as pip installs it: byte-compiled
    print("CPU ms (median of fresh interpreters); first = a launch's one resolution")
    print(
        f"{'SGLang':8} {'first':>7} {'load':>7} {'first':>7} {'added':>7} {'(wall)':>7} "
        f"{'later':>7} {'later':>7} {'refusal':>7}"
    )
    print(
        f"{'':8} {'w/o':>7} {'plugin':>7} {'with':>7} {'':>7} {'':>7} {'w/o':>7} {'with':>7} "
        f"{'with':>7}"
    )
    for version in args.versions:
        runs = []
        for index in range(args.processes):  # alternate which runtime comes first
            order = "plugin-first" if index % 2 else "plugin-last"
            command = [sys.executable, __file__, version, "--worker", order]
            command += ["--repeats", str(args.repeats)]
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                print(f"{version}: the measurement failed:\n{done.stderr}", file=sys.stderr)
                return 2
            runs.append(json.loads(done.stdout.splitlines()[-1]))
        f = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
        worst = max(worst, f["added_ms"])
        names = ("without_first_ms", "load_ms", "first_ms", "added_ms", "added_wall_ms")
        names += ("without_ms", "with_ms", "refused_ms")
        print(f"{version:8} " + " ".join(f"{f[name]:7.1f}" for name in names))
    ok = worst <= BUDGET_MS
    verdict = "ok" if ok else "OVER BUDGET"
    print(f"the plugin adds at most {worst:.1f} ms of CPU time to a launch: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
