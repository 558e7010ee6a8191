"""The config type of a model given by its architecture alone, as the release's code says.

SGLang's backend build keys on the model's config class (`hybrid_gdn_config`, MiniCPM's
sparse backends), and start-up on that class's defaults (GLM-5's `GlmMoeDsaConfig`
defaults `index_topk`: DeepSeek sparse attention). A launch given only
`--model-architecture` has no config.json to name it; the release's own model for that
architecture does (its `__init__` takes one config class), or the transformers it pins
(which registers the architecture for one model type). The package stores that class's
`model_type` and its `index_topk` default (`compat.engine.models.config_types`). Where the
architecture takes no single class, or one no check reads, nothing is added.
"""

from __future__ import annotations

from typing import Any

from compat.engine.models.lookup import ModelKnowledge


def add_implied_model_type(
    fields: dict[str, Any], models: ModelKnowledge | None, context: dict[str, Any]
) -> None:
    """`model_type` (unless given) and a sparse indexer (unless `sparse_attention` is
    given) for a launch with an architecture and no model config, from the config class the
    predicted release reads that architecture with; said where each came from."""
    name = fields.get("model_architecture")
    if models is None or not isinstance(name, str):
        return
    if "model_config" in context:  # a config.json was read: its own type (or none) stands
        return
    from compat.engine.models.config_types import config_type

    found = config_type(models.release, name)
    if found is None:
        return
    said = context["from_model_config"]
    added = False
    if fields.get("model_type") is None:
        fields["model_type"] = found.model_type
        said["model_type"] = {"value": found.model_type, "why": found.why}
        added = True
    indexer = found.indexer_why
    if indexer is not None and fields.get("sparse_attention") is None:
        fields["sparse_attention"] = True
        said["sparse_attention"] = {"value": True, "why": indexer}
        added = True
    if added:  # the report's provenance line: these facts come from the release's code
        context["model_config"] = f"none; SGLang {found.release}'s own code for {name}"
