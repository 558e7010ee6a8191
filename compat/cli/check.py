"""`compat check`: judge launch flags (or a whole launch command) before a model loads.

Exit 0: compatible (warnings allowed); 1: incompatible; 2: invalid input.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compat.engine.parser.lookup import RELEASE
from compat.guard.check import check
from compat.guard.extra_findings import with_conflicts, with_software_findings
from compat.guard.report import Enforcement, Report, Suggestion, runs_as
from compat.inputs.command import (
    LaunchFlags,
    corrected_command,
    launch_release,
    model_config_conflicts,
    parse_launch_command,
)
from compat.inputs.config import AttentionConfig, InvalidConfigError
from compat.inputs.flags import FLAGS, flag_of
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Severity

if TYPE_CHECKING:
    from compat.inputs.detect import DetectedPlatform

EXIT_OK, EXIT_INCOMPATIBLE, EXIT_INVALID = 0, 1, 2


class UsageError(Exception):
    """Input the command cannot judge; printed as one line, exit 2."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check SGLang launch flags against the capability matrix",
        description="Check SGLang attention flags against the capability matrix before a "
        "model loads. A whole launch command may follow `--`; flags it does not model are "
        "listed and ignored. Exit 0: compatible, 1: incompatible, 2: invalid input.",
    )
    sglang = parser.add_argument_group("SGLang flags (same names as sglang.launch_server)")
    for flag in FLAGS:
        # Read as text, integers too: `_integer` words a bad one as AttentionConfig does.
        sglang.add_argument(flag.option, dest=flag.field, metavar="VALUE")
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--parity",
        action="store_true",
        help="exit 1 only when SGLang itself refuses to start (default: also for what the "
        "page documents as unsupported)",
    )
    parser.add_argument("launch", nargs="*", metavar="-- LAUNCH COMMAND", help=argparse.SUPPRESS)
    parser.set_defaults(run=run)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model and machine options, shared by `compat check` and `compat launch`."""
    parser.set_defaults(**{flag.field: None for flag in FLAGS})
    model = parser.add_argument_group("the model and the machine")
    model.add_argument("--attention-arch", metavar="{mha,mla}", help="the model's attention")
    model.add_argument(
        "--model-config",
        metavar="PATH",
        help="a Hugging Face config.json (or its directory): derives architecture, sliding "
        "window, multimodal, encoder-decoder, dual-chunk and sparse attention",
    )
    model.add_argument("--platform", metavar="{cuda,rocm,npu,xpu,cpu}", help="detected if unset")
    model.add_argument(
        "--compute-capability",
        metavar="CC",
        help="10.0, sm100, 100 or a GPU name (detected if unset)",
    )
    model.add_argument(
        "--gpu",
        metavar="NAME",
        help="a GPU name (H100, B200, MI300X, ...): sets platform and compute capability",
    )
    model.add_argument(
        "--model-architecture",
        metavar="NAME",
        help="the model's architectures[0], e.g. LlamaForCausalLM (SGLang's defaults read it)",
    )
    model.add_argument(
        "--kv-heads", metavar="N", help="KV heads per tensor-parallel rank (ROCm MLA default)"
    )
    model.add_argument(
        "--sglang-version",
        metavar="X.Y.Z",
        help="the SGLang release to predict (default: the installed one, else the newest known)",
    )
    model.add_argument("--sliding-window", action=argparse.BooleanOptionalAction, default=None)
    model.add_argument("--multimodal", action=argparse.BooleanOptionalAction, default=None)


def run(args: argparse.Namespace) -> int:
    try:
        report, context = judge(args)
    except (UsageError, InvalidConfigError) as error:
        if args.json:
            from compat.cli.json_errors import print_json_error

            print_json_error(error)
        print(f"compat check: {error}", file=sys.stderr)
        return EXIT_INVALID
    release = context.pop("_flag_release")
    if args.json:
        data = {**report.to_dict(), **context}
        if args.launch:
            for entry, suggestion in zip(data["suggestions"], report.suggestions, strict=True):
                command = corrected_command(
                    args.launch, suggestion.flags, suggestion.removes, release
                )
                entry["command"] = shlex.join(command)
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(format_report(report, context, launch=args.launch, release=release))
    passes = not report.refused_at_startup if args.parity else report.ok
    return EXIT_OK if passes else EXIT_INCOMPATIBLE


def judge(args: argparse.Namespace) -> tuple[Report, dict[str, Any]]:
    """The report on the flags and launch command of `args`, and what was read to make it.

    Raises UsageError or InvalidConfigError for input it cannot judge.
    """
    config, context = _build(args)
    report = check(config)
    detected = context.pop("_detected", None)
    if detected is not None:
        report = with_software_findings(report, detected)
    return with_conflicts(report, context), context


def _build(args: argparse.Namespace) -> tuple[AttentionConfig, dict[str, Any]]:
    """The configuration `args` describe, and what was read to make it (for the report)."""
    launch, release = _read_launch(args)
    fields = _flag_fields(args, launch)
    context: dict[str, Any] = {"ignored_flags": list(launch.ignored), "from_model_config": {}}
    context["_flag_release"] = release
    if launch.notes:
        context["launch_notes"] = list(launch.notes)
    model_config = args.model_config or _model_path_config(launch.model_path, context)
    if model_config is not None:
        _add_model_config(args, model_config, fields, context)
    for name in ("attention_arch", "sliding_window", "multimodal", "model_architecture"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    if args.kv_heads is not None:
        fields["kv_heads"] = _integer("kv_heads", args.kv_heads)
    if args.sglang_version is not None:
        fields["sglang_version"] = args.sglang_version
    if "attention_arch" not in fields:
        raise UsageError(
            "the model's attention architecture is unknown: pass --attention-arch {mha,mla} "
            "or --model-config PATH"
        )
    _add_machine(args, fields, context)
    return AttentionConfig(**fields), context


def _read_launch(args: argparse.Namespace) -> tuple[LaunchFlags, str]:
    """The launch command after `--`, read with the flags of the release being predicted."""
    if not args.launch:
        return LaunchFlags({}, None, ()), RELEASE
    try:
        release = launch_release(args.sglang_version)
        launch = parse_launch_command(args.launch, release)
    except ValueError as error:  # a release not modelled, or without a flag list
        raise UsageError(str(error)) from None
    if launch.problems:
        raise UsageError("; ".join(launch.problems))
    return launch, release


def _flag_fields(args: argparse.Namespace, launch: LaunchFlags) -> dict[str, Any]:
    """The SGLang flags of the launch command and of the options; a flag may come once."""
    fields: dict[str, Any] = dict(launch.values)
    for flag in FLAGS:
        given = getattr(args, flag.field)
        if given is None:
            continue
        if flag.field in fields and fields[flag.field] != given:
            raise UsageError(
                f"{flag.option} is {given!r} here but {fields[flag.field]!r} in the launch "
                "command; give it once"
            )
        fields[flag.field] = given
    for flag in FLAGS:
        if flag.integer and flag.field in fields:
            fields[flag.field] = _integer(flag.field, fields[flag.field])
    return fields


def _add_model_config(
    args: argparse.Namespace, path: str, fields: dict[str, Any], context: dict[str, Any]
) -> None:
    """What the model's config.json implies, where no option says otherwise."""
    from compat.inputs.model_config import ModelConfigError, load_model_facts

    try:
        facts = load_model_facts(path)
    except ModelConfigError as error:
        raise UsageError(str(error)) from None
    explicit = {
        "attention_arch": args.attention_arch,
        "sliding_window": args.sliding_window,
        "multimodal": args.multimodal,
        "model_architecture": args.model_architecture,
        "kv_heads": args.kv_heads,
    }
    derived = facts.config_fields()
    for name, value in derived.items():
        if explicit.get(name) is None:
            fields[name] = value
    context["model_config"] = str(facts.path)
    context["from_model_config"] = {
        name: {"value": derived[name], "why": why}
        for name, why in facts.reasons().items()
        if explicit.get(name) is None and name in derived
    }
    context["model_config_conflicts"] = model_config_conflicts(explicit, derived, facts.reasons())


