"""The one way to build an AttentionConfig from what a caller knows of a launch.

`compat check`, `compat launch`, `enforce()` (and with it the SGLang plugin) and the page's
launch examples each describe a launch in a `LaunchRequest`: SGLang flags (as text or
values), maybe a whole launch command, the model (or its config.json), the machine (or
nothing, to detect it). `assemble()` reads it in one order, the same for every caller:

1. the launch command, with the flag list of the release being predicted;
2. the flags given beside it (a flag may come once);
3. the model config (`--model NAME`'s published one, `--model-config`, else the one
   `--model-path` names), under the model facts given explicitly; with none, the config
   type the release's model for `--model-architecture` takes; then the draft model's
   (`--draft-model-config`, else the one `--speculative-draft-model-path` names);
4. the machine: `--gpu` / `--compute-capability` / `--platform`, else detected with torch.

It returns the configuration and what was read to make it (for the report).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compat.engine.models.lookup import ModelKnowledge
from compat.engine.parser.lookup import RELEASE
from compat.inputs.checks import shown
from compat.inputs.command import (
    SWITCH_GIVEN,
    LaunchFlags,
    parse_launch_command,
    summarized,
)
from compat.inputs.config import AttentionConfig, InputProblem, InvalidConfigError, chosen_release
from compat.inputs.environment import parse_assignments, read_process
from compat.inputs.flags import FLAGS, flag_of
from compat.inputs.implied_type import add_implied_model_type
from compat.inputs.model_source import (
    INTEGER_FACTS,
    add_draft_model,
    add_known_model,
    add_model_config,
    add_published_config,
    check_same_model,
    model_path_config,
    unserved,
)
from compat.inputs.packages import add_packages
from compat.inputs.release_choice import release_models
from compat.releases import RELEASES, UnknownReleaseError
from compat.vocab.hardware import ComputeCapability

if TYPE_CHECKING:
    from compat.inputs.detect import DetectedPlatform


class InputError(InvalidConfigError):
    """Input that cannot be read into a configuration; the message is one line.

    An InvalidConfigError, so that the API raises what its error contract names.
    `problems` holds the invalid flag values among its problems (flag, value, choices).
    """

    def __init__(self, message: str, problems: Sequence[InputProblem] = ()) -> None:
        ValueError.__init__(self, message)
        self.problems = tuple(problems)


# `--device` values that name a platform of their own.
DEVICE_PLATFORMS = ("cpu", "npu", "xpu")

# The model's facts a caller may state; each overrides what a model config implies.


@dataclass(frozen=True)
class LaunchRequest:
    """Everything a caller knows of one launch, before it is read."""

    flags: Mapping[str, Any] = field(default_factory=dict)
    """AttentionConfig field -> value (None: not given), as text or as a value."""
    command: Sequence[str] = ()
    """A whole launch command (`python3 -m sglang.launch_server --flag value ...`)."""
    model: Mapping[str, Any] = field(default_factory=dict)
    """Model facts stated by the caller (`MODEL_FACTS` and other feature switches)."""
    model_config: str | None = None
    """A Hugging Face config.json, or its directory."""
    known_model: str | None = None
    """A model of `compat.inputs.zoo` (`--model NAME`): its published config.json."""
    draft_model_config: str | None = None
    """The speculative draft model's config.json, or its directory (`--draft-model-config`)."""
    model_path: str | None = None
    """`--model-path` of a launch whose arguments SGLang already read (`enforce()`: its
    ServerArgs), where there is no `command` to read it from; given, the draft's path is
    known too, and its None means the draft is built from the target's checkpoint."""
    draft_model_path: str | None = None
    """`--speculative-draft-model-path` of that launch."""
    gpu: str | None = None
    platform: str | None = None
    compute_capability: Any = None
    """`10.0`, `sm100`, `(10, 0)` or a GPU name."""
    cuda_version: str | None = None
    """`12.9`, `13.0`: the CUDA of the PyTorch build SGLang runs on (`--cuda-version`)."""
    detect: bool = True
    """Ask torch for the machine when the request does not name it."""
    sglang_version: str | None = None
    environment: Sequence[str] = ()
    """`--env NAME=VALUE` assignments: the variables set next to SGLang."""
    packages: Sequence[str] = ()
    """`--package NAME==VERSION` pins: the kernel packages' versions SGLang runs with."""
    installed_version: Callable[[str], str | None] | None = None
    """Reads an installed distribution's version, None where it is not installed
    (`compat.inputs.installed.installed_version`: `enforce()`, the plugin): asked only for a
    package the release reads on the launch's machine."""
    process_environment: Mapping[str, str] | None = None
    """The environment SGLang runs in (`compat launch`, `enforce()`, the plugin): the
    variables the release reads are taken from it; `environment` overrides them."""


@dataclass(frozen=True)
class Assembled:
    """A launch read into a configuration, with what was read to make it."""

    config: AttentionConfig
    context: dict[str, Any]
    """What the report shows besides the findings (ignored flags, the model config, ...)."""
    detected: DetectedPlatform | None
    """The machine as torch found it, when it was detected."""
    flag_release: str
    """The release whose flag list read the launch command."""
    launch: LaunchFlags
    """The launch command as read: its words, its `--config` file, what it sets."""


