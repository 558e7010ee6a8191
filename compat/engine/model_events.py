"""What SGLang's start-up code did reading the model: its loader, its quantization check, the
model-specific branches, deterministic inference, parallelism and the Mamba cache.

The other events (names, the backend check, the KV cache, speculation) are in
`compat.engine.events`; the guard words both (`compat.guard.startup_words`).
"""

from __future__ import annotations

from compat.engine.events import NOTE, WARN, StartupEvent
from compat.vocab.terms import Severity

# -- the model -------------------------------------------------------------------------------


class ModelTypeUnknown(StartupEvent, frozen=True, kw_only=True):
    """The config's model type is one the release's transformers (and SGLang) cannot read."""

    rule: str = "model-type"
    model_type: str
    source: str
    """Where the loader is, with the transformers the release pins."""


class RemoteCodeUntrusted(StartupEvent, frozen=True, kw_only=True):
    """The config names its own code, which loads only with `--trust-remote-code`."""

    rule: str = "remote-code"
    model_type: str


class ModelReloaded(StartupEvent, frozen=True, kw_only=True):
    """SGLang's loader reads a config transformers refuses as another architecture."""

    rule: str = "model-reloaded"
    severity: Severity = WARN
    model_type: str
    architecture: str
    source: str


class QuantizationMismatch(StartupEvent, frozen=True, kw_only=True):
    """`--quantization` differs from the checkpoint's method, and may not replace it."""

    rule: str = "quantization-mismatch"
    checkpoint: str
    given: str


class QuantizationUnregistered(StartupEvent, frozen=True, kw_only=True):
    """A quantization method the release registers only on other machines."""

    rule: str = "quantization-unregistered"
    method: str
    machines: tuple[str, ...]


class QuantizationOffRocm(StartupEvent, frozen=True, kw_only=True):
    """A quantization method outside ROCm's list, on ROCm."""

    rule: str = "quantization-rocm"
    method: str


class GpuRuntimeMissing(StartupEvent, frozen=True, kw_only=True):
    """A model branch that calls `torch.cuda`, on a machine without a GPU."""

    model: str
    source: str


class ModelBackendList(StartupEvent, frozen=True, kw_only=True):
    """A model branch that runs only the backends of its list."""

    model: str
    backends: tuple[str, ...]
    where: str
    """What the list reads: "the prefill and decode phases" or "--attention-backend"."""
    source: str


class ModelBackendRefused(StartupEvent, frozen=True, kw_only=True):
    """A model branch that refuses one backend."""

    model: str
    source: str


class ModelSpeculation(StartupEvent, frozen=True, kw_only=True):
    """A model branch that runs speculative decoding with one algorithm at topk 1 only (and
    `also` these at any top-k)."""

    model: str
    algorithm: str
    also: tuple[str, ...]
    source: str


class ModelPage(StartupEvent, frozen=True, kw_only=True):
    """A model branch that sets the page size whatever `--page-size` says."""

    severity: Severity = WARN
    model: str
    size: int
    was: int | None
    source: str


class AmxFallback(StartupEvent, frozen=True, kw_only=True):
    """intel_amx on a CPU without AMX: SGLang runs torch_native instead."""

    rule: str = "intel-amx-fallback"
    severity: Severity = WARN


class DeterministicBackends(StartupEvent, frozen=True, kw_only=True):
    """Deterministic inference runs only the backends of its list."""

    rule: str = "deterministic-backends"
    backends: tuple[str, ...]
    model: str | None = None
    """The DeepSeek-type model whose own, shorter list this is (None: the general list)."""
    source: str | None = None
    """Where SGLang checks the general list ("file, function")."""


class DeterministicDefault(StartupEvent, frozen=True, kw_only=True):
    """Deterministic inference picks its own backend."""

    rule: str = "deterministic-default"
    severity: Severity = NOTE
    chosen: str


class DecodeRoundRobin(StartupEvent, frozen=True, kw_only=True):
    """A decode server with DP above 1 needs the prefill side's round-robin balance."""

    rule: str = "decode-round-robin"


class DpAttentionSplit(StartupEvent, frozen=True, kw_only=True):
    """DP attention needs `--tp-size` to be a multiple of `--dp-size`."""

    rule: str = "dp-attention-size"
    tp_size: int
    dp_size: int


class HybridCachePlatform(StartupEvent, frozen=True, kw_only=True):
    """A hybrid linear-attention model whose Mamba cache strategy needs another machine."""

    rule: str = "mamba-cache-platform"
    model: str
    machines: tuple[str, ...]


class HybridCacheStrategy(StartupEvent, frozen=True, kw_only=True):
    """An asked-for Mamba cache strategy the model does not have (extra_buffer), or, from
    0.5.14, no_buffer while the overlap schedule is on."""

    rule: str = "mamba-cache-strategy"
    model: str


class HybridCacheExtraBuffer(StartupEvent, frozen=True, kw_only=True):
    """The extra_buffer Mamba cache tracks its states every `--mamba-track-interval` (256)
    tokens: the page size must divide it, the draft tokens must not exceed it."""

    rule: str = "mamba-cache-interval"
    model: str
    interval: int


class HybridCacheSpeculation(StartupEvent, frozen=True, kw_only=True):
    """Speculative decoding with the radix cache, refused for a hybrid linear-attention model."""

    rule: str = "mamba-cache-speculation"
    model: str


class HybridCachePageOne(StartupEvent, frozen=True, kw_only=True):
    """The no_buffer Mamba cache with the radix cache on runs page size 1 only: SGLang sets
    it (0.5.11-0.5.13, a warning) or refuses another (0.5.14+)."""

    rule: str = "mamba-cache-page"
    model: str


class HybridCacheBackend(StartupEvent, frozen=True, kw_only=True):
    """The no_buffer Mamba cache cannot run this backend (trtllm_mha needs pages)."""

    rule: str = "mamba-cache-backend"
    model: str
