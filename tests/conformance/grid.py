"""The launch grid the conformance suite runs through SGLang's start-up code.

Dimensions: every GPU profile x every model x a backend selection x KV dtype x page size x
speculative setting. The backend list is read from the wheel (ATTENTION_BACKEND_CHOICES),
not typed here. The full product (288,000) is sampled deterministically: for each
(GPU, model, selection) a fixed-seed sample of the KV x page x speculation combinations
(hybrid selections add `--speculative-attention-mode decode` variants), and the full
product for launches without a backend flag, where SGLang's default decides.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from conformance.harness import GPU_PROFILES, MODELS, Launch
from conformance.stubs import constant_of
from conformance.wheel import source_root

KV_DTYPES = ("auto", "fp8_e4m3", "fp8_e5m2", "bf16", "bfloat16", "fp4_e2m1")
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


def backends(version: str) -> tuple[str, ...]:
    """SGLang `version`'s --attention-backend choices, read from its server_args.py."""
    path = source_root(version) / "sglang/srt/server_args.py"
    return tuple(constant_of(path, "ATTENTION_BACKEND_CHOICES"))  # type: ignore[arg-type]


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
    combos = list(itertools.product(KV_DTYPES, PAGE_SIZES, SPECULATION))
    # Two phases on different backends: also ask for draft/verify on the decode backend.
    hybrid_combos = combos + [
        (kv, page, speculation + "+mode-decode")
        for kv, page, speculation in combos
        if speculation != "none"
    ]
    launches: list[Launch] = []
    for gpu, model in itertools.product(GPU_PROFILES, MODELS):
        for kind, flags in selections(version):
            pool = hybrid_combos if kind in ("fa4-prefill", "pair") else combos
            if kind == "none":
                chosen = pool
            else:
                seed = f"{version}|{gpu}|{model}|{' '.join(flags)}"
                size = FA4_SAMPLES if kind == "fa4-prefill" else SAMPLES_PER_SELECTION
                chosen = random.Random(seed).sample(pool, size)
            for kv, page, speculation in chosen:
                launches.append(Launch(gpu, model, flags + _tail(kv, page, speculation)))
    return launches
