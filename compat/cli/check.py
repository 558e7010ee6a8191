"""`compat check`: judge launch flags (or a whole launch command) before a model loads.

Exit 0: compatible (warnings allowed); 1: incompatible; 2: invalid input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from compat.engine.parser.lookup import RELEASE
from compat.guard.assumed_words import assumed_lines
from compat.guard.build_words import is_build_finding
from compat.guard.findings import UNMODELLED_RELEASE_RULE
from compat.guard.judge import judge as judge_assembled
from compat.guard.kernel_words import is_kernel_finding
from compat.guard.policy import Policy
from compat.guard.report import Enforcement, Report, Suggestion, runs_as
from compat.guard.shape_words import is_shape_finding
from compat.guard.suggest import ORDER
from compat.guard.verify_words import is_verify_finding
from compat.inputs.assemble import Assembled, InputError, LaunchRequest, assemble
from compat.inputs.checks import echoed, terminal_lines, terminal_text
from compat.inputs.command import LaunchFlags
from compat.inputs.config import InvalidConfigError
from compat.inputs.config_shapes import HEAD_SHAPE_KEYS
from compat.inputs.corrected import corrected_command
from compat.inputs.detect import PlatformDetectionError
from compat.inputs.flags import FLAGS, FlagGroup, flag_of
from compat.inputs.model_source import MODEL_FACTS
from compat.vocab.terms import Severity

EXIT_OK, EXIT_INCOMPATIBLE, EXIT_INVALID = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check SGLang launch flags against the capability matrix",
        description="Check SGLang attention flags against the capability matrix before a "
        "model loads. A whole launch command may follow `--`; flags it does not model are "
        "listed and ignored. SGLang's flags keep sglang.launch_server's names. Exit 0: "
        "compatible, 1: incompatible, 2: invalid input.",
        formatter_class=one_line_help,
    )
    add_sglang_arguments(parser)
    add_model_arguments(parser)
    parser.add_argument(
        "--env",
        action="extend",  # with nargs=1: a list of strings (the parser's `--` check skips it)
        nargs=1,
        default=[],
        metavar="NAME=VALUE",
        help="a variable set next to SGLang that its start-up reads (repeatable); "
        "one not given is assumed unset, as the official images ship it",
    )
    parser.add_argument(
        "--package",
        action="extend",
        nargs=1,
        default=[],
        metavar="NAME==VERSION",
        help="a kernel package's version that SGLang's start-up reads (triton, repeatable); "
        "one not given is the official image's, and the report says where that is unknown",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="say why each fact read from the model config holds",
    )
    parser.add_argument(
        "--parity",
        action="store_true",
        help="exit 1 only when SGLang's own code fails the launch: it refuses to start, or "
        "fails building the backend (default: also for what the page documents as "
        "unsupported)",
    )
    parser.add_argument("launch", nargs="*", metavar="-- LAUNCH COMMAND", help=argparse.SUPPRESS)
    parser.set_defaults(run=run)


def add_sglang_arguments(parser: argparse.ArgumentParser) -> None:
    """SGLang's launch flags, under a heading per what they set, one line each."""
    groups = {group: parser.add_argument_group(group.value) for group in FlagGroup}
    for flag in FLAGS:
        into = groups[flag.group]
        if flag.switch:
            into.add_argument(
                flag.option, dest=flag.field, action="store_const", const=True, help=flag.help
            )
            continue
        # Read as text, integers too: `_integer` words a bad one as AttentionConfig does.
        text = f"{flag.help}: {', '.join(flag.choices)}" if flag.choices else flag.help
        metavar = "N" if flag.integer else "NAME"
        into.add_argument(flag.option, dest=flag.field, metavar=metavar, help=text)


def one_line_help(prog: str) -> argparse.HelpFormatter:
    """--help with room for the longest flag and its value before its help: one line each."""
    return argparse.HelpFormatter(prog, max_help_position=HELP_COLUMN)


