"""Where a launch's model facts come from: `--model NAME`'s published config.json, a
`--model-config` file, the one `--model-path` names (a local directory or the offline
Hugging Face cache), or the package's copy of a known checkpoint's published config. Each
adds the facts the caller did not state, and says where they came from (the report's
context)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compat.engine.models.lookup import ModelKnowledge
from compat.inputs.checks import shown
from compat.inputs.config_shapes import HEAD_SHAPE_KEYS
from compat.inputs.flags import flag_of
from compat.vocab.spelling import closest, did_you_mean

if TYPE_CHECKING:
    from compat.inputs.assemble import LaunchRequest
    from compat.inputs.model_config import ModelFacts

HEAD_SHAPES = tuple(HEAD_SHAPE_KEYS)
"""The heads and head dims of a model a kernel's ranges read (`compat.engine.shapes`)."""
MODEL_FACTS = (
    "attention_arch",
    "sliding_window",
    "multimodal",
    "model_architecture",
    "kv_heads",
    *HEAD_SHAPES,
)
INTEGER_FACTS = ("kv_heads", *HEAD_SHAPES)
"""The model facts that are integers (the command line gives them as text)."""


def unserved(name: str, models: ModelKnowledge | None) -> str:
    """Why an architecture the release does not serve cannot be judged, and what to do."""
    known = () if models is None else tuple(sorted(models.architectures))
    release = "this release" if models is None else f"SGLang {models.release}"
    return (
        f"{release} serves no architecture {shown(name)}{did_you_mean(closest(name, known))}; "
        "pass --attention-arch {mha,mla} to check it anyway"
    )


def add_model_config(
    request: LaunchRequest,
    path: str,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
    problems: list[str],
) -> None:
    """What the model's config.json implies, where the request states nothing else."""
    from compat.inputs.config_file import ModelConfigError
    from compat.inputs.model_config import load_model_facts

    named = "--model-config" if request.model_config is not None else "--model-path"
    try:
        facts = load_model_facts(path, models)
    except ModelConfigError as error:
        problems.append(f"{named}: {error}")
        return
    name = facts.architectures[0] if facts.architectures else None
    not_served = models is not None and name is not None and models.attention_arch(name) is None
    if name is not None and not_served:
        # SGLang's start-up reads the config and starts (its model loader looks the name up
        # later): judged from the config's keys, with the words `--model-architecture NAME`
        # is refused with.
        note = f"{named}: {facts.path}: architectures[0]: {unserved(name, models)}"
        context.setdefault("launch_notes", []).append(note)
    add_model_facts(request, facts, fields, context)


