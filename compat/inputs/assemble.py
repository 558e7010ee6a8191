"""The one way to build an AttentionConfig from what a caller knows of a launch.

`compat check`, `compat launch`, `enforce()` (and with it the SGLang plugin) and the page's
launch examples each describe a launch in a `LaunchRequest`: SGLang flags (as text or
values), maybe a whole launch command, the model (or its config.json), the machine (or
nothing, to detect it). `assemble()` reads it in one order, the same for every caller:

1. the launch command, with the flag list of the release being predicted;
2. the flags given beside it (a flag may come once);
3. the model config (`--model NAME`'s published one, `--model-config`, else the one
   `--model-path` names), under the model facts given explicitly;
4. the machine: `--gpu` / `--compute-capability` / `--platform`, else detected with torch.

It returns the configuration and what was read to make it (for the report).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compat.engine.models.lookup import ModelKnowledge
from compat.engine.parser.lookup import RELEASE
from compat.inputs.checks import shown
from compat.inputs.command import (
    SWITCH_GIVEN,
    LaunchFlags,
    model_config_conflicts,
    parse_launch_command,
    summarized,
)
from compat.inputs.config import AttentionConfig, InputProblem, InvalidConfigError, chosen_release
from compat.inputs.flags import FLAGS, flag_of
from compat.inputs.release_choice import release_models
from compat.releases import RELEASES, UnknownReleaseError
from compat.vocab.hardware import ComputeCapability
from compat.vocab.spelling import closest, did_you_mean

if TYPE_CHECKING:
    from compat.inputs.detect import DetectedPlatform
    from compat.inputs.model_config import ModelFacts


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
MODEL_FACTS = ("attention_arch", "sliding_window", "multimodal", "model_architecture", "kv_heads")


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
    gpu: str | None = None
    platform: str | None = None
    compute_capability: Any = None
    """`10.0`, `sm100`, `(10, 0)` or a GPU name."""
    detect: bool = True
    """Ask torch for the machine when the request does not name it."""
    sglang_version: str | None = None


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
            _add_known_model(request, request.known_model, models, fields, context, problems)
            _check_same_model(request.known_model, launch.model_path, problems)
    else:
        if model_config is None:
            model_config = _model_path_config(launch.model_path, context)
        if model_config is not None:
            _add_model_config(request, model_config, models, fields, context, problems)
        elif launch.model_path is not None:
            _add_published_config(request, launch.model_path, models, fields, context)
    for name, value in request.model.items():
        if value is not None:
            fields[name] = _integer(name, value, problems) if name == "kv_heads" else value
    if request.sglang_version is not None:
        fields["sglang_version"] = request.sglang_version
    if "attention_arch" not in fields and not problems:
        _implied_arch(fields, models, context, problems)
    detected = _add_machine(request, fields, context, problems)
    if problems:
        raise _input_error(problems, fields)
    return Assembled(AttentionConfig(**fields), context, detected, release, launch)


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
        problems.append(f"--model-architecture: {_unserved(name, models)}")
        return
    fields["attention_arch"] = arch.value
    context["from_model_config"]["attention_arch"] = {
        "value": arch.value,
        "why": f"SGLang {models.release} runs {name} as {arch.label} (configs/model_config.py)",
    }


def _unserved(name: str, models: ModelKnowledge | None) -> str:
    """Why an architecture the release does not serve cannot be judged, and what to do."""
    known = () if models is None else tuple(sorted(models.architectures))
    release = "this release" if models is None else f"SGLang {models.release}"
    return (
        f"{release} serves no architecture {shown(name)}{did_you_mean(closest(name, known))}; "
        "pass --attention-arch {mha,mla} to check it anyway"
    )


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


def _add_model_config(
    request: LaunchRequest,
    path: str,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
    problems: list[str],
) -> None:
    """What the model's config.json implies, where the request states nothing else."""
    from compat.inputs.model_config import ModelConfigError, load_model_facts

    named = "--model-config" if request.model_config is not None else "--model-path"
    try:
        facts = load_model_facts(path, models)
    except ModelConfigError as error:
        problems.append(f"{named}: {error}")
        return
    name = facts.architectures[0] if facts.architectures else None
    # As `--model-architecture NAME` is answered: an architecture the release does not serve
    # is not judged as some default one.
    unserved = models is not None and name is not None and models.attention_arch(name) is None
    if name is not None and unserved and request.model.get("attention_arch") is None:
        problems.append(f"{named}: {facts.path}: architectures[0]: {_unserved(name, models)}")
        return
    _add_model_facts(request, facts, fields, context)


def _add_known_model(
    request: LaunchRequest,
    name: str,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
    problems: list[str],
) -> None:
    """What a known model's published config.json implies, and the flags its card adds."""
    from compat.inputs.zoo import UnknownModelError, known_model, known_model_facts, launch_fields

    try:
        _, model = known_model(name)
    except UnknownModelError as error:
        problems.append(str(error))
        return
    _add_model_facts(request, known_model_facts(name, models), fields, context)
    context["model_config"] = f"{model.source}'s published config.json (--model {name})"
    for field_name, value in launch_fields(model).items():
        fields.setdefault(field_name, value)


def _add_published_config(
    request: LaunchRequest,
    model_path: str,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
) -> None:
    """Where `--model-path` is a checkpoint of the zoo with no local config: what its
    published config.json implies, said to be that one (the local copy may differ)."""
    from compat.inputs.zoo import UnknownModelError, known_model, known_model_facts

    try:
        key, model = known_model(model_path)
    except UnknownModelError:
        return  # an unknown repository: the model facts must come from elsewhere
    _add_model_facts(request, known_model_facts(key, models), fields, context)
    context["model_config"] = f"{model.source}'s published config.json (the package's copy)"
    context["published_config"] = model.source


def _check_same_model(name: str, model_path: str | None, problems: list[str]) -> None:
    """`--model NAME` and a launch's `--model-path` of another checkpoint the package
    knows: the launch would run the other one, so neither is judged."""
    from compat.inputs.zoo import UnknownModelError, known_model

    if model_path is None:
        return
    try:
        named, model = known_model(name)
        launched, other = known_model(model_path)
    except UnknownModelError:
        return  # an unknown --model is refused already; another path may be a local copy
    if named != launched:
        problems.append(
            f"--model {shown(name)} is {model.source}, but the launch command's --model-path "
            f"is {other.source}, which the launch would run; give one"
        )


def _add_model_facts(
    request: LaunchRequest, facts: ModelFacts, fields: dict[str, Any], context: dict[str, Any]
) -> None:
    explicit = {name: request.model.get(name) for name in MODEL_FACTS}
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
