"""The finder's CPU cost, cold: one release, three adjacent ones, and (with --all) every one.

Run from the repository root after the README's test set-up:

    python benchmarks/finder.py            # the newest release alone, then the newest three
    python benchmarks/finder.py --all      # also every release (about half an hour of CPU)
    python benchmarks/finder.py --models mha,gpt-oss-120b   # fewer models, a quicker run

Each figure is the CPU time of computing every row of the offered parts (a release and a
model option each) from nothing: no build cache, in a fresh interpreter, its worker
processes included. That is what a cold site build spends on the finder, which is most of
it. It prints the date, the machine and its pace, then one line per figure with its budget
(issue #43): three adjacent releases at most 2x the newest alone, every release at most
10 CPU-minutes. Exit 1 when a measured budget is missed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from machine import installed_env, machine, pace  # benchmarks/, this script's folder

ROOT = Path(__file__).resolve().parent.parent
BUDGET_ADJACENT_RATIO = 2.0
BUDGET_ALL_CPU_S = 600.0


def _worker(releases: Sequence[str], models: Sequence[str] | None) -> None:
    """In a fresh interpreter: compute the parts, print the CPU seconds (own and workers')."""
    from compat.publish.finder import compute_rows

    compute_rows(releases, models=models)
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
    print(json.dumps({"cpu_s": cpu}))


def measure(releases: Sequence[str], models: Sequence[str] | None) -> float:
    command = [sys.executable, __file__, "--worker", ",".join(releases)]
    if models:
        command += ["--models", ",".join(models)]
    env = installed_env(ROOT / "compat")
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=ROOT)
    if done.returncode != 0:
        failed = ", ".join(releases)
        raise SystemExit(f"finder benchmark: computing {failed} failed:\n{done.stderr}")
    return float(json.loads(done.stdout.splitlines()[-1])["cpu_s"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--all", action="store_true", help="also every release (slow)")
    parser.add_argument("--models", help="model options, comma-separated (default: every one)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    models = args.models.split(",") if args.models else None
    if args.worker:
        _worker(args.worker.split(","), models)
        return 0
    sys.path.insert(0, str(ROOT))
    from compat.releases import RELEASE_NAMES

    newest_first = tuple(reversed(RELEASE_NAMES))
    print(f"{datetime.date.today().isoformat()}, {machine()}, pace {pace():.3f} s", flush=True)
    print(f"models: {', '.join(models) if models else 'every option of the menu'}")
    one = measure(newest_first[:1], models)
    print(f"finder, SGLang {newest_first[0]} alone: {one:.1f} CPU-s", flush=True)
    three = measure(newest_first[:3], models)
    ratio = three / one
    fits = ratio <= BUDGET_ADJACENT_RATIO
    print(
        f"finder, SGLang {', '.join(newest_first[:3])}: {three:.1f} CPU-s, {ratio:.2f}x the "
        f"newest alone (budget <= {BUDGET_ADJACENT_RATIO:g}x): {'PASS' if fits else 'FAIL'}",
        flush=True,
    )
    if args.all:
        every = measure(newest_first, models)
        all_fits = every <= BUDGET_ALL_CPU_S
        print(
            f"finder, all {len(newest_first)} releases: {every / 60:.1f} CPU-min (budget <= "
            f"{BUDGET_ALL_CPU_S / 60:g}): {'PASS' if all_fits else 'FAIL'}"
        )
        fits = fits and all_fits
    return 0 if fits else 1


if __name__ == "__main__":
    sys.exit(main())
