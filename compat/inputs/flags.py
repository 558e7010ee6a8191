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


class FlagGroup(Enum):
    """What a flag is about: `compat check --help` lists the flags under these headings."""

    BACKENDS = "SGLang attention backends"
    SUB_BACKENDS = "SGLang sub-backends (the kernels inside a backend)"
    KV_CACHE = "SGLang KV cache"
    SPECULATIVE = "SGLang speculative decoding"
    MODEL = "SGLang model loading"
    SERVING = "SGLang parallelism and serving"


@dataclass(frozen=True, slots=True)
class Flag:
    """One SGLang launch flag: the AttentionConfig (and ServerArgs) field that holds it."""

    field: str
    value: FlagValue
    group: FlagGroup
    help: str
    """One line for `--help`: what the flag sets, in a few words."""
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


ATTENTION_BACKEND = Flag(
    "attention_backend",
    FlagValue.NAME,
    FlagGroup.BACKENDS,
    "both phases' backend (unset: SGLang picks one)",
)
PREFILL_ATTENTION_BACKEND = Flag(
    "prefill_attention_backend",
    FlagValue.NAME,
    FlagGroup.BACKENDS,
    "the prefill phase's backend, over --attention-backend",
)
DECODE_ATTENTION_BACKEND = Flag(
    "decode_attention_backend",
    FlagValue.NAME,
    FlagGroup.BACKENDS,
    "the decode phase's backend, over --attention-backend",
)
# The sub-backend flags: each chooses the kernels of one part of the model (DeepSeek sparse
# attention, the linear-attention layers of hybrid models, the vision encoder). Their choices
# are each release's own (`compat.engine.parser.sub_data`). `--nsa-*` is the only spelling up
# to 0.5.12; 0.5.13 brought `--dsa-*` and kept `--nsa-*` as another name up to 0.5.19.
DSA_PREFILL_BACKEND = Flag(
    "dsa_prefill_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "DeepSeek sparse attention's prefill kernel",
    aliases=("--nsa-prefill-backend",),
)
DSA_DECODE_BACKEND = Flag(
    "dsa_decode_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "DeepSeek sparse attention's decode kernel",
    aliases=("--nsa-decode-backend",),
)
LINEAR_ATTN_BACKEND = Flag(
    "linear_attn_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "linear-attention layers' kernel (hybrid models)",
)
LINEAR_ATTN_PREFILL_BACKEND = Flag(
    "linear_attn_prefill_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "their prefill kernel, over --linear-attn-backend",
)
LINEAR_ATTN_DECODE_BACKEND = Flag(
    "linear_attn_decode_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "their decode kernel, over --linear-attn-backend",
)
MM_ATTENTION_BACKEND = Flag(
    "mm_attention_backend",
    FlagValue.NAME,
    FlagGroup.SUB_BACKENDS,
    "the vision encoder's attention (unset: by GPU)",
)
KV_CACHE_DTYPE = Flag(
    "kv_cache_dtype", FlagValue.NAME, FlagGroup.KV_CACHE, "the KV cache's dtype (auto: the model's)"
)
PAGE_SIZE = Flag(
    "page_size",
    FlagValue.INTEGER,
    FlagGroup.KV_CACHE,
    "tokens per KV page (unset: 1, or the backend's own)",
)
SPECULATIVE_ALGORITHM = Flag(
    "speculative_algorithm", FlagValue.NAME, FlagGroup.SPECULATIVE, "turns speculative decoding on"
)
SPECULATIVE_EAGLE_TOPK = Flag(
    "speculative_eagle_topk", FlagValue.INTEGER, FlagGroup.SPECULATIVE, "draft branches per step"
)
SPECULATIVE_NUM_STEPS = Flag(
    "speculative_num_steps", FlagValue.INTEGER, FlagGroup.SPECULATIVE, "draft steps"
)
SPECULATIVE_NUM_DRAFT_TOKENS = Flag(
    "speculative_num_draft_tokens",
    FlagValue.INTEGER,
    FlagGroup.SPECULATIVE,
    "draft tokens verified at once",
)
SPECULATIVE_ATTENTION_MODE = Flag(
    "speculative_attention_mode",
    FlagValue.NAME,
    FlagGroup.SPECULATIVE,
    "the phase whose backend drafts and verifies",
)
# The draft model's backend: unset, it inherits the target's
# (`compat.engine.build.predict_draft_worker` replays both).
SPECULATIVE_DRAFT_ATTENTION_BACKEND = Flag(
    "speculative_draft_attention_backend",
    FlagValue.NAME,
    FlagGroup.SPECULATIVE,
    "the draft model's backend (unset: the target's)",
)
# The flags that move SGLang's start-up decisions besides the attention flags.
TRUST_REMOTE_CODE = Flag(
    "trust_remote_code", FlagValue.SWITCH, FlagGroup.MODEL, "load the checkpoint's own code"
)
QUANTIZATION = Flag(
    "quantization", FlagValue.NAME, FlagGroup.MODEL, "the weights' quantization method"
)
# `--device`: the devices SGLang's help names (unset, SGLang detects the machine's own).
DEVICE = Flag(
    "device",
    FlagValue.NAME,
    FlagGroup.SERVING,
    "the device to run on (unset: detected)",
    choices=("cuda", "xpu", "hpu", "npu", "cpu", "musa"),
)
TP_SIZE = Flag(
    "tp_size",
    FlagValue.INTEGER,
    FlagGroup.SERVING,
    "tensor-parallel size",
    aliases=("--tensor-parallel-size",),
)
DP_SIZE = Flag(
    "dp_size",
    FlagValue.INTEGER,
    FlagGroup.SERVING,
    "data-parallel size",
    aliases=("--data-parallel-size",),
)
ENABLE_DP_ATTENTION = Flag(
    "enable_dp_attention", FlagValue.SWITCH, FlagGroup.SERVING, "data-parallel attention"
)
ENABLE_DETERMINISTIC_INFERENCE = Flag(
    "enable_deterministic_inference",
    FlagValue.SWITCH,
    FlagGroup.SERVING,
    "deterministic inference (it has its own backends)",
)
DISAGGREGATION_MODE = Flag(
    "disaggregation_mode",
    FlagValue.NAME,
    FlagGroup.SERVING,
    "its role in prefill-decode disaggregation",
    choices=("null", "prefill", "decode"),
)
MAMBA_SCHEDULER_STRATEGY = Flag(
    "mamba_scheduler_strategy",
    FlagValue.NAME,
    FlagGroup.KV_CACHE,
    "a hybrid model's Mamba cache strategy",
    aliases=("--mamba-radix-cache-strategy",),
)
MAMBA_SSM_DTYPE = Flag(
    "mamba_ssm_dtype",
    FlagValue.NAME,
    FlagGroup.KV_CACHE,
    "a hybrid model's Mamba SSM state dtype",
)
PREFILL_ROUND_ROBIN_BALANCE = Flag(
    "prefill_round_robin_balance",
    FlagValue.SWITCH,
    FlagGroup.SERVING,
    "a decode server's round-robin balance",
)
DISABLE_CUDA_GRAPH = Flag(
    "disable_cuda_graph",
    FlagValue.SWITCH,
    FlagGroup.SERVING,
    "no CUDA graphs (nothing is captured after the weights load)",
)
DISABLE_HYBRID_SWA_MEMORY = Flag(
    "disable_hybrid_swa_memory",
    FlagValue.SWITCH,
    FlagGroup.KV_CACHE,
    "no sliding-window KV pool for a hybrid sliding-window model",
)
ENABLE_HIERARCHICAL_CACHE = Flag(
    "enable_hierarchical_cache",
    FlagValue.SWITCH,
    FlagGroup.KV_CACHE,
    "the hierarchical (host memory) KV cache",
)

