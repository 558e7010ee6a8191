"""The SGLang launch flags the guard models, declared once.

Everything that names one of them reads this table: `AttentionConfig`'s validation (which
flag a problem is about), `compat check`'s and `compat matrix`'s options, the launch-command
reader (which flags it picks out) and `enforce()` (which ServerArgs attributes it reads).
Each flag is the AttentionConfig field of the same name, spelled as SGLang spells its flag.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum


class FlagValue(Enum):
    """What a flag's value is: it decides how a command line's text is converted."""

    NAME = "name"
    """One of a release's names (a backend, a KV dtype, an algorithm, a mode)."""
    INTEGER = "integer"
    """A positive integer."""
    SWITCH = "switch"
    """A flag without a value: given is True, absent is False."""


def flag_of(field_name: str) -> str:
    """The command-line flag of an AttentionConfig field: SGLang's own spelling rule."""
    return "--" + field_name.replace("_", "-")


def flag_field(option: str) -> str:
    """The AttentionConfig field of a command-line flag (`--page-size` -> `page_size`)."""
    return option.removeprefix("--").replace("-", "_")


@dataclass(frozen=True, slots=True)
class Flag:
    """One SGLang launch flag: the AttentionConfig (and ServerArgs) field that holds it."""

    field: str
    value: FlagValue
    aliases: tuple[str, ...] = ()
    """Other spellings SGLang's parser declares for the flag (`--tensor-parallel-size`)."""
    choices: tuple[str, ...] = ()
    """A name's values, where every release takes the same (else the release's own lists)."""
    option: str = dataclasses.field(init=False)
    """The flag as written on the command line, e.g. `--page-size`."""

    def __post_init__(self) -> None:
        # Stored, not a property: the validator reads it for every problem it words.
        object.__setattr__(self, "option", flag_of(self.field))

    @property
    def integer(self) -> bool:
        return self.value is FlagValue.INTEGER

    @property
    def switch(self) -> bool:
        return self.value is FlagValue.SWITCH

    @property
    def options(self) -> tuple[str, ...]:
        """Every spelling of the flag: its own, then SGLang's aliases."""
        return (self.option, *self.aliases)


ATTENTION_BACKEND = Flag("attention_backend", FlagValue.NAME)
PREFILL_ATTENTION_BACKEND = Flag("prefill_attention_backend", FlagValue.NAME)
DECODE_ATTENTION_BACKEND = Flag("decode_attention_backend", FlagValue.NAME)
KV_CACHE_DTYPE = Flag("kv_cache_dtype", FlagValue.NAME)
PAGE_SIZE = Flag("page_size", FlagValue.INTEGER)
SPECULATIVE_ALGORITHM = Flag("speculative_algorithm", FlagValue.NAME)
SPECULATIVE_EAGLE_TOPK = Flag("speculative_eagle_topk", FlagValue.INTEGER)
SPECULATIVE_NUM_STEPS = Flag("speculative_num_steps", FlagValue.INTEGER)
SPECULATIVE_NUM_DRAFT_TOKENS = Flag("speculative_num_draft_tokens", FlagValue.INTEGER)
SPECULATIVE_ATTENTION_MODE = Flag("speculative_attention_mode", FlagValue.NAME)
# Read only to know whether the draft model inherits the target's backends (unset): the
# engine predicts the draft's build only then (`compat.engine.build.build_after_startup`).
SPECULATIVE_DRAFT_ATTENTION_BACKEND = Flag("speculative_draft_attention_backend", FlagValue.NAME)
# The flags that move SGLang's start-up decisions besides the attention flags.
TRUST_REMOTE_CODE = Flag("trust_remote_code", FlagValue.SWITCH)
QUANTIZATION = Flag("quantization", FlagValue.NAME)
# `--device`: the devices SGLang's help names (unset, SGLang detects the machine's own).
DEVICE = Flag("device", FlagValue.NAME, choices=("cuda", "xpu", "hpu", "npu", "cpu", "musa"))
TP_SIZE = Flag("tp_size", FlagValue.INTEGER, aliases=("--tensor-parallel-size",))
DP_SIZE = Flag("dp_size", FlagValue.INTEGER, aliases=("--data-parallel-size",))
ENABLE_DP_ATTENTION = Flag("enable_dp_attention", FlagValue.SWITCH)
ENABLE_DETERMINISTIC_INFERENCE = Flag("enable_deterministic_inference", FlagValue.SWITCH)
DISAGGREGATION_MODE = Flag(
    "disaggregation_mode", FlagValue.NAME, choices=("null", "prefill", "decode")
)
PREFILL_ROUND_ROBIN_BALANCE = Flag("prefill_round_robin_balance", FlagValue.SWITCH)

FLAGS = (
    ATTENTION_BACKEND,
    PREFILL_ATTENTION_BACKEND,
    DECODE_ATTENTION_BACKEND,
    KV_CACHE_DTYPE,
    PAGE_SIZE,
    SPECULATIVE_ALGORITHM,
    SPECULATIVE_EAGLE_TOPK,
    SPECULATIVE_NUM_STEPS,
    SPECULATIVE_NUM_DRAFT_TOKENS,
    SPECULATIVE_ATTENTION_MODE,
    SPECULATIVE_DRAFT_ATTENTION_BACKEND,
    TRUST_REMOTE_CODE,
    QUANTIZATION,
    DEVICE,
    TP_SIZE,
    DP_SIZE,
    ENABLE_DP_ATTENTION,
    ENABLE_DETERMINISTIC_INFERENCE,
    DISAGGREGATION_MODE,
    PREFILL_ROUND_ROBIN_BALANCE,
)
"""Every modelled flag: the attention flags, then the others start-up reads, each group in
the order SGLang's `--help` lists them (and `compat check` too)."""

BACKEND_FLAGS = (ATTENTION_BACKEND, PREFILL_ATTENTION_BACKEND, DECODE_ATTENTION_BACKEND)
"""The flags that name a backend: one for both phases, then one per phase."""

FLAG_FIELDS = tuple(flag.field for flag in FLAGS)
"""The AttentionConfig fields that are SGLang launch flags, in SGLang's order."""
