"""Read a Hugging Face `config.json` and derive the model facts the guard needs.

Every config key this module knows about is named once, in the tables below; the
derivation reads those tables and records, for each conclusion, which key led to it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from compat.engine.models.lookup import ModelKnowledge
from compat.inputs.bounded_json import json_type as _json_type
from compat.inputs.checks import SHOWN_CHARS, echoed
from compat.inputs.config_file import ModelConfigError, config_file, read_object
from compat.inputs.config_shapes import read_head_shapes, read_kv_heads
from compat.vocab.terms import Arch

Known = ModelKnowledge | None  # what the predicted release knows of models, if known

# -- what the config keys mean ---------------------------------------------------------

# Sub-configs that describe the language model of a composite (e.g. multimodal) model.
TEXT_SUBCONFIGS = ("text_config", "language_config", "llm_config")

# Keys whose (non-null) presence means multi-head latent attention (DeepSeek V2/V3 style);
# the architectures a release runs as MLA by name alone come from its own ModelConfig
# (`compat.engine.models`).
MLA_KEYS = ("kv_lora_rank", "q_lora_rank")

# Keys of the lightning indexer of DeepSeek sparse attention (DSA).
SPARSE_INDEXER_KEYS = ("index_topk", "index_n_heads", "index_head_dim")

# The key whose (non-null) presence gives a model SGLang's QSA profile (0.5.20+
# `parse_qsa_profile`), read where it reads it: `text_config` where there is one, else the top.
QSA_PROFILE_KEY = "indexer_n_heads"
QSA_SCOPE = "text_config"

# Sliding window: a window size, the switch that can turn it off, per-layer kinds, a pattern.
SLIDING_WINDOW_KEY = "sliding_window"
USE_SLIDING_WINDOW_KEY = "use_sliding_window"
LAYER_TYPES_KEY = "layer_types"
SLIDING_LAYER_TYPE = "sliding_attention"
SLIDING_PATTERN_KEY = "sliding_window_pattern"

# Sub-configs of a vision or audio encoder (multimodal models).
MULTIMODAL_KEYS = (
    "vision_config",
    "audio_config",
    "vision_tower",
    "mm_vision_tower",
    "vision_encoder",
    "visual",
)
CONDITIONAL_GENERATION_SUFFIX = "ForConditionalGeneration"

ENCODER_DECODER_KEY = "is_encoder_decoder"
DUAL_CHUNK_KEY = "dual_chunk_attention_config"
# The checkpoint's quantization (`quantization_config.quant_method`) and its own code.
QUANTIZATION_KEY = "quantization_config"
REMOTE_CODE_KEY = "auto_map"


@dataclass(frozen=True)
class ModelFacts:
    """What a model's `config.json` says about its attention, and why."""

    path: Path
    architectures: tuple[str, ...]
    model_type: str | None
    attention_arch: Arch
    sparse_attention: bool
    sliding_window: bool
    multimodal: bool
    encoder_decoder: bool
    dual_chunk_attention: bool
    evidence: tuple[tuple[str, str], ...]
    """(AttentionConfig field name, why), e.g. ("attention_arch", "kv_lora_rank=512 in ...")."""
    kv_heads: int | None = None
    """`num_key_value_heads` (of the text config where there is one), before `--tp-size`."""
    checkpoint_quantization: str | None = None
    remote_code: bool = False
    qsa_profile: bool = False
    """A QSA indexer (`QSA_PROFILE_KEY`): SGLang's `parse_qsa_profile` answers a profile."""
    head_shapes: tuple[tuple[str, int], ...] = ()
    """(AttentionConfig field, value) of each `HEAD_SHAPE_KEYS` the config gives."""

    def config_fields(self) -> dict[str, object]:
        """The AttentionConfig keyword arguments these facts imply."""
        fields: dict[str, object] = {}
        if self.architectures:
            fields["model_architecture"] = self.architectures[0]
        if self.kv_heads is not None:
            fields["kv_heads"] = self.kv_heads
        fields.update(self.head_shapes)
        if self.model_type is not None:
            fields["model_type"] = self.model_type
        if self.checkpoint_quantization is not None:
            fields["checkpoint_quantization"] = self.checkpoint_quantization
        if self.remote_code:
            fields["remote_code"] = True
        return fields | {
            "attention_arch": self.attention_arch.value,
            "sliding_window": self.sliding_window,
            "multimodal": self.multimodal,
            "encoder_decoder": self.encoder_decoder,
            "dual_chunk_attention": self.dual_chunk_attention,
            "sparse_attention": self.sparse_attention,
            "qsa_profile": self.qsa_profile,
        }

    def why(self, field_name: str) -> tuple[str, ...]:
        """The reasons recorded for one AttentionConfig field."""
        return tuple(reason for name, reason in self.evidence if name == field_name)

    def reasons(self) -> dict[str, str]:
        """Every reason of each field joined into one line, for fields that have any."""
        joined: dict[str, list[str]] = {}
        for name, reason in self.evidence:
            joined.setdefault(name, []).append(reason)
        return {name: "; ".join(reasons) for name, reasons in joined.items()}


