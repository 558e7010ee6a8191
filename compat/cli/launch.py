"""`compat launch`: check a launch command, then run it unchanged, or refuse to.

For every release, 0.5.7-0.5.10 included (they have no plugin framework): the command after
`--` is judged as `compat check` judges it, with the policy of `COMPAT_POLICY` (`--parity` and
`--warn-only` override it); an accepted command replaces this process (`exec`), a refused one
never starts. Exit 1: refused; 2: invalid input; otherwise the command's own exit status.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from compat.cli.check import (
    EXIT_INCOMPATIBLE,
    EXIT_INVALID,
    EXIT_OK,
    add_model_arguments,
    format_report,
    judge,
)
from compat.guard.policy import POLICY_VARIABLE, Policy, PolicyError, policy_from_environment
from compat.guard.report import Report
from compat.inputs.assemble import InputError
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
    parser.add_argument("launch", nargs="*", metavar="-- LAUNCH COMMAND", help=argparse.SUPPRESS)
    parser.set_defaults(run=run, policy=None)


def run(args: argparse.Namespace) -> int:
    try:
        if not args.launch:
            raise InputError(
                "no launch command: give it after `--`, e.g. compat launch -- python3 -m "
                "sglang.launch_server --model-path MODEL [flags]"
            )
        policy: Policy = args.policy or policy_from_environment()
        report, context, release = judge(args)
    except (InputError, InvalidConfigError, PlatformDetectionError, PolicyError) as error:
        print(f"compat launch: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(format_report(report, context, launch=args.launch, release=release))
    command = shlex.join(args.launch)
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
    try:
        os.execvp(args.launch[0], args.launch)
    except OSError as error:
        print(f"compat launch: cannot run {args.launch[0]!r}: {error.strerror}", file=sys.stderr)
    return EXIT_INVALID


def accepts(report: Report, policy: Policy) -> bool:
    """Whether `policy` lets the launch `report` judged run."""
    if policy is Policy.WARN:
        return True
    if policy is Policy.PARITY:
        return not report.refused_at_startup
    return report.ok


def _why(report: Report) -> str:
    if report.refused_at_startup:
        return f"SGLang {report.sglang_version} refuses it at start-up"
    return (
        "the page documents it as unsupported; --parity runs what SGLang itself accepts, "
        "--warn-only runs it anyway"
    )
