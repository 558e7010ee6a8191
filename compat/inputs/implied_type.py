"""The config type of a model given by its architecture alone, as the release's code says.

SGLang's backend build keys on the model's config class (`hybrid_gdn_config`, MiniCPM's
sparse backends). A launch given only `--model-architecture` has no config.json to name
it; the release's own model for that architecture does: its `__init__` takes one config
class, whose `model_type` the package stores (`compat.engine.models.config_types`). Where
the architecture takes no single class, or one no build check reads, nothing is added.
"""

from __future__ import annotations

from typing import Any

from compat.engine.models.lookup import ModelKnowledge


def add_implied_model_type(
    fields: dict[str, Any], models: ModelKnowledge | None, context: dict[str, Any]
) -> None:
    """`model_type` for a launch with an architecture, no model config and no type, from
    what the predicted release's model for that architecture takes; said where it came from."""
    name = fields.get("model_architecture")
    if models is None or not isinstance(name, str) or fields.get("model_type") is not None:
        return
    if "model_config" in context:  # a config.json was read: its own type (or none) stands
        return
    from compat.engine.models.config_types import config_type

    found = config_type(models.release, name)
    if found is None:
        return
    fields["model_type"] = found.model_type
    context["from_model_config"]["model_type"] = {"value": found.model_type, "why": found.why}
    # The report's provenance line: these facts come from the release's code, not a file.
    context["model_config"] = f"none; SGLang {found.release}'s own code for {name}"
