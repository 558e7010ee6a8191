"""A launch configuration as SGLang's flags spell it, validated once on construction.

Validation takes one path for every configuration (`compat.inputs.validation`): each value
is checked, and every problem is reported at once, in a fixed order.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from compat.inputs.checks import InputProblem, InvalidConfigError
from compat.inputs.flags import FLAG_FIELDS, flag_of
from compat.inputs.release_choice import VERSION_VARIABLE, chosen_release, release_models
from compat.inputs.validation import Parsed, parse, reparsed
from compat.vocab.hardware import ComputeCapability

# What other modules import from here; the errors and the flag helpers are defined in
# compat.inputs.checks and compat.inputs.flags, the canonical form in compat.inputs.validation.
__all__ = [
    "DEFAULT_SPECULATIVE_ALGORITHM",
    "FLAG_FIELDS",
    "VERSION_VARIABLE",
    "AttentionConfig",
    "InputProblem",
    "InvalidConfigError",
    "Parsed",
    "chosen_release",
    "flag_of",
    "speculation_with_topk",
]

# The algorithm assumed where only a topk is chosen (the finder, `compat matrix`): EAGLE,
# which every release accepts (each release's own choices are its `algorithm_choices`).
DEFAULT_SPECULATIVE_ALGORITHM = "EAGLE"


def speculation_with_topk(topk: int) -> dict[str, Any]:
    """The flags of a launch that only chooses a topk (the finder, `compat matrix`).

    SGLang takes `--speculative-eagle-topk` only with `--speculative-num-steps` (and the
    number of draft tokens), so a topk comes with the values of its own auto-choice.
    """
    steps = 3
    return {
        "speculative_algorithm": DEFAULT_SPECULATIVE_ALGORITHM,
        "speculative_eagle_topk": topk,
        "speculative_num_steps": steps,
        "speculative_num_draft_tokens": steps + 1 if topk == 1 else 2 * topk,
    }


@dataclass(frozen=True)
class AttentionConfig:
    """The flags that decide attention compatibility, named as SGLang names them."""

    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    kv_cache_dtype: str = "auto"
    page_size: int | None = None
    mamba_scheduler_strategy: str = "auto"
    """A hybrid model's Mamba cache strategy (`--mamba-radix-cache-strategy` from 0.5.14)."""
    mamba_ssm_dtype: str | None = None
    """`--mamba-ssm-dtype`; unset, SGLang reads the model config's after its start-up checks."""
    speculative_algorithm: str | None = None
    speculative_eagle_topk: int | None = None
    speculative_attention_mode: str = "prefill"
    speculative_draft_attention_backend: str | None = None
    """The draft model's backend; unset, it inherits the target's."""
    dsa_prefill_backend: str | None = None
    """`--dsa-prefill-backend` (`--nsa-prefill-backend`: alone up to 0.5.12, kept to 0.5.19)."""
    dsa_decode_backend: str | None = None
    """`--dsa-decode-backend` (`--nsa-decode-backend`: alone up to 0.5.12, kept to 0.5.19)."""
    linear_attn_backend: str | None = None
    linear_attn_prefill_backend: str | None = None
    linear_attn_decode_backend: str | None = None
    mm_attention_backend: str | None = None
    draft_model_architecture: str | None = None
    """The draft model's `architectures[0]` as SGLang builds it (an MTP draft's renamed one,
    `MiMoV2MTP`); unset: not known (with no draft model named, the target's MTP draft)."""
    draft_attention_arch: str | None = None
    """The draft model's attention (`mha` or `mla`); unset, the target's (`attention_arch`).
    An EAGLE3 draft is usually a Llama-architecture MHA model, whatever the target."""
    attention_arch: str = "mha"
    platform: str = "cuda"
    compute_capability: tuple[int, int] | str | ComputeCapability | None = None
    sliding_window: bool = False
    multimodal: bool = False
    encoder_decoder: bool = False
    dual_chunk_attention: bool = False
    sparse_attention: bool = False
    qsa_profile: bool = False
    """The model's config carries a QSA indexer (`indexer_n_heads`, Qwen4-Exp): SGLang's
    `parse_qsa_profile` answers a profile, and the EAGLE draft runs on QSA's own backends."""
    cuda_version: tuple[int, int] | None = None
    speculative_num_steps: int | None = None
    speculative_num_draft_tokens: int | None = None
    model_architecture: str | None = None
    """The model's `architectures[0]` (e.g. `DeepseekV3ForCausalLM`): SGLang's defaults read it."""
    kv_heads: int | None = None
    """The model's KV heads (`num_key_value_heads`); SGLang divides them among `--tp-size`
    ranks (its ROCm MLA default reads the heads per rank)."""
    q_heads: int | None = None
    """The model's attention heads (`num_attention_heads`), before tensor parallelism."""
    qk_nope_head_dim: int | None = None
    """An MLA model's `qk_nope_head_dim` (a kernel's range: 0.5.x's aiter prefill)."""
    qk_rope_head_dim: int | None = None
    """An MLA model's `qk_rope_head_dim`."""
    sglang_version: str | None = None
    """The SGLang release to predict; default: the installed one, else the newest modelled."""
    trust_remote_code: bool = False
    quantization: str | None = None
    device: str | None = None
    """`--device`; unset, SGLang runs on the machine's own device (`platform`)."""
    tp_size: int | None = None
    dp_size: int | None = None
    enable_dp_attention: bool = False
    enable_deterministic_inference: bool = False
    disaggregation_mode: str = "null"
    prefill_round_robin_balance: bool = False
    disable_cuda_graph: bool = False
    disable_hybrid_swa_memory: bool = False
    enable_hierarchical_cache: bool = False
    model_type: str | None = None
    """The config's `model_type`: whether the release's transformers (or SGLang) can read it."""
    checkpoint_quantization: str | None = None
    """The checkpoint's `quantization_config.quant_method` (e.g. `fp8`, `mxfp4`)."""
    remote_code: bool = False
    """The config names its own code (`auto_map`): it loads only with `--trust-remote-code`."""
    environment: tuple[tuple[str, str], ...] = ()
    """The variables set next to SGLang that its start-up reads, as (name, value) pairs:
    names among those the release reads (`compat.engine.environment`), values as SGLang
    reads them (strings). One the launch does not set is assumed unset, as the release's
    official image ships it."""
    packages: tuple[tuple[str, str], ...] = ()
    """The kernel packages' versions the launch runs with, as (name, version) pairs: names
    among those the release's start-up reads (`compat.inputs.packages`: `triton`), PEP 440
    versions. One not given is the release's official image's, or unknown, and the report
    says which."""
    parsed: Parsed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parsed", parse(self))

    @classmethod
    def from_model_config(cls, path: str | os.PathLike[str], **flags: Any) -> AttentionConfig:
        """Derive the model's facts from a Hugging Face `config.json` (or its directory).

        Explicit keyword arguments override what the config implies.
        """
        from compat.inputs.model_config import load_model_facts

        facts = load_model_facts(path, release_models(flags.get("sglang_version")))
        return cls(**{**facts.config_fields(), **flags})

    @classmethod
    def from_known_model(cls, name: str, **flags: Any) -> AttentionConfig:
        """A model the package knows (`compat.inputs.zoo`: gpt-oss-120b, DeepSeek-V3.2-Exp,
        ...), from its published config.json and the flags its model card launches it with
        (`--trust-remote-code`); UnknownModelError, with a did-you-mean, for another name.

        Explicit keyword arguments override what the model implies.
        """
        from compat.inputs.zoo import known_model_fields

        implied = known_model_fields(name, release_models(flags.get("sglang_version")))
        return cls(**{**implied, **flags})


