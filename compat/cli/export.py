"""`compat export`: write the matrix as JSON (and its JSON Schema), or check they are fresh."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

FIX_COMMAND = "compat export"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write docs/matrix.json and docs/matrix.schema.json from the matrix",
        description="Write the capability matrix as JSON (docs/matrix.json) with its JSON "
        "Schema (docs/matrix.schema.json), print it, or check the committed files are fresh.",
    )
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--output",
        metavar="PATH",
        help="write only the matrix JSON to PATH instead ('-' prints it to stdout)",
    )
    target.add_argument(
        "--check",
        action="store_true",
        help="write nothing; show a diff and exit 1 when a committed file is stale",
    )
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="let --output write through a symbolic link that points out of its directory",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the project whose docs/ holds the files (default: the checkout of an editable "
        "install; required for an installed package); nothing is written outside it or "
        "through a symbolic link, and no file without the generated-file marker is replaced",
    )
    parser.set_defaults(run=run)


def _targets() -> list[tuple[str, str, str]]:
    """(relative path, fresh content, marker) of every file `compat export` owns."""
    from compat.publish.export import (
        EXPORT_MARKER,
        EXPORT_PATH,
        SCHEMA_MARKER,
        SCHEMA_PATH,
        render_export,
        render_schema,
    )

    return [
        (EXPORT_PATH, render_export(), EXPORT_MARKER),
        (SCHEMA_PATH, render_schema(), SCHEMA_MARKER),
    ]


def run(args: argparse.Namespace) -> int:
    from compat.publish.outputs import OutputError

    try:
        return _run(args)
    except OutputError as error:
        print(f"compat export: error: {error}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from compat.publish.outputs import (
        Generated,
        is_directory,
        project_root,
        write_all_if_changed,
        write_if_changed,
    )

    if args.output == "-":
        from compat.publish.export import render_export

        sys.stdout.write(render_export())
        return 0
    if args.output is not None:
        from compat.publish.export import EXPORT_MARKER, render_export

        path = Path(args.output)
        file = Generated(path, render_export(), EXPORT_MARKER)
        changed = write_if_changed(file, follow_symlinks=args.follow_symlinks)
        print(f"wrote {path}" if changed else f"{path} is up to date")
        return 0
    from compat.publish.staleness import staleness

    root: Path = args.root if args.root is not None else project_root()
    if not is_directory(root):
        print(f"compat export: error: --root {str(root)!r} is not a directory", file=sys.stderr)
        return 2
    if args.check:
        stale = []
        for relative, content, _ in _targets():
            result = staleness(root / relative, content, label=relative)
            if result.fresh:
                print(f"{relative} is up to date")
            else:
                stale.append(relative)
                sys.stdout.write(result.diff)
                if not result.diff.endswith("\n"):
                    sys.stdout.write("\n")
        if stale:
            fix = FIX_COMMAND if args.root is None else f"{FIX_COMMAND} --root {args.root}"
            verb = "is" if len(stale) == 1 else "are"
            print(f"{' and '.join(stale)} {verb} stale: run `{fix}` to regenerate")
            return 1
        return 0
    targets = list(_targets())
    # Both files or neither: the export never disagrees with its schema.
    written = write_all_if_changed(
        [Generated(root / rel, content, marker) for rel, content, marker in targets], root=root
    )
    for relative, _, _ in targets:
        print(f"wrote {relative}" if root / relative in written else f"{relative} is up to date")
    return 0