HELP_COLUMN = 4 + max(len(f"{flag.option} NAME") for flag in FLAGS) + 2
"""Where each flag's help starts: after its indent and the longest flag with its value."""


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model and machine options, shared by `compat check` and `compat launch`."""
    parser.set_defaults(**{flag.field: None for flag in FLAGS})
    model = parser.add_argument_group("the model and the machine")
    model.add_argument("--attention-arch", metavar="{mha,mla}", help="the model's attention")
    model.add_argument(
        "--draft-attention-arch",
        metavar="{mha,mla}",
        help="the speculative draft model's attention (unset: from its config, else the "
        "model's; an EAGLE3 draft is usually MHA)",
    )
    model.add_argument(
        "--draft-model-config",
        metavar="PATH",
        help="the speculative draft model's config.json (or its directory), where the launch's "
        "--speculative-draft-model-path is not a local one: derives its attention",
    )
    model.add_argument(
        "--model-config",
        metavar="PATH",
        help="a Hugging Face config.json (or its directory): derives architecture, sliding "
        "window, multimodal, encoder-decoder, dual-chunk and sparse attention, a QSA indexer",
    )
    model.add_argument(
        "--model",
        metavar="NAME",
        dest="known_model",
        help="a published checkpoint of the package's model zoo, by name or Hugging Face id "
        "(a wrong name lists them): as --model-config with its config.json, plus the flags its "
        "model card launches it with",
    )
    model.add_argument("--platform", metavar="{cuda,rocm,npu,xpu,cpu}", help="detected if unset")
    model.add_argument(
        "--compute-capability",
        metavar="CC",
        help="10.0, sm100, 100 or a GPU name (detected if unset)",
    )
    model.add_argument(
        "--cuda-version",
        metavar="X.Y",
        help="the CUDA of the PyTorch build SGLang runs on (detected; else the CUDA of the "
        "release's official image)",
    )
    model.add_argument(
        "--gpu",
        metavar="NAME",
        help="a GPU name (H100, B200, MI300X, ...): sets platform and compute capability",
    )
    model.add_argument(
        "--model-architecture",
        metavar="NAME",
        help="the model's architectures[0], e.g. LlamaForCausalLM (SGLang's defaults read it; "
        "alone, it implies --attention-arch)",
    )
    model.add_argument(
        "--kv-heads",
        metavar="N",
        help="the model's KV heads; SGLang divides them by --tp-size (ROCm MLA default)",
    )
    for field_name, key in HEAD_SHAPE_KEYS.items():
        help_text = f"the model's {key}: a kernel's range after the weights load"
        model.add_argument(flag_of(field_name), metavar="N", help=help_text)
    model.add_argument(
        "--sglang-version",
        metavar="X.Y.Z",
        help="the SGLang release to predict (default: the installed one, else the newest known)",
    )
    model.add_argument("--sliding-window", action=argparse.BooleanOptionalAction, default=None)
    model.add_argument("--multimodal", action=argparse.BooleanOptionalAction, default=None)


def run(args: argparse.Namespace) -> int:
    try:
        report, assembled = judge(args)
    except (InputError, InvalidConfigError, PlatformDetectionError) as error:
        if args.json:
            from compat.cli.json_errors import print_json_error

            print_json_error(error)
        print(terminal_lines(f"compat check: {error}"), file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        from compat.cli.json_errors import json_text

        data = {**report.to_dict(), **assembled.context}
        if args.launch:
            launch = assembled.launch
            for entry, suggestion in zip(data["suggestions"], report.suggestions, strict=True):
                command = corrected_command(
                    launch.words, suggestion.flags, suggestion.removes, assembled.flag_release
                )
                entry["command"] = shlex.join(command)
                in_file = config_file_removes(launch, suggestion)
                if in_file:
                    entry["remove_from_config_file"] = in_file
        print(json_text(data))
    else:
        print(
            format_report(
                report, assembled.context, assembled.launch, assembled.flag_release, args.verbose
            )
        )
    passes = (Policy.PARITY if args.parity else Policy.DOCUMENTED).accepts(report)
    return EXIT_OK if passes else EXIT_INCOMPATIBLE


def judge(
    args: argparse.Namespace, process_environment: Mapping[str, str] | None = None
) -> tuple[Report, Assembled]:
    """The report on the flags and launch command of `args`, and what was read to make it
    (`process_environment`: the environment the launch runs in, for `compat launch`).

    Raises InputError, InvalidConfigError or PlatformDetectionError for input it cannot judge.
    """
    request = request_of(args)
    if process_environment is not None:
        request = replace(request, process_environment=process_environment)
    assembled = assemble(request)
    return judge_assembled(assembled), assembled


def request_of(args: argparse.Namespace) -> LaunchRequest:
    """What `compat check` and `compat launch` were told about a launch."""
    return LaunchRequest(
        flags={flag.field: getattr(args, flag.field) for flag in FLAGS},
        command=args.launch,
        model={name: getattr(args, name) for name in (*MODEL_FACTS, "draft_attention_arch")},
        model_config=args.model_config,
        known_model=args.known_model,
        draft_model_config=args.draft_model_config,
        gpu=args.gpu,
        platform=args.platform,
        compute_capability=args.compute_capability,
        cuda_version=args.cuda_version,
        sglang_version=args.sglang_version,
        environment=getattr(args, "env", ()),
        packages=getattr(args, "package", ()),
    )


_LABELS = {Severity.ERROR: "error  ", Severity.WARNING: "warning", Severity.INFO: "info   "}


def format_report(
    report: Report,
    context: dict[str, Any],
    launch: LaunchFlags | None = None,
    release: str = RELEASE,
    verbose: bool = False,
) -> str:
    """The report in words: the verdict, what runs, the findings and the fixes first; where
    the model's facts came from last, in one line (each fact's reason under `verbose`)."""
    errors, warnings = len(report.errors), len(report.warnings)
    verdict = "compatible" if report.ok else "incompatible"
    counts = f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    lines = [f"{verdict}: {counts}"]
    # A release newer than modelled qualifies every answer: said first, once.
    newer = [f for f in report.findings if f.rule == UNMODELLED_RELEASE_RULE]
    lines += [f"  warning: {finding.message}" for finding in newer]
    lines.append(f"  {runs_as(report.resolved, detected='detected' in context)}")
    lines.append(f"  {report.startup_summary}")
    lines += [f"  {line}" for line in assumed_lines(report)]
    startup = [f for f in report.findings if f.enforced is Enforcement.STARTUP]
    build = [f for f in report.findings if is_build_finding(f)]
    # The kernels and the verify pass: SGLang's own failures in the first forward pass.
    kernels = [
        f
        for f in report.findings
        if is_kernel_finding(f) or is_verify_finding(f) or is_shape_finding(f)
    ]
    documented = [
        f
        for f in report.findings
        if f.enforced is not Enforcement.STARTUP
        and f.rule != UNMODELLED_RELEASE_RULE
        and not is_build_finding(f)
        and f not in kernels
    ]
    for title, group in (
        (f"what SGLang {report.sglang_version} does at start-up:", startup),
        (f"what SGLang {report.sglang_version} does building the backend:", build),
        (f"what SGLang {report.sglang_version} does in the first forward pass:", kernels),
        ("what the page documents:", documented),
    ):
        if group:
            lines.append(title)
        for finding in sorted(group, key=lambda f: _ORDER[f.severity]):
            lines.append(f"  {_LABELS[finding.severity]} [{finding.rule}] {finding.message}")
            own = finding.enforced is Enforcement.STARTUP or finding in build or finding in kernels
            if finding.severity is Severity.ERROR and not own:
                lines.append(f"            ({finding.enforced.label})")
    if report.suggestions:
        lines += format_suggestions(report.suggestions, launch, release)
    lines += _provenance(context, verbose)
    if report.assumed_cuda is not None:  # where the machine's CUDA came from, with the model's
        lines.append(
            f"CUDA not given: taken as {report.assumed_cuda}, the CUDA of SGLang "
            f"{report.sglang_version}'s official image (--cuda-version)"
        )
    lines += [f"note: {note}" for note in context.get("launch_notes", ())]
    if context.get("not_sglang_launch"):
        lines.append(f"note: {NOT_SGLANG}")
    if context.get("ignored_flags"):
        lines.append("ignored launch flags (not modeled): " + " ".join(context["ignored_flags"]))
    # Every line may hold text from a file or the command line: none reaches the terminal raw.
    return "\n".join(map(terminal_text, lines))


_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _provenance(context: dict[str, Any], verbose: bool) -> list[str]:
    """Where the model's facts came from: one line after the findings, each fact with its
    reason under --verbose."""
    lines = []
    facts = context.get("from_model_config", {})
    if "model_config" in context:
        read = ", ".join(f"{name}={echoed(fact['value'])}" for name, fact in facts.items())
        why = "" if verbose or not facts else " (--verbose says why)"
        lines.append(f"model config: {context['model_config']}{': ' + read if read else ''}{why}")
    if "published_config" in context:
        # One line of provenance: the package's copy stands in for a local config.json.
        looked = context.get("model_path_not_found")
        where = f" in {looked}" if looked else ""
        lines.append(
            f"  (no local config.json{where}; yours may differ: --model-config PATH reads it)"
        )
    elif "model_path_not_found" in context:
        lines.append(
            f"--model-path: no config.json found locally (looked in "
            f"{context['model_path_not_found']}); the network is never used"
        )
    if verbose:
        lines += [
            f"  from the model config: {name}={echoed(fact['value'])} ({fact['why']})"
            for name, fact in facts.items()
        ]
    draft = context.get("draft_model_config")
    if draft is not None and "overridden" not in draft:  # else a note says which won
        architecture = (
            echoed(draft["architecture"]) if draft["architecture"] else "no architectures"
        )
        value = f"draft_attention_arch={draft['draft_attention_arch']}"
        why = f" ({draft['why']})" if verbose else " (--verbose says why)"
        lines.append(f"draft model config: {draft['source']}: {architecture}, {value}{why}")
    return lines


def format_suggestions(
    suggestions: Sequence[Suggestion], launch: LaunchFlags | None = None, release: str = RELEASE
) -> list[str]:
    """Ready-to-paste flags, or the whole corrected launch command when one was given.

    A corrected command is the command as read (a pasted one split into its words), with
    the changes made in it: a runnable shell command that passes when checked again.
    """
    if launch is not None and launch.words:
        lines = [f"corrected launch commands ({ORDER}):"]
        for suggestion in suggestions:
            lines.append(f"  # {_changes(suggestion)}: {suggestion.reason}")
            command = corrected_command(launch.words, suggestion.flags, suggestion.removes, release)
            lines.append(f"  {shlex.join(command)}")
            in_file = config_file_removes(launch, suggestion)
            if in_file and launch.config_file is not None:
                lines.append(f"  # and delete {', '.join(in_file)} from {launch.config_file.path}")
        return lines
    lines = [f"suggested flags ({ORDER}):"]
    width = min(max(len(s.summary) for s in suggestions), 40)
    lines += [f"  {s.summary:<{width}}  # {s.reason}" for s in suggestions]
    return lines


NOT_SGLANG = (
    "the command does not start an SGLang server (python3 -m sglang.launch_server or sglang "
    "serve): its flags were judged as SGLang's, with SGLang's defaults for the rest"
)


def config_file_removes(launch: LaunchFlags, suggestion: Suggestion) -> list[str]:
    """The flags a suggestion removes that the launch's `--config` file sets: the command
    line cannot unset them."""
    return [flag for flag in suggestion.removes if flag in launch.from_config_file]


def _changes(suggestion: Suggestion) -> str:
    count = suggestion.changes
    return f"{count} change{'s' * (count != 1)}"
