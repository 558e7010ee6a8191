"""`compat docs`: render the capability matrix into the docs page, or check that it is fresh."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from compat.publish import outputs

FIX_COMMAND = "compat docs"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "docs",
        help="render the docs pages from the capability matrix and the releases",
        description="Render docs/attention_backend.md, one page per SGLang release in "
        "docs/releases/ and docs/changes.md from compat/matrix.py and compat/releases.py. "
        "With --check, write nothing and exit 1 when a committed page is stale.",
    )
    parser.add_argument(
        "--check",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="write nothing; show a diff and exit 1 when the page is stale (with "
        "--sglang-mdx: PATH is SGLang's own attention page, e.g. from an SGLang checkout)",
    )
    parser.add_argument(
        "--sglang-mdx",
        nargs="?",
        const="",
        default=None,
        metavar="RELEASE",
        help="print the MHA and MLA tables and the FA4 + KV4 note of RELEASE (default: the "
        "newest modelled) in the format of SGLang's own page at that release (Mintlify JSX, "
        "or Markdown before the move); with --check PATH, compare PATH's tables cell for cell",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        metavar="PATH",
        help="project root whose docs/ holds the pages (default: the checkout of an editable "
        "install; required for an installed package); nothing is written outside it or "
        "through a symbolic link, and no file without the generated-file marker is replaced",
    )
    parser.add_argument(
        "--template-dir",
        type=Path,
        default=None,
        metavar="PATH",
        help="render with the templates in PATH (default: this package's own; a template "
        "elsewhere is never run unless named here)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.sglang_mdx is not None:
        return _sglang_page(args.sglang_mdx, args.check)
    if isinstance(args.check, str):
        print("compat docs: --check PATH goes with --sglang-mdx", file=sys.stderr)
        return 2
    # Imported here so that other subcommands never load Jinja.
    from compat.publish.pages import GENERATED_MARKER, TemplateError, render_pages

    try:
        root: Path = args.root if args.root is not None else outputs.project_root()
    except outputs.OutputError as error:
        print(f"compat docs: {error}", file=sys.stderr)
        return 2
    if not outputs.is_directory(root):
        print(f"compat docs: --root {root} is not a directory", file=sys.stderr)
        return 2
    template_dir: Path = (
        args.template_dir if args.template_dir is not None else outputs.package_templates()
    )
    try:
        pages = render_pages(template_dir=template_dir)
    except TemplateError as error:
        print(
            f"compat docs: cannot render the page: {_describe(error, template_dir)}",
            file=sys.stderr,
        )
        return 2
    except (OSError, UnicodeDecodeError) as error:  # an unreadable template file
        print(f"compat docs: cannot read the templates in {template_dir}: {error}", file=sys.stderr)
        return 2
    try:
        if args.check:
            stale = max(
                _check(root / path, content, path.as_posix(), args, root) for path, content in pages
            )
            if not stale:
                print(f"{len(pages)} pages are up to date")
            return stale
        # All pages or none: a full disk never leaves a site of mixed versions.
        written = [
            path.relative_to(root).as_posix()
            for path in outputs.write_all_if_changed(
                [outputs.Generated(root / path, text, GENERATED_MARKER) for path, text in pages],
                root=root,
            )
        ]
    except outputs.OutputError as error:
        print(f"compat docs: {error}", file=sys.stderr)
        return 2
    for label in written:
        print(f"wrote {label}")
    fresh = len(pages) - len(written)
    if fresh:
        print(f"{fresh} of {len(pages)} pages are up to date")
    return 0


def _sglang_page(release: str, check: bool | str) -> int:
    """SGLang's page tables for `release`: printed, or compared with the page at `check`."""
    from compat.publish.sglang_page import differences, render
    from compat.releases import NEWEST, UnknownReleaseError, release_rules

    try:
        name = release_rules(release or NEWEST).release
    except UnknownReleaseError as error:
        print(f"compat docs: --sglang-mdx: {error}", file=sys.stderr)
        return 2
    text = render(name)
    if check is False:
        sys.stdout.write(text)
        return 0
    if check is True:
        print("compat docs: --sglang-mdx --check needs the PATH of the page", file=sys.stderr)
        return 2
    try:
        page = Path(check).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"compat docs: cannot read {check}: {error}", file=sys.stderr)
        return 2
    problems = differences(text, page)
    for problem in problems:
        print(f"{check}: {problem}")
    if problems:
        print(f"{check}: its tables differ from SGLang {name}'s matrix in {len(problems)} places")
        return 1
    print(f"{check}: its tables equal SGLang {name}'s matrix, cell for cell")
    return 0


def _check(page: Path, content: str, label: str, args: argparse.Namespace, root: Path) -> int:
    from compat.publish.staleness import staleness

    stale = staleness(page, content, label=label)
    if stale.fresh:
        return 0
    sys.stdout.write(stale.diff if stale.diff.endswith("\n") else stale.diff + "\n")
    fix = FIX_COMMAND if args.root is None else f"{FIX_COMMAND} --root {root}"
    if args.template_dir is not None:
        fix += f" --template-dir {args.template_dir}"
    print(f"{label} is stale; regenerate it with: {fix}")
    return 1


def _describe(error: Exception, template_dir: Path) -> str:
    """One line naming the template error and where it happened."""
    kind = type(error).__name__
    text = str(error).strip()
    first = text.splitlines()[0] if text else kind
    if kind == "TemplateNotFound":
        return f"template {getattr(error, 'name', first)} not found in {template_dir}"
    line = getattr(error, "lineno", None)
    name = getattr(error, "filename", None) or getattr(error, "name", None)
    where = f" at {Path(name).name}:{line}" if name and line else ""
    return f"{kind}{where}: {first}"
