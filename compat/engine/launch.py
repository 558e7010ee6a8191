"""What SGLang's start-up code reads of a launch: the flags as written, the model, the machine.

The replay (`compat.engine.startup`) takes a `Launch` and nothing else, so the engine needs
no part of the layers that read a launch from a command line or a config; those build a
`Launch` (their own validated form extends it).
"""

from __future__ import annotations

import msgspec

from compat.engine.sub_backends import SubBackends
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch, ModelFeature, Phase, Platform, SpeculativeAttentionMode

# What SGLang's device detection answers on each machine (ROCm GPUs are torch.cuda devices).
_MACHINE_DEVICES = {
    Platform.CUDA: "cuda",
    Platform.ROCM: "cuda",
    Platform.NPU: "npu",
    Platform.XPU: "xpu",
    Platform.CPU: "cpu",
}


class ImageCuda(msgspec.Struct, frozen=True):
    """The CUDA of a release's official image (the plain `lmsysorg/sglang:vX.Y.Z` tag, x86):
    what a launch that does not give its own is judged with (`--cuda-version` overrides)."""

    version: tuple[int, int]
    evidence: Evidence

    @property
    def label(self) -> str:
        return "{}.{}".format(*self.version)


class Launch(msgspec.Struct, frozen=True):
    """One launch as SGLang's start-up code sees it, before any of its steps ran."""

    arch: Arch
    """The model's attention architecture (SGLang's `ModelConfig.attention_arch`)."""
    platform: Platform
    capability: ComputeCapability | None
    cuda_version: tuple[int, int] | None
    """The CUDA of torch's build, as the launch gives it (None: not given)."""
    image_cuda: tuple[int, int]
    """The CUDA of the release's official image: judged with when `cuda_version` is None."""
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
    """The model's KV heads (`num_key_value_heads`), before tensor parallelism divides them."""
    q_heads: int | None
    """The model's attention heads (`num_attention_heads`), before tensor parallelism."""
    qk_nope_head_dim: int | None
    qk_rope_head_dim: int | None
    """An MLA model's head dims (None: not known)."""
    features: frozenset[ModelFeature]
    device: str | None
    """`--device`; None: SGLang detects the machine's own (`platform`)."""
    tp_size: int
    dp_size: int
    dp_attention: bool
    """`--enable-dp-attention`."""
    deterministic: bool
    """`--enable-deterministic-inference`."""
    quantization: str | None
    """`--quantization` as given."""
    disaggregation: str
    """`--disaggregation-mode`: null, prefill or decode."""
    trust_remote_code: bool
    round_robin_balance: bool
    cuda_graph: bool
    """CUDA graphs are captured after the weights load (no `--disable-cuda-graph`)."""
    hybrid_swa_memory: bool
    """A hybrid sliding-window model keeps its window (no `--disable-hybrid-swa-memory`)."""
    hierarchical_cache: bool
    """`--enable-hierarchical-cache` (it turns the hybrid sliding-window pool off for some
    models)."""
    """`--prefill-round-robin-balance`."""
    model_type: str | None
    """The config's `model_type` (None: not known, assumed readable)."""
    checkpoint_quantization: str | None
    """The checkpoint's `quantization_config.quant_method`."""
    remote_code: bool
    """The config names its own code (`auto_map`)."""
    mamba_strategy: str
    mamba_ssm_dtype: str | None
    """`--mamba-ssm-dtype` as given (None: unset)."""
    """`--mamba-scheduler-strategy` (`--mamba-radix-cache-strategy` from 0.5.14) as given:
    `auto` unless the launch names the Mamba cache strategy of a hybrid model."""
    spec_mode: SpeculativeAttentionMode
    """`--speculative-attention-mode`: the draft-extend backend is the target's prefill
    backend, or its decode one (read after start-up, by the draft's build)."""
    draft_backend: str | None
    """`--speculative-draft-attention-backend` (None: the draft inherits the target's)."""
    sub_backends: SubBackends
    """The sub-backend flags (`--dsa-*`, `--linear-attn-*`, `--mm-attention-backend`)."""
    draft_architecture: str | None
    """The draft model's `architectures[0]` as SGLang builds it (None: not known; with no
    draft attention given either, the target's MTP draft)."""
    draft_arch: Arch | None
    """The draft model's attention architecture (its own `ModelConfig.attention_arch`, read
    from `--speculative-draft-model-path`); None: the target's (an MTP/NEXTN draft)."""
    environment: tuple[tuple[str, str], ...]
    """The variables start-up reads that the launch sets, (name, value) sorted by name
    (`compat.engine.environment`); absent ones are unset, as the official images ship them."""
    packages: tuple[tuple[str, str], ...]
    """The kernel packages' versions start-up reads that the launch gives, (name, version)
    sorted by name (`triton`: DSA's page size on ROCm); absent ones are the release's
    official image's, or unknown (`compat.engine.preshuffle`)."""

    def chose(self, phase: Phase) -> str:
        """The flag that chose `phase`'s backend: the phase's own flag when the launch set
        it, else `--attention-backend`."""
        own = self.decode if phase is Phase.DECODE else self.prefill
        return phase.flag if own is not None else "--attention-backend"

    @property
    def cuda(self) -> tuple[int, int]:
        """The CUDA of torch's build that SGLang reads: the given one, else the image's."""
        return self.cuda_version or self.image_cuda

    @property
    def kv_heads_per_rank(self) -> int | None:
        """`ModelConfig.get_num_kv_heads(tp_size)`: at least one head per rank."""
        if self.kv_heads is None:
            return None
        return max(1, self.kv_heads // self.tp_size)

    @property
    def on_device(self) -> str:
        """The device SGLang runs on: `--device`, else the machine's (CUDA serves ROCm too)."""
        if self.device is not None:
            return self.device
        return _MACHINE_DEVICES[self.platform]
