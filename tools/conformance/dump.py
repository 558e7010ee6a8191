"""Write SGLang's start-up outcome for every grid launch, one JSON object per line.

PYTHONPATH=tools python -m conformance.dump --version 0.5.7 --out conformance-0.5.7.jsonl
PYTHONPATH=tools python -m conformance.dump --all --out-dir DIR   # DIR/conformance-X.jsonl
PYTHONPATH=tools python -m conformance.dump --zoo --all --out-dir DIR   # DIR/zoo-X.jsonl

`--all` runs every release 0.5.7 .. 0.5.23 in turn; compare them all with
`python -m conformance.compare DIR/conformance-*.jsonl`. `--zoo` writes the model zoo's
launches instead of the grid's (zoo.py; each row also carries the zoo's `label`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.grid import grid
from conformance.harness import run_many
from conformance.releases import ALL_RELEASES
from conformance.wheel import FRESH, cache_dir, harness_digest


def rows(
    version: str, workers: int = 2, cache: bool = False, zoo: bool = False
) -> list[dict[str, Any]]:
    """Every grid launch (with `zoo`, every zoo launch) with SGLang `version`'s outcome,
    as the dump writes them.

    With `cache`, a previous run's rows are reused when they were computed from the same
    wheel by the same harness and grid code (the key hashes both), so a re-run of the suite
    only repeats the product's side; `COMPAT_CONFORMANCE_FRESH=1` always recomputes.
    """
    path = _cache_file(version, zoo) if cache and not os.environ.get(FRESH) else None
    if path is not None and path.is_file():
        with path.open() as handle:
            return [json.loads(line) for line in handle]
    labels: list[str] | None = None
    if zoo:
        from conformance.zoo import labelled

        pairs = list(labelled(version))
        launches = [launch for launch, _ in pairs]
        labels = [label for _, label in pairs]
    else:
        launches = grid(version)
    outcomes = run_many(version, launches, workers=workers, zoo=zoo)
    table = [
        {
            "version": version,
            "gpu": launch.gpu,
            "model": launch.model,
            "argv": list(launch.argv),
            **({"label": labels[index]} if labels is not None else {}),
            "outcome": o.to_json(),
        }
        for index, (launch, o) in enumerate(zip(launches, outcomes, strict=True))
    ]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text("".join(json.dumps(row) + "\n" for row in table))
        tmp.replace(path)
    return table


# Modules of the product's side (the comparison, the generators, summaries) and the
# backend-build harness, which start-up never runs: changing them does not change what
# SGLang does at start-up, so they do not key its cached outcomes.
_PRODUCT_SIDE = frozenset({"compare.py", "model_data.py", "zoo_summary.py", "build.py"})


def _cache_file(version: str, zoo: bool = False) -> Path:
    digest = harness_digest(version, _PRODUCT_SIDE)
    if zoo:  # the zoo's configs are what SGLang's code reads: a changed one is a new launch
        from compat.inputs.zoo import DATA

        digest.update(DATA.name.encode() + b"\0" + DATA.read_bytes())
    kind = "zoo" if zoo else "sglang"
    return cache_dir() / "outcomes" / f"{kind}-{version}-{digest.hexdigest()[:16]}.jsonl"


def write(version: str, out: Path, workers: int, zoo: bool = False) -> None:
    started = time.perf_counter()
    table = rows(version, workers, zoo=zoo)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w") as handle:
        for row in table:
            handle.write(json.dumps(row) + "\n")
    tmp.replace(out)  # readers never see a half-written file
    refused = sum(row["outcome"]["refused"] for row in table)
    print(
        f"{len(table)} launches through sglang {version} in "
        f"{time.perf_counter() - started:.1f} s: {refused} refused, "
        f"{len(table) - refused} started; wrote {out}",
        file=sys.stderr,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.dump", description=__doc__)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--version", help="SGLang release, e.g. 0.5.7")
    which.add_argument("--all", action="store_true", help="every release 0.5.7 .. 0.5.23")
    parser.add_argument("--out", type=Path, help="JSON Lines file to write (with --version)")
    parser.add_argument("--out-dir", type=Path, help="directory for --all's files")
    parser.add_argument("--workers", type=int, default=2, help="parallel interpreters")
    parser.add_argument(
        "--zoo", action="store_true", help="the model zoo's launches (zoo.py), not the grid's"
    )
    args = parser.parse_args(argv)
    if args.all:
        if args.out_dir is None:
            parser.error("--all needs --out-dir")
        args.out_dir.mkdir(parents=True, exist_ok=True)
        prefix = "zoo" if args.zoo else "conformance"
        for version in ALL_RELEASES:
            write(version, args.out_dir / f"{prefix}-{version}.jsonl", args.workers, args.zoo)
        return 0
    if args.out is None:
        parser.error("--version needs --out")
    write(args.version, args.out, args.workers, args.zoo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