def _add_machine(args: argparse.Namespace, fields: dict[str, Any], context: dict[str, Any]) -> None:
    """Platform and compute capability from the options, else detected."""
    hardware = _hardware(args)
    fields.update(hardware)
    if args.platform is not None:
        fields["platform"] = args.platform
    elif "platform" in hardware:
        context["hardware_from"] = "--gpu" if args.gpu else "--compute-capability"
    else:
        context["_detected"], context["detected"] = _detect(fields)


def _integer(field: str, text: str) -> Any:
    if isinstance(text, str) and re.fullmatch(r"[+-]?\d{1,18}", text.strip()):
        return int(text)
    raise UsageError(f"{flag_of(field)}: expected a positive integer, got {text!r}")


def _model_path_config(model_path: str | None, context: dict[str, Any]) -> str | None:
    """The config.json `--model-path` names: a local directory or the offline HF cache."""
    if model_path is None:
        return None
    from compat.inputs.hf_cache import locate_model_config

    located = locate_model_config(model_path)
    if located.config is None:
        context["model_path_not_found"] = located.searched
        return None
    return str(located.config)


def _hardware(args: argparse.Namespace) -> dict[str, Any]:
    """Platform and compute capability from --gpu or --compute-capability.

    A compute capability alone means CUDA; a GPU name sets its own platform.
    """
    from compat.inputs.gpus import UnknownGpuError, find_gpu, gpu_named

    named = args.gpu
    capability = args.compute_capability
    if capability is not None and find_gpu(capability) is not None:
        named, capability = capability, None
    fields: dict[str, Any] = {}
    if capability is not None:
        fields["platform"] = "cuda"
        fields["compute_capability"] = capability
    if named is not None:
        try:
            gpu = gpu_named(named)
        except UnknownGpuError as error:
            flag = "--gpu" if named == args.gpu else "--compute-capability"
            raise UsageError(f"{flag}: {error}") from None
        fields["platform"] = gpu.platform.value
        if gpu.capability is not None:
            if capability is not None and ComputeCapability.parse(capability) != gpu.capability:
                raise UsageError(
                    f"--gpu {named} is {gpu.capability}, but --compute-capability is "
                    f"{capability}; give one"
                )
            fields["compute_capability"] = (gpu.capability.major, gpu.capability.minor)
    return fields


