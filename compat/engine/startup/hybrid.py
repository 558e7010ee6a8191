"""SGLang's Mamba cache handler, replayed: `_handle_mamba_radix_cache` (from 0.5.19
`arg_groups/mamba_hook.py`).

A hybrid linear-attention model keeps recurrent state beside its KV cache. With the radix
cache on, SGLang picks a strategy for it (no_buffer, or from 0.5.14 extra_buffer where the
model supports it) and checks what that strategy needs: the page size, the backend, the
machine, speculative decoding. It runs inside the model's branch, after its default.

`--mamba-scheduler-strategy` (`--mamba-radix-cache-strategy` from 0.5.14) names the strategy
instead. Up to 0.5.13 an asked-for extra_buffer is checked whatever the radix cache does
(the model must have it, the machine must run its FLA kernels, the page size must divide the
track interval) and skips every no_buffer adjustment: no page size 1, and speculative
decoding keeps the radix cache. From 0.5.14 it is checked only with the radix cache on, and
an asked-for no_buffer needs the overlap schedule off, which no modelled flag turns off.
"""

from __future__ import annotations

from compat.engine.events import REFUSE, WARN
from compat.engine.launch import Launch
from compat.engine.model_events import (
    HybridCacheBackend,
    HybridCacheExtraBuffer,
    HybridCachePageOne,
    HybridCachePlatform,
    HybridCacheSpeculation,
    HybridCacheStrategy,
)
from compat.engine.model_rules import (
    EXTRA_BUFFER_STRATEGIES,
    TRACK_INTERVAL,
    HybridCacheRules,
    MambaCache,
    ModelRule,
    SpecWithRadix,
)
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.vocab.terms import Platform

_STRATEGY_FLAG = "--mamba-scheduler-strategy"
NO_BUFFER = "no_buffer"


def handle_mamba_cache(
    launch: Launch, hybrid: HybridCacheRules, rule: ModelRule, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_mamba_radix_cache`: the strategy of a hybrid model's Mamba cache, and its needs."""
    if rule.mamba is MambaCache.NONE:
        if hybrid.handled:
            f.radix_cache = False
        return  # before 0.5.9 the model's branch turns it off; the strategy is never read
    strategy = launch.mamba_strategy
    if hybrid.decode_radix_off_first and launch.disaggregation == "decode":
        strategy = NO_BUFFER  # the decode server's chunk cache: extra_buffer falls back
    if not hybrid.picks_strategy:
        if strategy in EXTRA_BUFFER_STRATEGIES:
            _check_extra_buffer(launch, hybrid, rule, log, strategy)
            return  # none of no_buffer's adjustments
        if not hybrid.handled:
            return  # each model's branch acts alone (its default)
    if not f.radix_cache:
        return
    f.mamba_no_buffer = not hybrid.picks_strategy
    if hybrid.picks_strategy and strategy == "auto":
        # SGLang picks extra_buffer with the overlap schedule on (no modelled flag turns it
        # off) where the model has it (from 0.5.14 only with the linear-attention kernel its
        # support test names), else no_buffer, turning the overlap schedule off.
        extra = rule.mamba is MambaCache.EXTRA_BUFFER and _linear_ok(launch, hybrid)
        strategy = "extra_buffer" if extra else "auto"
    if hybrid.picks_strategy and strategy in EXTRA_BUFFER_STRATEGIES:
        _check_extra_buffer(launch, hybrid, rule, log, strategy)
        return
    if f.page_size not in (None, 1) and (hybrid.page_one or hybrid.picks_strategy):
        log.add(
            HybridCachePageOne(
                severity=REFUSE if hybrid.picks_strategy else WARN,
                flags=("--page-size",),
                value=f.page_size,
                allowed=(1,),
                model=rule.model,
            )
        )
        f.page_size = 1
    if hybrid.picks_strategy and strategy == NO_BUFFER:
        # Asked for, no_buffer finds the overlap schedule on (`_validate_mamba_no_buffer`).
        log.add(HybridCacheStrategy(flags=(_STRATEGY_FLAG,), value=strategy, model=rule.model))
    if hybrid.picks_strategy:
        if f.attention == "trtllm_mha":
            log.add(
                HybridCacheBackend(
                    flags=("--attention-backend",),
                    value=f.attention,
                    backend=f.attention,
                    model=rule.model,
                )
            )
        return
    if f.algorithm is None:
        if f.attention == "trtllm_mha":
            f.radix_cache = False  # trtllm_mha cannot run page size 1
        return
    spec = hybrid.spec
    if spec is SpecWithRadix.RADIX_OFF or (
        spec is SpecWithRadix.REFUSE_BUT_ROCM and launch.platform is Platform.ROCM
    ):
        f.radix_cache = False
    else:
        log.add(
            HybridCacheSpeculation(
                flags=("--speculative-algorithm",), value=f.algorithm, model=rule.model
            )
        )


def _linear_ok(launch: Launch, hybrid: HybridCacheRules) -> bool:
    """Whether the launch's `--linear-attn-backend` (unset: the default, which the support
    test names) lets the model take extra_buffer."""
    needs = hybrid.extra_buffer_linear_attn
    chosen = launch.sub_backends.linear_attn_backend
    return needs is None or chosen is None or chosen == needs


def _check_extra_buffer(
    launch: Launch, hybrid: HybridCacheRules, rule: ModelRule, log: StartupLog, strategy: str
) -> None:
    """The extra_buffer strategy's asserts: the model has it, the machine runs its FLA
    kernels, its track interval holds the draft tokens and is a multiple of the page size."""
    if rule.mamba is not MambaCache.EXTRA_BUFFER or not _linear_ok(launch, hybrid):
        log.add(HybridCacheStrategy(flags=(_STRATEGY_FLAG,), value=strategy, model=rule.model))
        return
    if not hybrid.extra_buffer_checked:
        return
    if not any(machine.holds(launch) for machine in hybrid.extra_buffer_machines):
        log.add(
            HybridCachePlatform(
                flags=("--platform",),
                value=launch.platform.value,
                model=rule.model,
                machines=tuple(m.label for m in hybrid.extra_buffer_machines),
            )
        )
        return
    draft = launch.draft_tokens
    if draft is not None and draft > TRACK_INTERVAL:
        log.add(
            HybridCacheExtraBuffer(
                flags=("--speculative-num-draft-tokens",),
                value=draft,
                model=rule.model,
                interval=TRACK_INTERVAL,
            )
        )
        return
    page = launch.page_size
    if page is not None and hybrid.page_divides % page:
        log.add(
            HybridCacheExtraBuffer(
                flags=("--page-size",), value=page, model=rule.model, interval=hybrid.page_divides
            )
        )
