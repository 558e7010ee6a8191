"""The shape of SGLang's model-specific start-up code, and of the handlers it shares with it.

SGLang special-cases models by architecture: a branch of `_handle_model_specific_adjustments`
(from 0.5.15 also a declaration in `arg_groups/overrides.py`, from 0.5.19 in
`arg_groups/model_overrides/`) may write a default backend, a page size or a KV dtype, and
may refuse backends outside its list. Deterministic inference, the quantization check of
`ModelConfig`, its config loader and the hybrid linear-attention (Mamba) cache have rules
of their own that read the model too. Each is data here, filled per release by
`compat.releases` with where it was read, and replayed by `compat.engine.startup.models`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import msgspec

from compat.engine.predicates import ANY_FLAG, EITHER_PHASE, BackendField, GpuGate, Machine
from compat.vocab.terms import Term

if TYPE_CHECKING:
    from compat.engine.launch import Launch


class MambaCache(Term):
    """What a hybrid linear-attention model's Mamba cache supports with the radix cache."""

    NONE = "none"
    """No Mamba radix cache: SGLang turns the radix cache off."""
    NO_BUFFER = "no_buffer"
    """Only the no_buffer strategy (page size 1, no overlap schedule)."""
    EXTRA_BUFFER = "extra_buffer"
    """The extra_buffer strategy too (paging and overlap; needs the FLA kernels)."""


class SpecWithRadix(Term):
    """What the no_buffer strategy does with speculative decoding while the radix cache is on."""

    RADIX_OFF = "radix-off"
    REFUSE = "refuse"
    REFUSE_BUT_ROCM = "refuse-but-rocm"
    """Refused, except on ROCm, where the radix cache is turned off."""


class MachineChoice(msgspec.Struct, frozen=True):
    """What a model branch picks on the first machine whose test holds (`on` None: any)."""

    value: str
    on: Machine | None = None
    speculative: bool | None = None
    """Only with speculative decoding (True), only without (False), or either."""
    topk_one: bool = False
    """Only while `--speculative-eagle-topk` is unset or 1."""
    kv: str | None = None
    """Only with `--kv-cache-dtype` spelled so (MiniMax-M3's fp8 attention on SM100)."""

    def holds(self, launch: Launch, algorithm: str | None, topk: int | None) -> bool:
        if self.on is not None and not self.on.holds(launch):
            return False
        if self.kv is not None and launch.kv_spelling != self.kv:
            return False
        if self.speculative is not None and (algorithm is not None) is not self.speculative:
            return False
        return not self.topk_one or topk in (None, 1)


class MachinePage(msgspec.Struct, frozen=True):
    """The page size a model branch forces on a machine (`size` None: it leaves it)."""

    size: int | None
    on: Machine | None = None
    backends: frozenset[str] = frozenset()
    """Only while `--attention-backend`, as the branch left it, is one of these (empty: any)."""
    unset_only: bool = False
    """Only while `--page-size` is unset."""
    unless_preshuffle: bool = False
    """Not where aiter's preshuffle paged-MQA path is usable (`compat.engine.preshuffle`):
    DSA's page size 1 on ROCm from 0.5.12."""

    def sets(self, attention: str | None, page_size: int | None) -> bool:
        """Whether it writes its size, the machine matching."""
        return (
            self.size is not None
            and (not self.backends or attention in self.backends)
            and (not self.unset_only or page_size is None)
        )


class ModelRule(msgspec.Struct, frozen=True):
    """One model-specific branch of SGLang's start-up code.

    In SGLang's order: a refusal on a machine without a GPU runtime, the list check when it
    comes first, the default backend (only while the fields of `default_unless` are unset),
    the page size and KV dtype it forces, then its list check and the backends it refuses.
    """

    rule: str
    """The id of its findings (after `startup-`)."""
    model: str
    """How its findings name the model: the architecture, or the family."""
    architectures: frozenset[str]
    source: str
    """Where SGLang writes it: "file, function"."""
    substring: str | None = None
    """The branch also takes any architecture containing this (`"Llama4" in model_arch`)."""
    sparse: bool | None = None
    """DeepSeek sparse attention (DSA) models only (True), the others only (False), or any."""
    skip_devices: frozenset[str] = frozenset()
    """`--device` values for which the whole branch is skipped."""
    gpu_runtime: bool = False
    """The branch calls `torch.cuda`: on a machine without a GPU, start-up fails."""
    defaults: tuple[MachineChoice, ...] = ()
    default_fields: tuple[BackendField, ...] = (BackendField.ATTENTION,)
    """The flags its default writes (Moss-VL's `--prefill-attention-backend`, Kimi-K3's
    both phase flags)."""
    default_unless: frozenset[BackendField] = ANY_FLAG
    """The default is written only while every one of these fields is unset."""
    default_without_speculation: bool = False
    """No default with speculative decoding (which turns the radix cache off first)."""
    allowed: tuple[str, ...] = ()
    """The backends it accepts (empty: no list)."""
    checks: frozenset[BackendField] = EITHER_PHASE
    """Where its list looks: the resolved phases (both, or one), the `--attention-backend`
    field, or (`ANY_FLAG`) each of the three flags that is set."""
    check_before_default: bool = False
    refused: tuple[str, ...] = ()
    """Backends it refuses in `--attention-backend`."""
    pages: tuple[MachinePage, ...] = ()
    """The page size it forces, on the first machine that matches (whatever `--page-size`)."""
    kv_dtypes: frozenset[str] = frozenset()
    """The KV dtypes it runs (empty: any)."""
    kv_aliases: Mapping[str, str] = msgspec.field(default_factory=dict)
    auto_kv_dtype: Callable[[Launch], str] | None = None
    forces_dp_attention: bool = False
    speculation: str | None = None
    """With speculative decoding, the `--speculative-algorithm` it accepts, as spelled (the
    branch runs before NEXTN becomes EAGLE), and only with `--speculative-eagle-topk 1`
    given (DeepSeek V4's asserts); `speculation_also` are accepted at any top-k."""
    speculation_also: tuple[str, ...] = ()
    mamba: MambaCache | None = None
    """A hybrid linear-attention model: how the release keeps its Mamba cache."""
    prefers: str | None = None
    """The backend it takes instead of its own default when the default decision would pick
    it and the Mamba cache needs no page size 1 (Qwen3-Next's trtllm_mha on SM100)."""
    default_pages: Mapping[str, int] | None = None
    """Its default also sets the page size: per backend, else 1."""

    @property
    def default_backends(self) -> tuple[str, ...]:
        """Every backend its default may pick, in its order."""
        return tuple(dict.fromkeys(choice.value for choice in self.defaults))

    def applies(self, architecture: str, sparse: bool, device: str) -> bool:
        if architecture not in self.architectures and not (
            self.substring is not None and self.substring in architecture
        ):
            return False
        if self.sparse is not None and sparse is not self.sparse:
            return False
        return device not in self.skip_devices