FIELD_NAMES = tuple(name for name in AttentionConfig.__dataclass_fields__ if name != "parsed")
"""The fields a configuration is made of (its constructor's arguments), in declaration order."""
_INIT_FIELDS = frozenset(FIELD_NAMES)
_FIELD_INDEX = {name: index for index, name in enumerate(FIELD_NAMES)}
_NO_CHANGES: Mapping[str, Any] = MappingProxyType({})
_read_fields = operator.itemgetter(*FIELD_NAMES)


def field_values(
    config: AttentionConfig, /, changes: Mapping[str, Any] = _NO_CHANGES
) -> tuple[Any, ...]:
    """The values of `config`'s fields (`FIELD_NAMES`), `changes` applied: what
    `replaced(config, **changes)` would hold, without building it. Two configurations are
    equal exactly when these are (the dataclass compares these fields and nothing else)."""
    if not changes:
        return _read_fields(vars(config))  # type: ignore[no-any-return]
    values = list(_read_fields(vars(config)))
    for name, value in changes.items():
        index = _FIELD_INDEX.get(name)
        if index is None:
            raise TypeError(f"AttentionConfig has no field {name!r}")
        values[index] = value
    return tuple(values)


def replaced(config: AttentionConfig, /, **changes: Any) -> AttentionConfig:
    """`dataclasses.replace(config, **changes)`, validated the same way, without its generic
    per-field work: the finder and the fix search build hundreds of thousands of
    neighbouring configurations, and in a profile of the finder's data `replace` took
    longer than the checks themselves."""
    if type(config) is not AttentionConfig:  # a subclass may have an __init__ of its own
        import dataclasses

        return dataclasses.replace(config, **changes)
    unknown = changes.keys() - _INIT_FIELDS
    if unknown:
        raise TypeError(f"AttentionConfig has no field {sorted(unknown)[0]!r}")
    new = object.__new__(AttentionConfig)
    values = vars(new)
    values.update(vars(config))
    values.update(changes)
    base = values.pop("parsed")  # validated afresh, as construction does
    values["parsed"] = reparsed(new, base, changes) or parse(new)
    return new
