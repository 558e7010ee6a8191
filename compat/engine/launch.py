"""What SGLang's start-up code reads of a launch: the flags as written, the model, the machine.

The replay (`compat.engine.startup`) takes a `Launch` and nothing else, so the engine needs
no part of the layers that read a launch from a command line or a config; those build a
`Launch` (their own validated form extends it).
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch, ModelFeature, Platform


@dataclass(frozen=True, slots=True)
class Launch:
    """One launch as SGLang's start-up code sees it, before any of its steps ran."""

    arch: Arch
    """The model's attention architecture (SGLang's `ModelConfig.attention_arch`)."""
    platform: Platform
    capability: ComputeCapability | None
    cuda_version: tuple[int, int] | None
    backend: str | None
    """`--attention-backend` as given (None when unset)."""
    prefill: str | None
    decode: str | None
    kv_spelling: str
    """`--kv-cache-dtype` as written: SGLang's string checks tell `bf16` from `bfloat16`."""
    page_size: int | None
    algorithm: str | None
    """`--speculative-algorithm`, upper-cased as SGLang compares it."""
    topk: int | None
    steps: int | None
    draft_tokens: int | None
    model_architecture: str | None
    """The model's `architectures[0]`; None: the replay assumes the release's usual one."""
    kv_heads: int | None
    """KV heads per tensor-parallel rank."""
    features: frozenset[ModelFeature]
