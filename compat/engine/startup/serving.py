"""SGLang's serving handlers that read the model, replayed: deterministic inference
(`_handle_deterministic_inference`) and data parallelism (`_handle_data_parallelism`, and
the decode server's check of `_handle_pd_disaggregation`).

Deterministic inference runs before the default decision from 0.5.12 (it picks its own
backend), after it before; the data-parallel check after the backend check.
"""

from __future__ import annotations

from compat.engine.launch import Launch
from compat.engine.model_events import (
    DecodeRoundRobin,
    DeterministicBackends,
    DeterministicDefault,
    DpAttentionSplit,
)
from compat.engine.predicates import gpu_gate_holds
from compat.engine.rules import ReleaseRules
from compat.engine.startup.state import ServerArgsFields, StartupLog


def handle_deterministic_inference(
    launch: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields, log: StartupLog
) -> str | None:
    """`_handle_deterministic_inference`: its own default (when it runs before the default
    decision), then its lists. Returns the backend it chose, if any."""
    if not launch.deterministic:
        return None
    deterministic = rules.deterministic
    deepseek = model in deterministic.deepseek_architectures
    chosen = None
    if f.attention is None:
        if gpu_gate_holds(deterministic.default_gate, launch):
            chosen = "triton" if deepseek else "flashinfer"
        else:
            chosen = "fa3"
        f.attention = chosen
        log.add(
            DeterministicDefault(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=chosen,
                backend=chosen,
                chosen=chosen,
            )
        )
    elif f.attention not in deterministic.backends:
        log.add(
            DeterministicBackends(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=f.attention,
                allowed=deterministic.backends,
                backend=f.attention,
                backends=deterministic.backends,
                source=deterministic.source,
            )
        )
    if deepseek and f.attention not in deterministic.deepseek_backends:
        log.add(
            DeterministicBackends(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=f.attention,
                allowed=deterministic.deepseek_backends,
                backend=f.attention,
                backends=deterministic.deepseek_backends,
                model=model,
            )
        )
    return chosen


def handle_data_parallelism(
    launch: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_data_parallelism`: DP attention splits the TP ranks into `--dp-size` groups;
    `_handle_pd_disaggregation`: a decode server's DP needs the round-robin balance."""
    if (
        rules.decode_dp_needs_round_robin
        and launch.disaggregation == "decode"
        and launch.dp_size > 1
        and not launch.round_robin_balance
    ):
        log.add(
            DecodeRoundRobin(
                flags=("--disaggregation-mode", "--dp-size", "--prefill-round-robin-balance"),
                value=launch.dp_size,
            )
        )
    if launch.dp_size == 1:
        f.dp_attention = False
    if f.dp_attention and launch.tp_size % launch.dp_size:
        log.add(
            DpAttentionSplit(
                flags=("--tp-size", "--dp-size", "--enable-dp-attention"),
                value=launch.tp_size,
                tp_size=launch.tp_size,
                dp_size=launch.dp_size,
            )
        )
