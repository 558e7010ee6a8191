"""`compat launch`: check a launch command, then run it unchanged, or refuse to.

For every release, 0.5.7-0.5.10 included (they have no plugin framework): the command after
`--` is judged as `compat check` judges it, with the policy of `COMPAT_POLICY` (`--parity` and
`--warn-only` override it); an accepted command replaces this process (`exec`), a refused one
never starts. For an installed release newer than the newest modelled, nothing is refused
unless a policy is asked for (the variable or a flag): the findings are printed, it runs.
A command that does not start an SGLang server is not run unless `--any-command` says so.
Exit 1: refused; 2: invalid input; 127: the command was not found;
126: it cannot be run; otherwise the command's own exit status.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import Any

from compat.cli.check import (
    EXIT_INCOMPATIBLE,
    EXIT_INVALID,
    EXIT_OK,
    NOT_SGLANG,
    add_model_arguments,
    format_report,
    judge,
)
from compat.guard.policy import (
    DEFAULT_POLICY,
    POLICY_VARIABLE,
    Policy,
    PolicyError,
    explicit_policy,
    policy_for,
)
from compat.guard.report import Enforcement, Report
from compat.inputs.assemble import InputError
from compat.inputs.checks import shown, terminal_lines, terminal_text
from compat.inputs.config import InvalidConfigError
from compat.inputs.detect import PlatformDetectionError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "launch",
        help="check an SGLang launch command, then run it (or refuse to)",
        description="Check the SGLang launch command after `--` against the capability "
        "matrix for the installed release, print the verdict, then run the command "
        "unchanged, or exit 1 without running it. The policy comes from "
        f"{POLICY_VARIABLE} (documented, parity or warn; default documented).",
    )
    add_model_arguments(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the command that would run and exit 0 (accepted) or 1 (refused)",
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--parity",
        dest="policy",
        action="store_const",
        const=Policy.PARITY,
        help="refuse only what SGLang itself refuses at start-up",
    )
    policy.add_argument(
        "--warn-only",
        dest="policy",
        action="store_const",
        const=Policy.WARN,
        help="never refuse: print the findings and run the command",
    )
    parser.add_argument(
        "--any-command",
        action="store_true",
        help="run a command that does not start an SGLang server (a wrapper script, say), "
        "its flags judged as SGLang's",
    )
    parser.add_argument("launch", nargs="*", metavar="-- LAUNCH COMMAND", help=argparse.SUPPRESS)
    parser.set_defaults(run=run, policy=None)


# What a shell answers for a command it cannot run: not found, found but not runnable.
EXIT_NOT_FOUND, EXIT_CANNOT_RUN = 127, 126
# Python ignores these at start-up; an exec'd program inherits that unless they are reset,
# and a server that ignores SIGPIPE or SIGXFSZ behaves unlike one started from a shell.
RESET_SIGNALS = ("SIGPIPE", "SIGXFSZ")


def run(args: argparse.Namespace) -> int:
    try:
        if not args.launch or not any(token.strip() for token in args.launch):
            raise InputError(
                "no launch command: give it after `--`, e.g. compat launch -- python3 -m "
                "sglang.launch_server --model-path MODEL [flags]"
            )
        explicit: Policy | None = args.policy or explicit_policy()
        # What the command runs in: this environment, and its own `NAME=value` words.
        environment = {**os.environ, **_environment_prefix(_words(args.launch))[0]}
        report, assembled = judge(args, environment)
    except (InputError, InvalidConfigError, PlatformDetectionError, PolicyError) as error:
        print(terminal_lines(f"compat launch: {error}"), file=sys.stderr)
        return EXIT_INVALID
    launch = assembled.launch
    if not launch.sglang_launch and not args.any_command:
        print(
            f"compat launch: not running it: {NOT_SGLANG}; give --any-command to run it anyway",
            file=sys.stderr,
        )
        return EXIT_INVALID
    print(format_report(report, assembled.context, launch, assembled.flag_release))
    # What was judged is what runs: a command pasted as one argument runs as its words.
    words = list(launch.words)
    command = terminal_text(shlex.join(words))  # runnable as printed, unless it held a control
    unexpanded = _unexpanded(words)
    if unexpanded:
        print(
            f"note: no shell runs it, so {shown(unexpanded[0])} reaches the program as "
            "written: $VARIABLES are not expanded (NAME=value words before the program are "
            "its environment)"
        )
    unmodelled = report.unmodelled_release is not None
    policy = policy_for(explicit, unmodelled_release=unmodelled)
    if unmodelled and explicit is None and not accepts(report, DEFAULT_POLICY):
        print(
            f"compat launch: running it anyway: SGLang {report.unmodelled_release} is newer than "
            f"the releases modelled, so nothing is refused unless asked for ({POLICY_VARIABLE}="
            f"{DEFAULT_POLICY.value} or parity, or --parity, refuses on {report.sglang_version}'s "
            "answers)",
            file=sys.stderr,
        )
    if not accepts(report, policy):
        print(
            f"compat launch: not running it ({POLICY_VARIABLE}={policy.value}; {_why(report)})",
            file=sys.stderr,
        )
        return EXIT_INCOMPATIBLE
    if args.dry_run:
        print(f"would run: {command}")
        return EXIT_OK
    print(f"running: {command}")
    sys.stdout.flush()
    sys.stderr.flush()
    return _exec(words)


# `NAME=value` before the program, as a shell reads it: the program's environment.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# A `$NAME` or `${NAME}` a shell would have expanded before this program saw the word.
_VARIABLE = re.compile(r"\$(?:[A-Za-z_]|\{)")


def _environment_prefix(words: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The `NAME=value` words before the program, as the environment a shell gives it, and
    the command after them (`CUDA_VISIBLE_DEVICES=0 python3 -m ...`, pasted)."""
    count = 0
    while count < len(words) and _ASSIGNMENT.match(words[count]):
        count += 1
    assignments = dict(word.split("=", 1) for word in words[:count])
    return assignments, list(words[count:])


