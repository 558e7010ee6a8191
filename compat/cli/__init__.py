"""`compat`: the command line. Each subcommand lives in its own module of this package.

Exit codes: 0 fine, 1 incompatible (or stale), 2 invalid input or a file that cannot be
read or written, 3 a bug of this program (reported as one line with where to report it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import io
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from compat.vocab.spelling import closest, did_you_mean

# Subcommand name -> module in this package that defines `register(subparsers)`.
COMMANDS: dict[str, str] = {
    "audit": "audit",
    "check": "check",
    "diff": "diff",
    "docs": "docs",
    "explain": "explain",
    "export": "export",
    "launch": "launch",
    "matrix": "matrix",
}


class Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean for mistyped choices; errors exit 2 without a traceback."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(parsed, action.dest, None)
            # argparse turns `--flag=--` into an empty list (a bug of Python's before 3.12).
            if action.option_strings and action.nargs is None and isinstance(value, list):
                self.error(f"argument {action.option_strings[0]}: expected one value, got '--'")
        return parsed, extras

    json_errors = False
    """Set by `main()` when `--json` is among the arguments: errors also go to stdout as JSON."""

    def error(self, message: str) -> NoReturn:
        hint = _did_you_mean(message)
        if Parser.json_errors:
            from compat.cli.json_errors import print_json_error

            print_json_error(f"{message}{hint}")
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


@functools.cache  # reading the installed metadata scans sys.path: once per process
def _version() -> str:
    from compat.inputs.installed import installed_version

    # "unknown": run from a source tree that was never installed.
    return installed_version("attention-compat") or "unknown"


def _did_you_mean(message: str) -> str:
    # argparse says: "invalid choice: 'chek' (choose from 'check', 'docs')"
    if "invalid choice:" not in message or "(choose from" not in message:
        return ""
    bad = message.split("invalid choice:", 1)[1].split("(choose from", 1)[0].strip(" '\"")
    choices = [c.strip(" '\",)") for c in message.split("(choose from", 1)[1].split(",")]
    return did_you_mean(closest(bad, choices), quoted=True)


class _VersionAction(argparse.Action):
    """`--version`, the installed version read when asked for: reading it costs a scan of
    the installed packages, which every other command line would pay for nothing."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version"
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        print(f"{parser.prog} {_version()}")  # to stdout, as argparse's own version action
        parser.exit()


def build_parser(command: str | None = None) -> Parser:
    """The command line's parser: every subcommand, or only `command`'s (the one a command
    line names: the others' modules are then neither imported nor built)."""
    parser = Parser(
        prog="compat",
        description="SGLang attention-backend compatibility: render the docs page from the "
        "capability matrix, or check launch flags against it.",
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for name, module_name in COMMANDS.items():
        if command is None or name == command:
            module = importlib.import_module(f"compat.cli.{module_name}")
            module.register(subparsers)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand a command line starts with, if any: everything after it is that
    command's (argparse hands it all to the subcommand's parser), so no other is needed.
    A line that starts otherwise (`--help`, a typo) gets every subcommand, to list them."""
    return argv[0] if argv and argv[0] in COMMANDS else None


EXIT_INVALID, EXIT_BUG = 2, 3
# Set to see the traceback of an unexpected error instead of the one-line report.
DEBUG_VARIABLE = "COMPAT_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    _tolerate_unencodable_output()
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_named_command(arguments))
    Parser.json_errors = "--json" in arguments
    args = parser.parse_args(arguments)
    try:
        code: int = args.run(args)
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except OSError as error:  # the disk or a stream failed where no command expected it
        where = f" ({error.filename})" if error.filename else ""
        print(f"compat {args.command}: error: {error.strerror or error}{where}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as error:  # the last resort: every expected failure is handled earlier
        if os.environ.get(DEBUG_VARIABLE):
            raise
        text = " ".join(str(error).split())[:300]  # one line, however the error reads
        print(
            f"compat {args.command}: internal error: {type(error).__name__}: {text}; this is "
            "a bug: please report it, with the command line, to the attention-compat issue "
            f"tracker (set {DEBUG_VARIABLE}=1 to see the traceback)",
            file=sys.stderr,
        )
        return EXIT_BUG
    return code


def _tolerate_unencodable_output() -> None:
    """Echoing an argument that is not valid UTF-8 (or a ✅ to an ASCII terminal) must not crash.

    Arguments that are not valid in the locale's encoding reach Python as lone surrogates;
    a strict stream would raise on printing them back, so such characters are escaped.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def _terminate(signum: int, frame: object) -> None:
    # A polite kill unwinds like an exception, so a half-written temporary file is removed.
    raise SystemExit(128 + signum)


def entry() -> NoReturn:
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminate)
    try:
        code = main()
    except BrokenPipeError:
        # The reader went away (`compat matrix | head`): not an error of ours.
        _silence_stdout()
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OSError as error:  # stdout itself failed, e.g. `compat matrix > /dev/full`
        _silence_stdout()
        if code != EXIT_INVALID:  # not yet reported by main()
            print(f"compat: cannot write the output: {error.strerror or error}", file=sys.stderr)
            code = EXIT_INVALID
    sys.exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the flush at exit cannot fail again."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: no descriptor behind it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
