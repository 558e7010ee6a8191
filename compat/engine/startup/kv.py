"""SGLang's KV-cache dtype checks, replayed: the GPU a dtype needs, and the FP4 cache's rules.

They run after the backend check (`_handle_kv4_compatibility` reads the backends it left),
so they judge the backends SGLang is about to run, defaults and rewrites included.
"""

from __future__ import annotations

from compat.inputs.config import Parsed
from compat.engine.rules import Kv4Rules, ReleaseRules
from compat.claim.matrix import ColumnId
from compat.engine.startup.state import REFUSE, WARN, ServerArgsFields, StartupLog, gpu_gate_holds
from compat.vocab.terms import Platform

_FLAGS = ("--kv-cache-dtype",)


def handle_kv_dtype_gpu(
    parsed: Parsed, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """KV dtypes whose check names a GPU (e.g. MXFP8's `_handle_mxfp8_kv_cache_compatibility`)."""
    gate = rules.kv_gates.get(f.kv_dtype)
    if gate is not None and not gpu_gate_holds(gate, parsed):
        log.add(
            REFUSE,
            "kv-dtype-gpu",
            f"--kv-cache-dtype {f.kv_dtype} needs {gate.label}",
            (*_FLAGS, "--compute-capability"),
            value=parsed.capability or parsed.platform.value,
        )


def handle_kv4_compatibility(
    parsed: Parsed, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_kv4_compatibility`: CUDA only, then the pair or the one backend it allows."""
    kv4 = rules.kv4
    if f.kv_dtype not in kv4.spellings:
        return
    cuda_rule, pair_rule, hybrid_rule = kv4.rule_ids
    if parsed.platform is not Platform.CUDA:
        log.add(
            REFUSE,
            cuda_rule,
            f"--kv-cache-dtype {f.kv_dtype} runs only on CUDA",
            (*_FLAGS, "--platform"),
            value=parsed.platform.value,
            allowed=("cuda",),
        )
        return
    prefill, decode = f.phases
    if prefill != decode and prefill != kv4.pair_prefill:
        log.add(
            WARN,
            hybrid_rule,
            f"--kv-cache-dtype {f.kv_dtype} with prefill on {prefill} "
            f"and decode on {decode} may hit rare edge cases",
            ("--prefill-attention-backend", "--decode-attention-backend"),
            value=f"{prefill}+{decode}",
        )
    elif prefill == kv4.pair_prefill:
        partners = kv4.pair_partners[parsed.arch]
        if decode not in partners:
            log.add(
                REFUSE,
                pair_rule,
                f"with --kv-cache-dtype {f.kv_dtype} and "
                f"prefill on {prefill}, decode must run on {', '.join(partners)}",
                (*_FLAGS, "--decode-attention-backend"),
                value=decode,
                allowed=partners,
                backend=decode,
            )
    else:
        _kv4_single_backend(parsed, kv4, f, log)


def _kv4_single_backend(
    parsed: Parsed, kv4: Kv4Rules, f: ServerArgsFields, log: StartupLog
) -> None:
    """One backend for both phases: it must be on the architecture's FP4 list."""
    single = kv4.single[parsed.arch]
    if f.attention not in single:
        log.add(
            REFUSE,
            ColumnId.FP4_KV.rule_id,
            f"--kv-cache-dtype {f.kv_dtype} runs only on "
            f"{', '.join(single)} for {parsed.arch.label} models",
            (*_FLAGS, "--attention-backend"),
            value=f.attention,
            allowed=single,
            backend=f.attention,
        )
