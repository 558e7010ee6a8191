"""The model zoo: real checkpoints SGLang special-cases, as their published `config.json`.

The entries live in `zoo.json`, next to this module. Each is the config of one public
Hugging Face repository (`ZooModel.source`; `about` says what it exercises), trimmed to the
fields SGLang's `ModelConfig`, its config loader and its model-specific start-up branches
read: architectures and model_type, head counts and head_dim, hidden size and layers,
sliding window / layer types, attention chunking, MLA ranks, the DSA indexer (`index_*`),
linear-attention and Mamba shapes, text and vision sub-configs, `auto_map` (remote code)
and `quantization_config` where the checkpoint ships one. Token ids, initialiser ranges and
other fields no start-up decision reads are left out.

`launch` holds the flags every launch of the model carries, the way its model card starts
it (`--trust-remote-code` where the config names remote code).

The conformance tests run each release's own start-up code on every entry; `compat check
--model NAME`, `AttentionConfig.from_known_model` and the finder's model menu read the same
entries, so a named model is judged from the config its published checkpoint ships.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.inputs.checks import shown
from compat.vocab.spelling import closest, did_you_mean

if TYPE_CHECKING:
    from compat.engine.models.lookup import ModelKnowledge
    from compat.inputs.model_config import ModelFacts

DATA = Path(__file__).with_name("zoo.json")


@dataclass(frozen=True)
class ZooModel:
    """One published checkpoint: its family, source repository and config."""

    family: str
    source: str  # the Hugging Face repository whose config.json this is
    config: dict[str, Any]
    launch: tuple[str, ...] = ()
    speculative: tuple[str, ...] = field(default=("eagle-topk1",))  # what its card runs
    about: str = ""
    """What the checkpoint exercises (its attention, its cache, its quantization)."""


def _entry(data: dict[str, Any]) -> ZooModel:
    sequences = {key: tuple(data[key]) for key in ("launch", "speculative") if key in data}
    return ZooModel(data["family"], data["source"], data["config"], about=data["about"],
                    **sequences)  # fmt: skip


ZOO: dict[str, ZooModel] = {
    name: _entry(entry) for name, entry in json.loads(DATA.read_text(encoding="utf-8")).items()
}

ZOO_MODELS: dict[str, dict[str, Any]] = {name: model.config for name, model in ZOO.items()}


class UnknownModelError(ValueError):
    """A model name the zoo does not hold; the message names the close one and every one."""

    def __init__(self, given: object) -> None:
        self.given = given
        close = closest(given.lower(), _BY_KEY) if isinstance(given, str) else None
        hint = did_you_mean(None if close is None else _BY_KEY[close])
        super().__init__(
            f"--model: no known model {shown(given)}{hint} (known models: {', '.join(ZOO)}; "
            "for another model, give its config.json with --model-config)"
        )


# A model is named by its key or its repository, in any case.
_BY_KEY = {name.lower(): name for name in ZOO} | {m.source.lower(): n for n, m in ZOO.items()}


def known_model(name: str) -> tuple[str, ZooModel]:
    """The zoo entry `name` names (its key or Hugging Face repository, any case), with its
    key; UnknownModelError (with a did-you-mean) otherwise."""
    key = _BY_KEY.get(name.strip().lower()) if isinstance(name, str) else None
    if key is None:
        raise UnknownModelError(name)
    return key, ZOO[key]


def known_model_facts(name: str, models: ModelKnowledge | None) -> ModelFacts:
    """What the model's published config.json says, read as `--model-config` reads a file
    (by what the predicted release knows of models, `models`)."""
    from compat.inputs.config_file import CONFIG_FILE
    from compat.inputs.model_config import derive_model_facts

    _, model = known_model(name)
    return derive_model_facts(Path(model.source, CONFIG_FILE), model.config, models)


def known_model_fields(name: str, models: ModelKnowledge | None) -> dict[str, Any]:
    """The AttentionConfig fields a known model implies: its config's facts, and the flags
    its card launches it with (what `compat check --model NAME` and the finder judge)."""
    facts = known_model_facts(name, models)
    return {**facts.config_fields(), **launch_fields(known_model(name)[1])}


def launch_fields(model: ZooModel) -> dict[str, Any]:
    """The AttentionConfig fields of the flags the model's card launches it with (each a
    switch, such as `--trust-remote-code`)."""
    from compat.inputs.flags import FLAGS

    switches = {flag.option: flag.field for flag in FLAGS if flag.switch}
    return {switches[option]: True for option in model.launch}