def assemble(request: LaunchRequest) -> Assembled:
    """The configuration a launch request describes; raises InputError (every problem of
    the request at once, on one line), InvalidConfigError, or PlatformDetectionError when
    the machine cannot be detected."""
    problems: list[str] = []
    launch, release = _read_launch(request, problems)
    fields = _flag_fields(request, launch, problems)
    context: dict[str, Any] = {"ignored_flags": list(launch.ignored), "from_model_config": {}}
    if launch.notes:
        context["launch_notes"] = list(launch.notes)
    if not launch.sglang_launch:
        context["not_sglang_launch"] = True
    models = release_models(request.sglang_version)
    model_config = request.model_config
    if request.known_model is not None:
        if model_config is not None:
            problems.append("--model and --model-config both name the model; give one")
        else:
            add_known_model(request, request.known_model, models, fields, context, problems)
            check_same_model(request.known_model, launch.model_path, problems)
    else:
        if model_config is None:
            model_config = model_path_config(launch.model_path, context)
        if model_config is not None:
            add_model_config(request, model_config, models, fields, context, problems)
        elif launch.model_path is not None:
            add_published_config(request, launch.model_path, models, fields, context)
    for name, value in request.model.items():
        if value is not None:
            fields[name] = _integer(name, value, problems) if name in INTEGER_FACTS else value
    if request.sglang_version is not None:
        fields["sglang_version"] = request.sglang_version
    if request.environment or request.process_environment:
        _add_environment(request, fields, problems)
    if "attention_arch" not in fields and not problems:
        _implied_arch(fields, models, context, problems)
    if not problems:
        add_implied_model_type(fields, models, context)
    add_draft_model(
        request,
        launch.draft_model_path or request.draft_model_path,
        launch.model_path or request.model_path,
        models,
        fields,
        context,
        problems,
    )
    detected = _add_machine(request, fields, context, problems)
    if request.packages or request.installed_version is not None:
        add_packages(request.packages, request.installed_version, fields, problems)
    if problems:
        raise _input_error(problems, fields)
    return Assembled(AttentionConfig(**fields), context, detected, release, launch)


def _add_environment(request: LaunchRequest, fields: dict[str, Any], problems: list[str]) -> None:
    """The launch's variables: those of the process environment the release reads, then
    the `--env` assignments over them."""
    pairs: dict[str, str] = {}
    if request.process_environment:
        try:
            rules = chosen_release(fields.get("sglang_version"))[0]
        except UnknownReleaseError:
            return  # the config's own check names the release
        pairs.update(read_process(request.process_environment, rules))
    try:
        pairs.update(parse_assignments(request.environment))
    except ValueError as error:
        problems.append(str(error))
    if pairs:
        fields["environment"] = tuple(sorted(pairs.items()))


def _input_error(problems: list[str], fields: dict[str, Any]) -> InputError:
    """Every problem at once: those found reading the request, then the invalid values."""
    invalid: tuple[InputProblem, ...] = ()
    try:
        AttentionConfig(**fields)
    except InvalidConfigError as error:
        invalid = error.problems
    except TypeError:  # a field's value of a type no config takes: its flag says so already
        pass
    more = [text for text in map(str, invalid) if text not in problems]  # each once
    return InputError(summarized([*problems, *more]), invalid)


def _implied_arch(
    fields: dict[str, Any],
    models: ModelKnowledge | None,
    context: dict[str, Any],
    problems: list[str],
) -> None:
    """The attention architecture of `--model-architecture`, as the release's ModelConfig
    decides it; an architecture the release does not serve is invalid input."""
    name = fields.get("model_architecture")
    if not isinstance(name, str):
        problems.append(
            "the model's attention architecture is unknown: pass --model NAME (a published "
            "checkpoint; a wrong name lists them), or --attention-arch {mha,mla}, "
            "--model-architecture NAME or --model-config PATH"
        )
        return
    arch = None if models is None else models.attention_arch(name)
    if models is None or arch is None:
        problems.append(f"--model-architecture: {unserved(name, models)}")
        return
    fields["attention_arch"] = arch.value
    context["from_model_config"]["attention_arch"] = {
        "value": arch.value,
        "why": f"SGLang {models.release} runs {name} as {arch.label} (configs/model_config.py)",
    }


def _read_launch(request: LaunchRequest, problems: list[str]) -> tuple[LaunchFlags, str]:
    """The launch command, read with the flags of the release being predicted."""
    if not request.command:
        return LaunchFlags({}, None, ()), RELEASE
    try:
        # Read with the flags of the release that answers; for a release newer than the
        # newest modelled, a flag that one does not know is listed, not refused.
        rules, _, newer = chosen_release(request.sglang_version)
        release = rules.release
        launch = parse_launch_command(request.command, release, unknown_listed=newer is not None)
    except UnknownReleaseError as error:  # worded as the configuration's validation words it
        choices = tuple(RELEASES)
        problems.append(
            str(InputProblem("--sglang-version", request.sglang_version, error.reason, choices))
        )
        return LaunchFlags({}, None, ()), RELEASE
    except ValueError as error:  # a release without a flag list
        problems.append(str(error))
        return LaunchFlags({}, None, ()), RELEASE
    problems += launch.problems
    return launch, release


