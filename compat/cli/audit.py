"""`compat audit RELEASE`: every documented cell of a release that its own code contradicts."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="where a release's page and its own code disagree, cell by cell",
        description="List every ✅ or ❌ cell of a release's tables that the release's own "
        "code contradicts: a ✅ it refuses at start-up or fails on when it builds the backend, "
        "a ❌ its own check accepts. Each row names the launch that isolates the cell, what "
        "SGLang's code does there and the line of code, and where the page's word comes "
        "from. Prints a Markdown table; exit 0 whether or not there are disputes, 2 for a "
        "release not modelled.",
    )
    parser.add_argument("release", metavar="RELEASE", help="e.g. 0.5.23")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from compat.guard.audit import audit
    from compat.guard.audit_table import audit_markdown
    from compat.releases import UnknownReleaseError, release_rules

    try:
        release = release_rules(args.release).release
    except UnknownReleaseError as error:
        if args.json:
            print(json.dumps({"error": str(error)}))
        print(f"compat audit: {error}", file=sys.stderr)
        return 2
    disputes = audit(release)
    if args.json:
        data = {"release": release, "disputes": [d.to_dict() for d in disputes]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(audit_markdown(release, disputes))
    return 0
