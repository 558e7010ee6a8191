"""Write SGLang's start-up outcome for every grid launch, one JSON object per line.

PYTHONPATH=tests python -m conformance.dump --version 0.5.7 --out conformance-0.5.7.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.grid import grid
from conformance.harness import run_many


def rows(version: str, workers: int = 2) -> list[dict[str, Any]]:
    """Every grid launch with SGLang `version`'s outcome, as the dump writes them."""
    launches = grid(version)
    outcomes = run_many(version, launches, workers=workers)
    return [
        {
            "version": version,
            "gpu": launch.gpu,
            "model": launch.model,
            "argv": list(launch.argv),
            "outcome": o.to_json(),
        }
        for launch, o in zip(launches, outcomes, strict=True)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.dump", description=__doc__)
    parser.add_argument("--version", required=True, help="SGLang release, e.g. 0.5.7")
    parser.add_argument("--out", required=True, type=Path, help="JSON Lines file to write")
    parser.add_argument("--workers", type=int, default=2, help="parallel interpreters")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    table = rows(args.version, args.workers)
    tmp = args.out.with_name(args.out.name + ".tmp")
    with tmp.open("w") as out:
        for row in table:
            out.write(json.dumps(row) + "\n")
    tmp.replace(args.out)  # readers never see a half-written file
    refused = sum(row["outcome"]["refused"] for row in table)
    print(
        f"{len(table)} launches through sglang {args.version} in "
        f"{time.perf_counter() - started:.1f} s: {refused} refused, "
        f"{len(table) - refused} started; wrote {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