def _detect(fields: dict[str, Any]) -> tuple[DetectedPlatform, dict[str, Any]]:
    """Fill platform, compute capability and CUDA version from torch; say what was found."""
    from compat.inputs.detect import PlatformDetectionError, detect_platform

    try:
        detected = detect_platform()
    except PlatformDetectionError as error:
        raise UsageError(str(error)) from None
    fields["platform"] = detected.platform.value
    if "compute_capability" not in fields and detected.compute_capability is not None:
        capability = detected.compute_capability
        fields["compute_capability"] = (capability.major, capability.minor)
    if detected.cuda_version is not None:
        fields["cuda_version"] = detected.cuda_version
    return detected, {
        "platform": detected.platform.value,
        "compute_capability": None
        if detected.compute_capability is None
        else detected.compute_capability.dotted,
        "device": detected.device_name,
    }


_LABELS = {Severity.ERROR: "error  ", Severity.WARNING: "warning", Severity.INFO: "info   "}


def format_report(
    report: Report,
    context: dict[str, Any],
    launch: Sequence[str] | None = None,
    release: str = RELEASE,
) -> str:
    errors, warnings = len(report.errors), len(report.warnings)
    verdict = "compatible" if report.ok else "incompatible"
    counts = f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    lines = [
        f"{verdict}: {counts}",
        f"  {runs_as(report.resolved, detected='detected' in context)}",
    ]
    lines.append(f"  {report.startup_summary}")
    if "model_config" in context:
        lines.append(f"  model config: {context['model_config']}")
    if "model_path_not_found" in context:
        lines.append(
            f"  --model-path: no config.json found locally (looked in "
            f"{context['model_path_not_found']}); the network is never used"
        )
    for name, fact in context.get("from_model_config", {}).items():
        lines.append(f"  from the model config: {name}={fact['value']} ({fact['why']})")
    startup = [f for f in report.findings if f.enforced is Enforcement.STARTUP]
    documented = [f for f in report.findings if f.enforced is not Enforcement.STARTUP]
    for title, group in (
        (f"what SGLang {report.sglang_version} does at start-up:", startup),
        ("what the page documents:", documented),
    ):
        if group:
            lines.append(title)
        for finding in sorted(group, key=lambda f: _ORDER[f.severity]):
            lines.append(f"  {_LABELS[finding.severity]} [{finding.rule}] {finding.message}")
            if finding.severity is Severity.ERROR and finding.enforced is not Enforcement.STARTUP:
                lines.append(f"            ({finding.enforced.label})")
    if report.suggestions:
        lines += format_suggestions(report.suggestions, launch, release)
    lines += [f"note: {note}" for note in context.get("launch_notes", ())]
    if context.get("ignored_flags"):
        lines.append("ignored launch flags (not modeled): " + " ".join(context["ignored_flags"]))
    return "\n".join(lines)


_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def format_suggestions(
    suggestions: Sequence[Suggestion], launch: Sequence[str] | None = None, release: str = RELEASE
) -> list[str]:
    """Ready-to-paste flags, or the whole corrected launch command when one was given."""
    if launch:
        lines = ["corrected launch commands (each checked to pass; fewest changes first):"]
        for suggestion in suggestions:
            lines.append(f"  # {_changes(suggestion)}: {suggestion.reason}")
            command = corrected_command(launch, suggestion.flags, suggestion.removes, release)
            lines.append(f"  {shlex.join(command)}")
        return lines
    lines = ["suggested flags (each checked to pass; fewest changes first):"]
    width = min(max(len(s.summary) for s in suggestions), 40)
    lines += [f"  {s.summary:<{width}}  # {s.reason}" for s in suggestions]
    return lines


def _changes(suggestion: Suggestion) -> str:
    count = suggestion.changes
    return f"{count} change{'s' * (count != 1)}"
