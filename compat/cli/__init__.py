"""`compat`: the command line. Each subcommand lives in its own module of this package."""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

# Subcommand name -> module in this package that defines `register(subparsers)`.
COMMANDS: dict[str, str] = {
    "check": "check",
    "docs": "docs",
    "explain": "explain",
    "export": "export",
    "matrix": "matrix",
}


class Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean for mistyped choices; errors exit 2 without a traceback."""

    json_errors = False
    """Set by `main()` when `--json` is among the arguments: errors also go to stdout as JSON."""

    def error(self, message: str) -> NoReturn:
        hint = _did_you_mean(message)
        if Parser.json_errors:
            from compat.cli.json_errors import print_json_error

            print_json_error(f"{message}{hint}")
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attention-compat")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _did_you_mean(message: str) -> str:
    # argparse says: "invalid choice: 'chek' (choose from 'check', 'docs')"
    if "invalid choice:" not in message or "(choose from" not in message:
        return ""
    bad = message.split("invalid choice:", 1)[1].split("(choose from", 1)[0].strip(" '\"")
    choices = [c.strip(" '\",)") for c in message.split("(choose from", 1)[1].split(",")]
    close = difflib.get_close_matches(bad, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def build_parser() -> Parser:
    parser = Parser(
        prog="compat",
        description="SGLang attention-backend compatibility: render the docs page from the "
        "capability matrix, or check launch flags against it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for module_name in COMMANDS.values():
        module = importlib.import_module(f"compat.cli.{module_name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    Parser.json_errors = "--json" in (sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    code: int = args.run(args)
    return code


def entry() -> NoReturn:
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`compat matrix | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
