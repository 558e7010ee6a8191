"""A draft model whose config.json cannot be read: what its attention is taken to be.

`--speculative-draft-model-path` names a checkpoint the guard finds neither locally nor in
the package's zoo. An EAGLE3 draft is a model of its own, one of the EAGLE3 draft classes
the release registers (`compat.engine.models.eagle3_drafts`); where they all run with one
attention (up to 0.5.11 there is one, `LlamaForCausalLMEagle3`, MHA), the draft runs with
it whatever the checkpoint: an MHA draft of an MLA target inherits the target's backend,
which may refuse it (sglang#23490). Where the release registers classes of both (0.5.12
on), or for another algorithm, the draft is assumed to be the target's. Either way a note
says the config was not read and how to give it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compat.engine.models.draft_renames import MODEL_CONFIG_FILE
from compat.engine.models.eagle3_drafts import EAGLE3, Eagle3Draft, eagle3_attention, eagle3_drafts

if TYPE_CHECKING:
    from compat.engine.models.lookup import ModelKnowledge
    from compat.inputs.assemble import LaunchRequest

MODEL_CONFIG = MODEL_CONFIG_FILE.removeprefix("sglang/srt/")


def read_algorithm(algorithm: object, release: str) -> str | None:
    """`--speculative-algorithm algorithm` as `release` reads it (in any case from 0.5.12,
    through its aliases); None for no algorithm, or a release not modelled."""
    from compat.releases import RELEASES

    rules = RELEASES.get(release)
    if rules is None or not isinstance(algorithm, str):
        return None
    spelled = algorithm.upper() if rules.algorithm_any_case else algorithm
    return rules.algorithm_aliases.get(spelled, spelled)


def is_eagle3(algorithm: object, release: str) -> bool:
    """Whether `--speculative-algorithm algorithm` runs EAGLE3 in `release`."""
    return read_algorithm(algorithm, release) == EAGLE3


def add_unread_draft(
    request: LaunchRequest,
    unread: str,
    how: str,
    models: ModelKnowledge | None,
    fields: dict[str, Any],
    context: dict[str, Any],
) -> None:
    """The draft's attention where its config was not read (`unread` says why; `how` how
    to give it): the release's EAGLE3 draft classes' where they agree, else the target's."""
    notes = context.setdefault("launch_notes", [])
    assumed = f"{unread}; the draft model's architecture is assumed to be the target's"
    stated = request.model.get("draft_attention_arch")
    if stated is not None:
        notes.append(f"{unread}; --draft-attention-arch {stated} is used")
        return
    release = None if models is None else models.release
    if release is None or not is_eagle3(fields.get("speculative_algorithm"), release):
        notes.append(f"{assumed} (where it is not, {how})")
        return
    drafts = eagle3_drafts(release)
    value = eagle3_attention(release)
    registered = f"SGLang {release} registers {_classes(drafts)}"
    if value is None:
        notes.append(f"{assumed}: {registered}, and the checkpoint decides ({how})")
        return
    fields["draft_attention_arch"] = value
    where = "; ".join(row.where for row in drafts)
    context["draft_model_config"] = {
        "flag": "--speculative-draft-model-path",
        "source": f"every EAGLE3 draft class SGLang {release} registers ({where}; the "
        "draft's config.json was not read)",
        "architecture": " or ".join(row.architecture for row in drafts),
        "draft_attention_arch": value,
        "why": "; ".join(_why(row, *a) for row in drafts if (a := row.attention) is not None),
    }
    taken = f"the draft is taken to run as {value.upper()}"
    notes.append(f"{unread}; {registered}: {taken} (where it does not, {how})")


def _classes(drafts: tuple[Eagle3Draft, ...]) -> str:
    """The EAGLE3 draft classes, each with where it is registered and how it runs."""
    named = [f"{row.architecture} ({row.where}, {_attention(row)})" for row in drafts]
    if len(named) == 1:
        return f"one EAGLE3 draft class, {named[0]}"
    return f"{len(named)} EAGLE3 draft classes, {', '.join(named)}"


def _attention(row: Eagle3Draft) -> str:
    found = row.attention
    return "its checkpoint decides" if found is None else found[0]


def _why(row: Eagle3Draft, value: str, line: int) -> str:
    """The line of the release's `ModelConfig` that gives the class its attention."""
    fields = (
        "with or without kv_lora_rank in the config"
        if None not in (row.with_mla_fields_line, row.without_mla_fields_line)
        else "with kv_lora_rank in the config"
        if row.with_mla_fields_line is not None
        else "without kv_lora_rank in the config"
    )
    return f"{MODEL_CONFIG}:{line} sets attention_arch {value} for {row.architecture}, {fields}"