def _flag_fields(
    request: LaunchRequest, launch: LaunchFlags, problems: list[str]
) -> dict[str, Any]:
    """The SGLang flags of the launch command and of the request; a flag may come once."""
    fields: dict[str, Any] = dict(launch.values)
    for flag in FLAGS:
        if flag.switch and fields.get(flag.field) == SWITCH_GIVEN:
            fields[flag.field] = True  # a switch of the launch command is given, or absent
    for flag in FLAGS:
        given = request.flags.get(flag.field)
        if given is None or (flag.switch and given is False):
            continue
        if flag.field in fields and fields[flag.field] != given:
            problems.append(
                f"{flag.option} is {given!r} here but {fields[flag.field]!r} in the launch "
                "command; give it once"
            )
        fields[flag.field] = given
    for flag in FLAGS:
        if flag.integer and flag.field in fields:
            fields[flag.field] = _integer(flag.field, fields[flag.field], problems)
    return fields


def _integer(field_name: str, value: Any, problems: list[str]) -> Any:
    """A flag's integer: text is converted (a bad one worded as the flag's), values pass."""
    if not isinstance(value, str):
        return value  # a value: AttentionConfig's validation judges it
    if re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
        return int(value)
    problems.append(f"{flag_of(field_name)}: expected a positive integer, got {shown(value)}")
    return None


def _add_machine(
    request: LaunchRequest, fields: dict[str, Any], context: dict[str, Any], problems: list[str]
) -> DetectedPlatform | None:
    """Platform and compute capability from the request, else detected (when allowed and
    the request has no problem already)."""
    try:
        hardware = _hardware(request)
    except InputError as error:
        problems.append(str(error))
        hardware = {}
    fields.update(hardware)
    if request.cuda_version is not None:
        cuda = _cuda_version(request.cuda_version)
        if cuda is None:
            problems.append(
                f"--cuda-version: {shown(request.cuda_version)} is not a CUDA version "
                "(MAJOR.MINOR, e.g. 12.9 or 13.0)"
            )
        else:
            fields["cuda_version"] = cuda
    device = fields.get("device")
    if request.platform is not None:
        fields["platform"] = request.platform
    elif "platform" in hardware:
        context["hardware_from"] = "--gpu" if request.gpu else "--compute-capability"
    elif device in DEVICE_PLATFORMS:
        # `--device cpu` (npu, xpu) names the machine SGLang runs on: no detection needed.
        fields["platform"] = device
        context["hardware_from"] = "--device"
    elif request.detect and not problems:
        from compat.inputs.detect import detected_fields

        detected, context["detected"] = detected_fields(fields)
        return detected
    return None


def _cuda_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of `12.9`, `13.0` or `13`; None for anything else."""
    parts = text.strip().split(".")
    if not 1 <= len(parts) <= 2 or not all(p.isdigit() and len(p) <= 3 for p in parts):
        return None
    major, minor = int(parts[0]), int(parts[1]) if len(parts) == 2 else 0
    return (major, minor) if major > 0 else None


def _hardware(request: LaunchRequest) -> dict[str, Any]:
    return hardware_fields(request.gpu, request.compute_capability)


def hardware_fields(gpu_name: str | None, capability: object) -> dict[str, Any]:
    """Platform and compute capability from a GPU name (`--gpu`) or a compute capability.

    A compute capability alone means CUDA; a GPU name sets its own platform. Raises
    InputError for an unknown GPU (with a did-you-mean) or a GPU that contradicts the
    compute capability. Shared by every command that takes `--gpu`.
    """
    from compat.inputs.gpus import UnknownGpuError, find_gpu, gpu_named

    named = gpu_name
    if isinstance(capability, str) and find_gpu(capability) is not None:
        named, capability = capability, None
    fields: dict[str, Any] = {}
    if capability is not None:
        fields["platform"] = "cuda"
        fields["compute_capability"] = capability
    if named is not None:
        try:
            gpu = gpu_named(named)
        except UnknownGpuError as error:
            flag = "--gpu" if named == gpu_name else "--compute-capability"
            raise InputError(f"{flag}: {error}") from None
        fields["platform"] = gpu.platform.value
        if gpu.capability is not None:
            given = _capability(capability)
            if given is not None and given != gpu.capability:
                raise InputError(
                    f"--gpu {named} is {gpu.capability}, but --compute-capability is "
                    f"{shown(capability)}; give one"
                )
            if not isinstance(capability, str) or given is not None:
                fields["compute_capability"] = (gpu.capability.major, gpu.capability.minor)
            # else an unreadable one stays: the configuration's check lists it with the rest
    return fields


def _capability(text: object) -> ComputeCapability | None:
    """The compute capability `text` spells, or None when it is not text or spells none."""
    if not isinstance(text, str):
        return None
    try:
        return ComputeCapability.parse(text)
    except ValueError:
        return None
