"""SGLang's Mamba cache handler, replayed: `_handle_mamba_radix_cache` (from 0.5.19
`arg_groups/mamba_hook.py`).

A hybrid linear-attention model keeps recurrent state beside its KV cache. With the radix
cache on, SGLang picks a strategy for it (no_buffer, or from 0.5.14 extra_buffer where the
model supports it) and checks what that strategy needs: the page size, the backend, the
machine, speculative decoding. It runs inside the model's branch, after its default.
"""

from __future__ import annotations

from compat.engine.events import REFUSE, WARN
from compat.engine.launch import Launch
from compat.engine.model_events import (
    HybridCacheBackend,
    HybridCachePageOne,
    HybridCachePlatform,
    HybridCacheSpeculation,
)
from compat.engine.model_rules import HybridCacheRules, MambaCache, ModelRule, SpecWithRadix
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.vocab.terms import Platform


def handle_mamba_cache(
    launch: Launch, hybrid: HybridCacheRules, rule: ModelRule, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_mamba_radix_cache`: the strategy of a hybrid model's Mamba cache, and its needs."""
    if not hybrid.handled:
        return  # each model's branch acts alone (its default)
    if rule.mamba is MambaCache.NONE:
        f.radix_cache = False
        return
    if not f.radix_cache:
        return
    f.mamba_no_buffer = not hybrid.picks_strategy
    if (
        hybrid.picks_strategy
        and rule.mamba is MambaCache.EXTRA_BUFFER
        and _linear_ok(launch, hybrid)
    ):
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
