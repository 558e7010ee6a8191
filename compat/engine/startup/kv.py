"""SGLang's KV-cache dtype checks, replayed: the GPU a dtype needs, and the FP4 cache's rules.

They run after the backend check (`_handle_kv4_compatibility` reads the backends it left),
so they judge the backends SGLang is about to run, defaults and rewrites included.
"""

from __future__ import annotations

import msgspec

from compat.engine.events import (
    Kv4HybridPair,
    Kv4OffCuda,
    Kv4Partner,
    Kv4Single,
    KvDtypeGpu,
    Nvfp4Disaggregation,
    Nvfp4DraftBackend,
    Nvfp4NgramBreadth,
    Nvfp4SpecAlgorithm,
)
from compat.engine.launch import Launch
from compat.engine.rules import Kv4Rules, ReleaseRules
from compat.engine.startup.state import ServerArgsFields, StartupLog, gpu_gate_holds
from compat.vocab.terms import Platform, Severity

_FLAGS = ("--kv-cache-dtype",)


def handle_kv_dtype_gpu(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """KV dtypes whose check names a GPU (e.g. MXFP8's `_handle_mxfp8_kv_cache_compatibility`)."""
    gate = rules.kv_gates.get(f.kv_dtype)
    if gate is not None and not gpu_gate_holds(gate, parsed):
        log.add(
            KvDtypeGpu(
                flags=(*_FLAGS, "--compute-capability"),
                value=parsed.capability or parsed.platform.value,
                kv_dtype=f.kv_dtype,
                gate=gate,
            )
        )


def handle_kv4_compatibility(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_kv4_compatibility`: CUDA only, then the pair or the one backend it allows."""
    kv4 = rules.kv4
    if f.kv_dtype not in kv4.spellings:
        return
    cuda_rule, pair_rule, hybrid_rule, _ = kv4.rule_ids
    if parsed.platform is not Platform.CUDA:
        log.add(
            Kv4OffCuda(
                rule=cuda_rule,
                flags=(*_FLAGS, "--platform"),
                value=parsed.platform.value,
                allowed=("cuda",),
                kv_dtype=f.kv_dtype,
            )
        )
        return
    prefill, decode = f.phases
    # `uses_sm100_trtllm_nvfp4`: the native NVFP4 layout on SM100's trtllm_mha.
    native = (
        f.kv_dtype == "nvfp4"
        and parsed.capability is not None
        and parsed.capability.major == 10
        and "trtllm_mha" in (prefill, decode)
    )
    if native:
        _native_algorithm(rules, kv4, f, log)
        _native_draft_backend(kv4, f, log)
    if kv4.native_refuses_disaggregation and native and parsed.disaggregation != "null":
        log.add(
            Nvfp4Disaggregation(
                flags=("--kv-cache-dtype", "--disaggregation-mode"),
                value=parsed.disaggregation,
                backend="trtllm_mha",
            )
        )
    if prefill != decode and prefill != kv4.pair_prefill:
        log.add(
            Kv4HybridPair(
                rule=hybrid_rule,
                flags=("--prefill-attention-backend", "--decode-attention-backend"),
                value=f"{prefill}+{decode}",
                kv_dtype=f.kv_dtype,
                prefill=prefill,
                decode=decode,
            )
        )
    elif prefill == kv4.pair_prefill:
        partners = kv4.pair_partners[parsed.arch]
        if decode not in partners:
            log.add(
                Kv4Partner(
                    rule=pair_rule,
                    flags=(*_FLAGS, "--decode-attention-backend"),
                    value=decode,
                    allowed=partners,
                    backend=decode,
                    kv_dtype=f.kv_dtype,
                    prefill=prefill,
                    partners=partners,
                )
            )
    else:
        _kv4_single_backend(parsed, kv4, f, log)


def _native_algorithm(
    rules: ReleaseRules, kv4: Kv4Rules, f: ServerArgsFields, log: StartupLog
) -> None:
    """Only some algorithms run on the native layout, NGRAM only as a linear chain."""
    allowed = kv4.native_spec_algorithms
    if allowed is None or f.algorithm is None:
        return
    flags = ("--kv-cache-dtype", "--speculative-algorithm")
    if f.algorithm not in allowed:
        log.add(
            Nvfp4SpecAlgorithm(
                flags=flags, value=f.algorithm, allowed=tuple(sorted(allowed)),
                backend="trtllm_mha", algorithm=f.algorithm,
            )
        )  # fmt: skip
    elif f.algorithm == rules.ngram and kv4.native_ngram_breadth not in (
        None,
        rules.ngram_bfs_breadth,
    ):
        # The guard reads no --speculative-ngram-max-bfs-breadth: SGLang's default stands.
        log.add(
            Nvfp4NgramBreadth(
                flags=flags, value=rules.ngram_bfs_breadth,
                allowed=(kv4.native_ngram_breadth,), backend="trtllm_mha",
                breadth=rules.ngram_bfs_breadth, required=kv4.native_ngram_breadth,
            )
        )  # fmt: skip


def _native_draft_backend(kv4: Kv4Rules, f: ServerArgsFields, log: StartupLog) -> None:
    """A draft model (any algorithm but NGRAM) runs on the backend that reads the native
    layout: an unset `--speculative-draft-attention-backend` is set to it, another one is
    refused."""
    required = kv4.native_draft_backend
    if required is None or f.algorithm in (None, "NGRAM") or f.draft_backend == required:
        return
    event = Nvfp4DraftBackend(
        flags=("--kv-cache-dtype", "--speculative-draft-attention-backend"),
        value=f.draft_backend,
        allowed=(required,),
        backend=f.draft_backend,
        required=required,
    )
    if f.draft_backend is None:
        event = msgspec.structs.replace(event, severity=Severity.INFO)
        f.draft_backend = required
    log.add(event)


def _kv4_single_backend(
    parsed: Launch, kv4: Kv4Rules, f: ServerArgsFields, log: StartupLog
) -> None:
    """One backend for both phases: it must be on the architecture's FP4 list."""
    single = kv4.single[parsed.arch]
    if f.attention not in single:
        log.add(
            Kv4Single(
                rule=kv4.single_rule,
                flags=(*_FLAGS, "--attention-backend"),
                value=f.attention,
                allowed=single,
                backend=f.attention,
                kv_dtype=f.kv_dtype,
                backends=single,
                arch=parsed.arch,
            )
        )
