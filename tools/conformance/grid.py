"""The launch grid the conformance suite runs through SGLang's start-up code.

Dimensions: every GPU profile x every model x a backend selection x KV dtype x page size x
speculative setting, per release with that release's own spellings. The backend list is
read from the wheel (ATTENTION_BACKEND_CHOICES: server_args.py up to 0.5.19,
arg_groups/choices.py from 0.5.20) and the KV dtypes from its `--kv-cache-dtype` choices,
not typed here. The full product is sampled deterministically: for each (GPU, model,
selection) a fixed-seed sample of the KV x page x speculation combinations (hybrid
selections add `--speculative-attention-mode decode` variants), and the full product for
launches without a backend flag, where SGLang's default decides. Sample sizes shrink as a
release lists more backends, so every release's grid stays near 17,000 launches.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Iterator

from conformance.harness import GPU_PROFILES, MODELS, Launch
from conformance.stubs import constant_of
from conformance.wheel import source_root

PAGE_SIZES = (None, 1, 16, 64, 128)


def _eagle(steps: int, topk: int, draft_tokens: int) -> tuple[str, ...]:
    return (
        *("--speculative-algorithm", "EAGLE", "--speculative-num-steps", str(steps)),
        *("--speculative-eagle-topk", str(topk)),
        *("--speculative-num-draft-tokens", str(draft_tokens)),
    )


SPECULATION: dict[str, tuple[str, ...]] = {
    "none": (),
    "eagle-topk1": _eagle(3, 1, 4),
    "eagle-topk4": _eagle(3, 4, 8),
    "eagle-auto": ("--speculative-algorithm", "EAGLE"),  # SGLang picks steps/topk/drafts
    # topk without steps: 0.5.7 asserts that topk and drafts are unset when it auto-picks.
    "eagle-topk4-only": ("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"),
    "nextn": ("--speculative-algorithm", "NEXTN"),  # an alias SGLang rewrites to EAGLE
}
# Prefill/decode pairs beyond the fa4 ones, (prefill, decode).
PAIRS = (
    ("flashinfer", "triton"), ("triton", "flashinfer"), ("fa3", "flashinfer"),
    ("flashinfer", "fa3"), ("fa3", "triton"), ("triton", "fa3"), ("fa3", "fa3"),
    ("flashinfer", "trtllm_mha"), ("trtllm_mha", "flashinfer"), ("triton", "trtllm_mha"),
    ("trtllm_mla", "flashinfer"), ("flashinfer", "trtllm_mla"), ("flashmla", "trtllm_mla"),
    ("flashmla", "flashinfer"), ("flashinfer", "flashmla"), ("cutlass_mla", "flashinfer"),
    ("flashinfer", "cutlass_mla"), ("aiter", "triton"), ("triton", "triton"),
)  # fmt: skip
# --attention-backend together with per-phase flags.
MIXED = (
    ("--attention-backend", "fa3", "--decode-attention-backend", "flashinfer"),
    ("--attention-backend", "triton", "--prefill-attention-backend", "fa4"),
    ("--attention-backend", "flashinfer", "--prefill-attention-backend", "fa3",
     "--decode-attention-backend", "fa3"),
    ("--attention-backend", "trtllm_mla", "--prefill-attention-backend", "flashinfer"),
    ("--attention-backend", "fa3", "--prefill-attention-backend", "flashinfer"),
)  # fmt: skip
SAMPLES_PER_SELECTION = 8
FA4_SAMPLES = 14
BASE_BACKENDS = 15  # the sample sizes above are for this many backends; more shrink them


@functools.cache  # the grid asks once per GPU and model, and the file is SGLang's largest
def backends(version: str) -> tuple[str, ...]:
    """SGLang `version`'s --attention-backend choices, read from its source."""
    root = source_root(version)
    for path in ("sglang/srt/arg_groups/choices.py", "sglang/srt/server_args.py"):
        try:
            return tuple(constant_of(root / path, "ATTENTION_BACKEND_CHOICES"))  # type: ignore[arg-type]
        except (LookupError, FileNotFoundError):
            continue
    raise LookupError(f"sglang {version} defines no ATTENTION_BACKEND_CHOICES")


@functools.cache
def kv_dtypes(version: str) -> tuple[str, ...]:
    """SGLang `version`'s --kv-cache-dtype choices, as its own argument parser lists them."""
    from conformance.harness import open_runtime

    with open_runtime(version, "CPU-AMX") as runtime:
        return runtime.choices("--kv-cache-dtype")


def selections(version: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(kind, flags) for every backend selection of the grid."""
    names = backends(version)
    yield "none", ()
    for name in names:
        yield "attention", ("--attention-backend", name)
    for name in names:
        yield (
            "fa4-prefill",
            ("--prefill-attention-backend", "fa4", "--decode-attention-backend", name),
        )
    for prefill, decode in PAIRS:
        yield "pair", ("--prefill-attention-backend", prefill, "--decode-attention-backend", decode)
    for name in names:
        yield "prefill-only", ("--prefill-attention-backend", name)
    for name in names:
        yield "decode-only", ("--decode-attention-backend", name)
    for flags in MIXED:
        yield "mixed", flags


def _phases(prefill: str, decode: str) -> tuple[str, ...]:
    return ("--prefill-attention-backend", prefill, "--decode-attention-backend", decode)


def _tail(kv: str, page: int | None, speculation: str) -> tuple[str, ...]:
    flags: tuple[str, ...] = () if kv == "auto" else ("--kv-cache-dtype", kv)
    if page is not None:
        flags += ("--page-size", str(page))
    speculation, _, mode = speculation.partition("+")
    if mode:  # which phase's backend runs draft/verify in a hybrid
        flags += ("--speculative-attention-mode", "decode")
    return flags + SPECULATION[speculation]


def grid(version: str) -> list[Launch]:
    """The whole grid, in a fixed order."""
    combos = list(itertools.product(kv_dtypes(version), PAGE_SIZES, SPECULATION))
    # Two phases on different backends: also ask for draft/verify on the decode backend.
    hybrid_combos = combos + [
        (kv, page, speculation + "+mode-decode")
        for kv, page, speculation in combos
        if speculation != "none"
    ]
    scale = min(1.0, BASE_BACKENDS / len(backends(version)))
    samples = max(4, round(SAMPLES_PER_SELECTION * scale))
    fa4_samples = max(6, round(FA4_SAMPLES * scale))
    launches: list[Launch] = []
    for gpu, model in itertools.product(GPU_PROFILES, MODELS):
        for kind, flags in selections(version):
            pool = hybrid_combos if kind in ("fa4-prefill", "pair") else combos
            if kind == "none":
                chosen = pool
            else:
                # No release in the seed: releases with the same choices draw the same samples.
                seed = f"{gpu}|{model}|{' '.join(flags)}"
                size = fa4_samples if kind == "fa4-prefill" else samples
                chosen = random.Random(seed).sample(pool, size)
            for kv, page, speculation in chosen:
                launches.append(Launch(gpu, model, flags + _tail(kv, page, speculation)))
    return launches