def load_model_facts(path: str | os.PathLike[str], models: Known = None) -> ModelFacts:
    """Read `path` (a `config.json` or a directory holding one) and derive the model facts;
    with `models` (what the predicted release knows), by its own architecture lists too."""
    if not os.fspath(path).strip():  # Path("") would be the current directory
        raise ModelConfigError(
            f"an empty path ({os.fspath(path)!r}): give a config.json or the directory holding it"
        )
    file = config_file(Path(path))
    return derive_model_facts(file, read_object(file), models)


def _json_shown(value: object) -> str:
    """`value` as JSON (control characters escaped), cut to SHOWN_CHARS for a report line."""
    text = json.dumps(value)
    return (
        text
        if len(text) <= SHOWN_CHARS
        else f"{text[: SHOWN_CHARS - 3]}... ({len(text)} characters)"
    )


# -- deriving ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scope:
    """One object of the config (the top level or a text sub-config) and how to name its keys."""

    prefix: str
    data: Mapping[str, Any]

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"


class ConfigReader:
    def __init__(self, file: Path, data: Mapping[str, Any]) -> None:
        self.file = file
        self.scopes = [_Scope("", data)]
        for key in TEXT_SUBCONFIGS:
            sub = data.get(key)
            if sub is None:
                continue
            if not isinstance(sub, dict):
                self.bad(key, sub, "an object")
            self.scopes.append(_Scope(f"{key}.", sub))

    def bad(self, key: str, value: object, expected: str) -> NoReturn:
        raise ModelConfigError(
            f"{self.file}: field {key!r} must be {expected}, got {_json_type(value)} "
            f"({_json_shown(value)})"
        )

    def where(self, scope: _Scope, key: str, value: object) -> str:
        return f"{scope.name(key)}={_json_shown(value)} in {self.file.name}"

    def present(self, key: str) -> list[tuple[_Scope, Any]]:
        """Every scope where `key` is set to something other than null."""
        return [(s, s.data[key]) for s in self.scopes if s.data.get(key) is not None]

    def optional_int(self, scope: _Scope, key: str) -> int | None:
        value = scope.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(scope.name(key), value, "an integer or null")
        return value

    def optional_bool(self, scope: _Scope, key: str) -> bool | None:
        value = scope.data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.bad(scope.name(key), value, "true or false")
        return value

    def strings(self, scope: _Scope, key: str) -> tuple[str, ...]:
        value = scope.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.bad(scope.name(key), value, "an array of strings")
        return tuple(value)


def derive_model_facts(file: Path, data: Mapping[str, Any], models: Known) -> ModelFacts:
    """The facts of a config already read (`data`, from `file`, named in the evidence)."""
    reader = ConfigReader(file, data)
    top = reader.scopes[0]
    architectures = reader.strings(top, "architectures")
    model_type = data.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        reader.bad("model_type", model_type, "a string")
    evidence: list[tuple[str, str]] = []

    arch = _attention_arch(reader, architectures, models, evidence)
    sparse = _flag_from_keys(reader, SPARSE_INDEXER_KEYS, "sparse_attention", evidence)
    qsa = _qsa_profile(reader, evidence)
    sliding = _sliding_window(reader, evidence)
    multimodal = _multimodal(reader, architectures, models, evidence)
    encoder_decoder = False
    for scope in reader.scopes:
        if reader.optional_bool(scope, ENCODER_DECODER_KEY):
            encoder_decoder = True
            evidence.append(("encoder_decoder", reader.where(scope, ENCODER_DECODER_KEY, True)))
    if models is not None and architectures[:1] and architectures[0] in models.encoder_decoder:
        encoder_decoder = True
        evidence.append(("encoder_decoder", _by_name(architectures[0], "encoder-decoder", models)))
    dual_chunk = False
    for scope, value in reader.present(DUAL_CHUNK_KEY):
        if not isinstance(value, dict):
            reader.bad(scope.name(DUAL_CHUNK_KEY), value, "an object or null")
        dual_chunk = True
        evidence.append(
            ("dual_chunk_attention", f"{scope.name(DUAL_CHUNK_KEY)} is set in {file.name}")
        )
    kv_heads, shapes = read_kv_heads(reader, evidence), read_head_shapes(reader, evidence)
    if architectures:
        evidence.append(("model_architecture", f"architectures[0] in {file.name}"))
    if model_type is not None:
        evidence.append(("model_type", f"model_type in {file.name}"))
    remote_code = top.data.get(REMOTE_CODE_KEY) is not None
    if remote_code:
        evidence.append(("remote_code", f"{REMOTE_CODE_KEY} is set in {file.name}"))
    return ModelFacts(
        kv_heads=kv_heads,
        head_shapes=shapes,
        checkpoint_quantization=_checkpoint_quantization(reader, evidence),
        remote_code=remote_code,
        qsa_profile=qsa,
        path=file,
        architectures=architectures,
        model_type=model_type,
        attention_arch=arch,
        sparse_attention=sparse,
        sliding_window=sliding,
        multimodal=multimodal,
        encoder_decoder=encoder_decoder,
        dual_chunk_attention=dual_chunk,
        evidence=tuple(evidence),
    )