def add_known_model(
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
    add_model_facts(request, known_model_facts(name, models), fields, context)
    context["model_config"] = f"{model.source}'s published config.json (--model {name})"
    for field_name, value in launch_fields(model).items():
        fields.setdefault(field_name, value)


def add_published_config(
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
    add_model_facts(request, known_model_facts(key, models), fields, context)
    context["model_config"] = f"{model.source}'s published config.json (the package's copy)"
    context["published_config"] = model.source


def check_same_model(name: str, model_path: str | None, problems: list[str]) -> None:
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


def add_model_facts(
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


def model_path_config(model_path: str | None, context: dict[str, Any]) -> str | None:
    """The config.json `--model-path` names: a local directory or the offline HF cache."""
    if model_path is None:
        return None
    from compat.inputs.hf_cache import locate_model_config

    located = locate_model_config(model_path)
    if located.config is None:
        context["model_path_not_found"] = located.searched
        return None
    return str(located.config)


def model_config_conflicts(
    explicit: dict[str, object], derived: dict[str, object], reasons: dict[str, str]
) -> list[dict[str, object]]:
    """Explicit flags that contradict what the model config implies (the flag wins)."""
    return [
        {
            "flag": flag_of(name),
            "given": value,
            "model_config": derived[name],
            "why": reasons.get(name, ""),
        }
        for name, value in explicit.items()
        if value is not None and name in derived and derived[name] != value
    ]


# How to tell the guard the draft model's architecture where it cannot read it.
DRAFT_INPUTS = (
    "give its config.json with --draft-model-config PATH, or --draft-attention-arch {mha,mla}"
)


def add_draft_model(
    request: LaunchRequest,
    draft_path: str | None,
    model_path: str | None,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
    problems: list[str],
) -> None:
    """The draft model's attention, from its config: `--draft-model-config`, else the one
    `--speculative-draft-model-path` names (a local directory, the offline Hugging Face
    cache, or a checkpoint of the zoo). SGLang reads the draft's own `ModelConfig` and builds
    the draft's backends for it. A config named but unreadable is invalid input, as the
    model's is; a draft with no config to read is `add_unread_draft`'s (an EAGLE3 draft runs
    as the release's EAGLE3 draft classes do where they agree, another is taken to be of the
    target's architecture), and the report says so. `--draft-attention-arch` wins over any
    config. A draft of the target's own checkpoint (a launch command with no draft path, or
    the target's) that SGLang renames is `add_renamed_draft`'s."""
    from compat.inputs.config_file import ModelConfigError
    from compat.inputs.hf_cache import locate_model_config
    from compat.inputs.model_config import load_model_facts
    from compat.inputs.unread_draft import add_unread_draft
    from compat.inputs.zoo import UnknownModelError, known_model, known_model_facts

    # Only a launch (its command, or the ServerArgs `enforce()` reads) says the draft has no
    # path of its own: flags alone do not name the paths.
    paths_known = bool(request.command) or request.model_path is not None
    own = paths_known and draft_path in (None, model_path)
    if (
        request.draft_model_config is None
        and own
        and add_renamed_draft(request, models, fields, context)
    ):
        return
    if request.draft_model_config is None and draft_path is None:
        return
    given = request.draft_model_config is not None
    named = "--draft-model-config" if given else "--speculative-draft-model-path"
    try:
        if request.draft_model_config is not None:
            facts = load_model_facts(request.draft_model_config, models)
            source = str(facts.path)
        elif (found := locate_model_config(draft_path or "").config) is not None:
            facts = load_model_facts(found, models)
            source = str(facts.path)
        else:
            key, model = known_model(draft_path or "")
            facts = known_model_facts(key, models)
            source = f"{model.source}'s published config.json (the package's copy)"
    except ModelConfigError as error:
        problems.append(f"{named}: {error}")
        return
    except UnknownModelError:
        unread = (
            f"{named} {draft_path}: no config.json found locally and not a checkpoint the "
            "package knows"
        )
        add_unread_draft(request, unread, DRAFT_INPUTS, models, fields, context)
        return
    arch = facts.attention_arch
    name = facts.architectures[0] if facts.architectures else None
    # Where the draft's facts came from, as the target's `model_config` line says it.
    context["draft_model_config"] = {
        "flag": named,
        "source": source,
        "architecture": name,
        "draft_attention_arch": arch.value,
        "why": facts.reasons().get("attention_arch", ""),
    }
    if name is not None and name.isidentifier():  # a config's own text: kept if a class name
        fields["draft_model_architecture"] = name
    stated = request.model.get("draft_attention_arch")
    if stated is None:
        fields["draft_attention_arch"] = arch.value
    elif stated != arch.value:  # the stated one wins, as the target's flags do
        context["draft_model_config"]["overridden"] = f"--draft-attention-arch {stated}"
        context.setdefault("launch_notes", []).append(
            f"--draft-attention-arch {stated} is used, though the draft model's config says "
            f"{arch.label} ({source})"
        )


def add_renamed_draft(
    request: LaunchRequest,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
) -> bool:
    """A draft built from the target's own checkpoint (MTP / NEXTN; an EAGLE draft whose
    path is the target's): SGLang's draft `ModelConfig` (`is_draft_model=True`) renames the
    architecture (`_config_draft_model`) and decides MLA or MHA by the new name, so the draft
    may not run as its target does (GLM-4.7-Flash's up to 0.5.12). The release's own
    `ModelConfig` says which (`compat.engine.models.draft_rename_data`, run over a checkpoint
    with MLA's fields, as one SGLang runs as MLA carries them, and over one without).
    `--draft-attention-arch` wins. False where the release renames nothing it says the
    attention of (no rename, or one whose draft SGLang's `ModelConfig` raises on)."""
    from compat.engine.build import DRAFT_ALGORITHMS
    from compat.engine.models.draft_renames import MODEL_CONFIG_FILE, RENAME_FUNCTION, draft_rename
    from compat.inputs.unread_draft import read_algorithm

    target, arch = fields.get("model_architecture"), fields.get("attention_arch")
    if models is None or not isinstance(target, str):
        return False
    if read_algorithm(fields.get("speculative_algorithm"), models.release) not in DRAFT_ALGORITHMS:
        return False
    row = draft_rename(models.release, target)
    if row is None:
        return False
    mla = arch == "mla"
    built = row.with_mla_fields if mla else row.without_mla_fields
    set_at = row.with_mla_fields_line if mla else row.without_mla_fields_line
    if set_at is None:  # SGLang's draft build raises: nothing to say of its attention
        return False
    value = built.lower()
    file = MODEL_CONFIG_FILE.removeprefix("sglang/srt/")
    context["draft_model_config"] = {
        "flag": "--speculative-algorithm",
        "source": f"the target's own checkpoint, renamed by SGLang {models.release} "
        f"({file}:{row.line}, {RENAME_FUNCTION})",
        "architecture": row.draft,
        "draft_attention_arch": value,
        "why": f"{file}:{set_at} sets attention_arch for {row.draft}, "
        f"{'with' if mla else 'without'} kv_lora_rank in the config",
    }
    fields["draft_model_architecture"] = row.draft
    stated = request.model.get("draft_attention_arch")
    if stated is None:
        fields["draft_attention_arch"] = value
    elif stated != value:  # the stated one wins, as the target's flags do
        context["draft_model_config"]["overridden"] = f"--draft-attention-arch {stated}"
        context.setdefault("launch_notes", []).append(
            f"--draft-attention-arch {stated} is used, though SGLang {models.release} runs "
            f"the draft of {target} ({row.draft}) as {built}"
        )
    return True
