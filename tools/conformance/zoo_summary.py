"""Summarise zoo dumps (python -m conformance.dump --zoo) as Markdown.

PYTHONPATH=tools python -m conformance.zoo_summary DIR/zoo-0.5.*.jsonl > zoo-summary.md

Per release: launches and refusals. Per model family: what the plain launch runs with on
each machine, release by release; then, per release, the distribution of outcomes of the
family's launches (refusals grouped by the function that raised and the first words of
the message; started launches by prefill/decode backend, page size and KV dtype).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compat.inputs.zoo import ZOO
from conformance.zoo import MACHINES

_TOP = 8  # outcomes listed per family and release


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def outcome_text(outcome: dict[str, Any]) -> str:
    """One outcome in a few words."""
    if outcome["refused"]:
        error = outcome["error"] or "?"
        kind, _, message = error.partition(": ")
        words = re.sub(r"\s+", " ", message).strip()
        # Values that vary from launch to launch (quoted names, lists, numbers) elided.
        words = re.sub(r"'[^']*'|\[[^\]]*\]|\b\d+\b", "…", words)[:70]
        where = outcome.get("raised_at") or ""
        function = where.rsplit("(", 1)[-1].rstrip(")") if where else kind
        return f"refused ({function}): {words}"
    return (
        f"{outcome['prefill_backend']}/{outcome['decode_backend']}"
        f" page {outcome['page_size']} kv {outcome['kv_cache_dtype']}"
    )


def _short(outcome: dict[str, Any]) -> str:
    if outcome["refused"]:
        where = outcome.get("raised_at") or ""
        return "✗ " + (where.rsplit("(", 1)[-1].rstrip(")") if where else "argparse")
    prefill, decode = outcome["prefill_backend"], outcome["decode_backend"]
    backends = prefill if prefill == decode else f"{prefill}/{decode}"
    return f"{backends} p{outcome['page_size']}"


def summary(tables: dict[str, list[dict[str, Any]]]) -> str:
    versions = sorted(tables, key=_version_key)
    lines = ["# Zoo outcomes per release", ""]
    lines += [
        "Written by `python -m conformance.zoo_summary` from the zoo dumps "
        "(`python -m conformance.dump --zoo`). ✗ = SGLang refuses at start-up (the function "
        "that raised); otherwise prefill[/decode] backend and page size.",
        "",
        "| release | launches | refused | started |",
        "|---|---|---|---|",
    ]
    for version in versions:
        rows = tables[version]
        refused = sum(row["outcome"]["refused"] for row in rows)
        lines.append(f"| {version} | {len(rows)} | {refused} | {len(rows) - refused} |")
    families: dict[str, list[str]] = defaultdict(list)
    for name, model in ZOO.items():
        families[model.family].append(name)
    lines += ["", "Refused launches per model (of the model's launches), release by release:", ""]
    lines += ["| model | " + " | ".join(v.removeprefix("0.5.") for v in versions) + " |"]
    lines += ["|---|" + "---|" * len(versions)]
    for name in ZOO:
        cells = []
        for version in versions:
            rows = [row for row in tables[version] if row["model"] == name]
            refused = sum(row["outcome"]["refused"] for row in rows)
            cells.append(f"{refused}/{len(rows)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for family, names in families.items():
        for name in names:
            model = ZOO[name]
            lines += ["", f"## {family}: {name} (`{model.source}`)", ""]
            lines += ["Plain launch (the model card's flags only):", ""]
            lines += ["| release | " + " | ".join(MACHINES) + " |"]
            lines += ["|---|" + "---|" * len(MACHINES)]
            for version in versions:
                plain = {
                    row["gpu"]: _short(row["outcome"])
                    for row in tables[version]
                    if row["model"] == name and row.get("label") == "plain"
                }
                cells = [plain.get(gpu, "") for gpu in MACHINES]
                lines.append(f"| {version} | " + " | ".join(cells) + " |")
            lines += ["", "All launches, by outcome:", ""]
            previous: list[tuple[str, int]] | None = None
            for version in versions:
                rows = [row for row in tables[version] if row["model"] == name]
                counts = Counter(outcome_text(row["outcome"]) for row in rows)
                top = counts.most_common(_TOP)
                if top == previous:
                    lines.append(f"- {version}: same as above")
                    continue
                previous = top
                rest = len(rows) - sum(count for _, count in top)
                parts = "; ".join(f"{count}× {text}" for text, count in top)
                more = f"; {rest} others" if rest else ""
                lines.append(f"- {version} ({len(rows)} launches): {parts}{more}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.zoo_summary", description=__doc__)
    parser.add_argument("dumps", type=Path, nargs="+", help="zoo JSON Lines files")
    args = parser.parse_args(argv)
    tables: dict[str, list[dict[str, Any]]] = {}
    for path in args.dumps:
        with path.open() as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        if rows:
            tables[rows[0]["version"]] = rows
    print(summary(tables), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