def _by_name(name: str, what: str, models: ModelKnowledge) -> str:
    return f"SGLang {models.release} runs {name} as {what} (configs/model_config.py)"


def _checkpoint_quantization(reader: ConfigReader, evidence: list[tuple[str, str]]) -> str | None:
    """The checkpoint's `quantization_config.quant_method` (the top level's first)."""
    for scope, config in reader.present(QUANTIZATION_KEY):
        if not isinstance(config, dict):
            reader.bad(scope.name(QUANTIZATION_KEY), config, "an object or null")
        key, method = f"{QUANTIZATION_KEY}.quant_method", config.get("quant_method")
        if method is not None and not isinstance(method, str):
            reader.bad(scope.name(key), method, "a string")
        if method is not None:
            evidence.append(("checkpoint_quantization", reader.where(scope, key, method)))
            return method
    return None


def _attention_arch(
    reader: ConfigReader,
    architectures: tuple[str, ...],
    models: ModelKnowledge | None,
    evidence: list[tuple[str, str]],
) -> Arch:
    reasons: list[str] = []
    for key in MLA_KEYS:
        for scope, value in reader.present(key):
            if isinstance(value, bool) or not isinstance(value, int):
                reader.bad(scope.name(key), value, "an integer or null")
            reasons.append(reader.where(scope, key, value))
    if models is not None and architectures[:1] and architectures[0] in models.mla:
        reasons.append(_by_name(architectures[0], "an MLA model", models))
    if reasons:
        evidence += [("attention_arch", reason) for reason in reasons]
        return Arch.MLA
    named = echoed(", ".join(architectures)) if architectures else "the model"
    evidence.append(
        (
            "attention_arch",
            f"no MLA fields ({', '.join(MLA_KEYS)}) in {reader.file.name} and {named} is not "
            "an MLA architecture",
        )
    )
    return Arch.MHA


def _flag_from_keys(
    reader: ConfigReader, keys: tuple[str, ...], field_name: str, evidence: list[tuple[str, str]]
) -> bool:
    found = False
    for key in keys:
        for scope, value in reader.present(key):
            found = True
            evidence.append((field_name, reader.where(scope, key, value)))
    return found


def _qsa_profile(reader: ConfigReader, evidence: list[tuple[str, str]]) -> bool:
    """SGLang's `parse_qsa_profile`: the key in the text config, or the top level where
    there is none (`getattr(config, "text_config", config)`)."""
    text = [scope for scope in reader.scopes if scope.prefix == f"{QSA_SCOPE}."]
    scope = text[0] if text else reader.scopes[0]
    value = scope.data.get(QSA_PROFILE_KEY)
    if value is None:
        return False
    evidence.append(("qsa_profile", reader.where(scope, QSA_PROFILE_KEY, value)))
    return True


def _sliding_window(reader: ConfigReader, evidence: list[tuple[str, str]]) -> bool:
    found = False
    for scope in reader.scopes:
        window = reader.optional_int(scope, SLIDING_WINDOW_KEY)
        switch = reader.optional_bool(scope, USE_SLIDING_WINDOW_KEY)
        if window is not None and window > 0:
            if switch is False:
                evidence.append(
                    (
                        "sliding_window",
                        f"{reader.where(scope, SLIDING_WINDOW_KEY, window)} is ignored: "
                        f"{scope.name(USE_SLIDING_WINDOW_KEY)}=false",
                    )
                )
            else:
                found = True
                evidence.append(("sliding_window", reader.where(scope, SLIDING_WINDOW_KEY, window)))
        kinds = reader.strings(scope, LAYER_TYPES_KEY)
        if SLIDING_LAYER_TYPE in kinds:
            found = True
            count = kinds.count(SLIDING_LAYER_TYPE)
            evidence.append(
                (
                    "sliding_window",
                    f"{scope.name(LAYER_TYPES_KEY)} has {count} {SLIDING_LAYER_TYPE!r} layers in "
                    f"{reader.file.name}",
                )
            )
        pattern = scope.data.get(SLIDING_PATTERN_KEY)
        if pattern is not None and switch is not False:
            found = True
            evidence.append(("sliding_window", reader.where(scope, SLIDING_PATTERN_KEY, pattern)))
    return found


def _multimodal(
    reader: ConfigReader,
    architectures: tuple[str, ...],
    models: ModelKnowledge | None,
    evidence: list[tuple[str, str]],
) -> bool:
    top = reader.scopes[0]
    subconfigs = [key for key in MULTIMODAL_KEYS if top.data.get(key) is not None]
    if models is not None and architectures[:1] and architectures[0] in models.multimodal:
        evidence.append(("multimodal", _by_name(architectures[0], "a multimodal model", models)))
        if not subconfigs:
            return True
    if not subconfigs:
        return False
    generation = [name for name in architectures if name.endswith(CONDITIONAL_GENERATION_SUFFIX)]
    suffix = f" (architecture {', '.join(generation)})" if generation else ""
    evidence += [
        ("multimodal", f"{key} is set in {reader.file.name}{suffix}") for key in subconfigs
    ]
    return True
