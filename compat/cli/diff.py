"""`compat diff A B`: what changed in SGLang's attention start-up rules between two releases."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="what changed in the attention start-up rules between two SGLang releases",
        description="List every change of SGLang's attention start-up rules after release A "
        "up to release B, release by release, with where each was read (as the site's "
        "What changed page says it). A must be the older release.",
    )
    parser.add_argument("first", metavar="A", help="e.g. 0.5.7")
    parser.add_argument("last", metavar="B", help="e.g. 0.5.23")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from compat.publish.changes_text import between
    from compat.releases import RELEASE_NAMES, UnknownReleaseError, release_rules

    try:
        first, last = release_rules(args.first).release, release_rules(args.last).release
    except UnknownReleaseError as error:
        print(f"compat diff: {error}", file=sys.stderr)
        return 2
    if RELEASE_NAMES.index(first) > RELEASE_NAMES.index(last):
        # Each change is worded as its release made it: read backwards, "accepts X too"
        # would say the opposite of what happened.
        message = (
            f"A ({first}) is newer than B ({last}): the changes read from the older release "
            f"to the newer; run `compat diff {last} {first}`"
        )
        if args.json:
            from compat.cli.json_errors import print_json_error

            print_json_error(message)
        print(f"compat diff: {message}", file=sys.stderr)
        return 2
    news = between(first, last)
    if args.json:
        data = [
            {
                "release": item.release,
                "changes": [
                    {"summary": c.summary, "evidence": c.evidence.source} for c in item.changes
                ],
                "accepted_values": list(item.values),
            }
            for item in news
        ]
        print(json.dumps({"from": first, "to": last, "releases": data}, indent=2))
        return 0
    if not news:
        print(f"SGLang {first} and {last} start up with the same attention rules")
        return 0
    print(f"SGLang {first} -> {last}: {len(news)} releases changed the attention start-up rules")
    for item in news:
        print(f"\n{item.release}")
        for change in item.changes:
            print(f"  - {change.summary.replace('`', '')}")
            print(f"      read from: {change.evidence.source}")
        for line in item.values:
            print(f"  - {line.replace('`', '')}")
    return 0