class DeterministicRules(msgspec.Struct, frozen=True):
    """`--enable-deterministic-inference` (`_handle_deterministic_inference`)."""

    backends: tuple[str, ...]
    """`DETERMINISTIC_ATTENTION_BACKEND_CHOICES`: `--attention-backend` must be one."""
    deepseek_architectures: frozenset[str]
    deepseek_backends: tuple[str, ...]
    """What the DeepSeek-type models must run besides."""
    picks_default: bool
    """Runs before the default decision (0.5.12+): with no `--attention-backend` it picks one
    (`default_gate`: flashinfer, triton for DeepSeek-type models; else fa3). Before, it runs
    after the default decision and judges the default too."""
    default_gate: GpuGate
    source: str


class QuantizationRules(msgspec.Struct, frozen=True):
    """`ModelConfig._verify_quantization` and the quantization registry."""

    gated: Mapping[str, tuple[Machine, ...]]
    """Methods registered only on some machines (`mxfp4`): the machines that register them.
    The ROCm list and the compatible methods are read from the wheel
    (`compat.engine.models`)."""
    source: str


class LoaderRules(msgspec.Struct, frozen=True):
    """SGLang's config loader: what it reads, and what it reloads as another model."""

    reloads: Mapping[str, str]
    """Config types transformers refuses that SGLang reloads as another architecture
    (`deepseek_v32` -> `DeepseekV3ForCausalLM` up to 0.5.11)."""
    source: str


EXTRA_BUFFER_STRATEGIES = frozenset({"extra_buffer", "extra_buffer_lazy"})
"""The `--mamba-scheduler-strategy` values SGLang's `enable_mamba_extra_buffer()` holds true."""
TRACK_INTERVAL = 256
"""`ServerArgs.mamba_track_interval`'s default in every release: an extra_buffer Mamba cache
needs it to be a multiple of the page size and at least the speculative draft tokens."""


class HybridCacheRules(msgspec.Struct, frozen=True):
    """`_handle_mamba_radix_cache`: the Mamba cache of hybrid linear-attention models.

    Up to 0.5.13 the strategy is no_buffer unless asked; from 0.5.14 SGLang picks
    extra_buffer for the models that support it (the overlap schedule wants it), and checks
    each strategy's needs.
    """

    handled: bool
    """The release has the handler (0.5.9+); before, each model's branch acts alone."""
    picks_strategy: bool
    """0.5.14+: extra_buffer where supported, else no_buffer, each checked."""
    page_one: bool
    """no_buffer with the radix cache on: any page size becomes 1 (0.5.11-0.5.13)."""
    spec: SpecWithRadix
    extra_buffer_machines: tuple[Machine, ...]
    """Where the extra_buffer strategy runs (its FLA kernels); elsewhere start-up fails."""
    source: str
    strategies: tuple[str, ...] = ("auto", "no_buffer", "extra_buffer")
    """What `--mamba-scheduler-strategy` accepts (`MAMBA_SCHEDULER_STRATEGY_CHOICES`)."""
    ssm_dtypes: tuple[str, ...] = ("float32", "bfloat16")
    """What `--mamba-ssm-dtype` accepts (`MAMBA_SSM_DTYPE_CHOICES`): the dtype of the Mamba
    cache's SSM states, which FlashInfer's linear-attention kernels read on SM100+."""
    extra_buffer_checked: bool = True
    """An asked-for extra_buffer's machine, draft tokens and page size are checked (0.5.8
    checks them in another model's branch)."""
    page_divides: int = TRACK_INTERVAL
    """An asked-for extra_buffer strategy needs the page size to divide this: the default
    `--mamba-track-interval` (256), and up to 0.5.8 the FLA chunk (64) too."""
    decode_radix_off_first: bool = False
    """A decode server's radix cache is off before the model branches run (0.5.11+:
    `_handle_pd_disaggregation` runs first)."""
    extra_buffer_linear_attn: str | None = None
    """The `--linear-attn-backend` a model's extra_buffer support needs (0.5.14+: triton,
    the flag's default); with another, the model takes no_buffer."""