def _words(launch: Sequence[str]) -> list[str]:
    """The launch command's words (a command pasted as one argument, split as a shell)."""
    if len(launch) == 1:
        try:
            return shlex.split(launch[0])
        except ValueError:  # unbalanced quotes: the launch reader says so
            return list(launch)
    return list(launch)


def _unexpanded(words: Sequence[str]) -> list[str]:
    """The words that name a shell variable: they reach the program as written."""
    return [word for word in words if _VARIABLE.search(word)]


def _exec(words: Sequence[str]) -> int:
    """Replace this process with the command, its signals as a shell leaves them; or say
    why it cannot run, with a shell's exit status. `NAME=value` words before the program
    are its environment, as in a shell (the program is looked up on that PATH)."""
    assignments, words = _environment_prefix(words)
    if not words:
        print(
            "compat launch: cannot run it: no program after its NAME=value words", file=sys.stderr
        )
        return EXIT_NOT_FOUND
    saved = {
        name: signal.signal(getattr(signal, name), signal.SIG_DFL)
        for name in RESET_SIGNALS
        if hasattr(signal, name)
    }
    try:
        os.execvpe(words[0], list(words), {**os.environ, **assignments})
    except (OSError, ValueError) as error:  # ValueError: an empty name, a NUL in it
        failure = error
    finally:  # only reached when the exec failed: this process goes on printing
        for name, handler in saved.items():
            signal.signal(getattr(signal, name), handler)
    missing = not isinstance(failure, OSError) or failure.errno == errno.ENOENT
    reason = "command not found" if missing else str(getattr(failure, "strerror", failure))
    print(f"compat launch: cannot run {shown(words[0])}: {reason}", file=sys.stderr)
    return EXIT_NOT_FOUND if missing else EXIT_CANNOT_RUN


def accepts(report: Report, policy: Policy) -> bool:
    """Whether `policy` lets the launch `report` judged run."""
    return policy.accepts(report)


def _why(report: Report) -> str:
    if report.refused_at_startup:
        return f"SGLang {report.sglang_version} refuses it at start-up"
    if report.sglang_fails:  # after start-up: the first place SGLang's code fails it
        where = next(f.enforced for f in report.errors if f.enforced is not Enforcement.DOCUMENTED)
        return where.label.replace("SGLang", f"SGLang {report.sglang_version}", 1)
    return (
        "the page documents it as unsupported; --parity runs what SGLang itself accepts, "
        "--warn-only runs it anyway"
    )