FLAGS = (
    ATTENTION_BACKEND,
    PREFILL_ATTENTION_BACKEND,
    DECODE_ATTENTION_BACKEND,
    DSA_PREFILL_BACKEND,
    DSA_DECODE_BACKEND,
    LINEAR_ATTN_BACKEND,
    LINEAR_ATTN_PREFILL_BACKEND,
    LINEAR_ATTN_DECODE_BACKEND,
    MM_ATTENTION_BACKEND,
    KV_CACHE_DTYPE,
    PAGE_SIZE,
    MAMBA_SCHEDULER_STRATEGY,
    MAMBA_SSM_DTYPE,
    DISABLE_HYBRID_SWA_MEMORY,
    ENABLE_HIERARCHICAL_CACHE,
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
    DISABLE_CUDA_GRAPH,
)
"""Every modelled flag: the attention flags, then the others start-up reads, each group in
the order SGLang's `--help` lists them (and `compat check` too)."""

BACKEND_FLAGS = (ATTENTION_BACKEND, PREFILL_ATTENTION_BACKEND, DECODE_ATTENTION_BACKEND)
"""The flags that name a backend: one for both phases, then one per phase."""

SUB_BACKEND_FLAGS = tuple(flag for flag in FLAGS if flag.group is FlagGroup.SUB_BACKENDS)
"""The flags that name a sub-backend: each release accepts its own names for each."""

FLAG_FIELDS = tuple(flag.field for flag in FLAGS)
"""The AttentionConfig fields that are SGLang launch flags, in SGLang's order."""
