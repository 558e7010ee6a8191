"""The sub-backend flags of a launch: the kernels chosen inside a backend.

DeepSeek sparse attention (`--dsa-prefill-backend`, `--dsa-decode-backend`; `--nsa-*` up to
0.5.12), the linear-attention layers of hybrid models (`--linear-attn-backend` and its
per-phase forms) and the vision encoder (`--mm-attention-backend`) each choose their own
kernels. A launch holds them as given; the names each release accepts are its parser's
(`compat.engine.parser.sub_choices`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from compat.vocab.terms import ModelFeature, Platform, Term


class SubBackends(msgspec.Struct, frozen=True):
    """The sub-backend flags as given (None: unset, SGLang chooses), named as ServerArgs
    names them from 0.5.13."""

    dsa_prefill_backend: str | None = None
    dsa_decode_backend: str | None = None
    linear_attn_backend: str | None = None
    linear_attn_prefill_backend: str | None = None
    linear_attn_decode_backend: str | None = None
    mm_attention_backend: str | None = None


NO_SUB_BACKENDS = SubBackends()
"""A launch that sets none of them."""

if TYPE_CHECKING:
    from compat.engine.launch import Launch


class SubRefusal(Term):
    """A start-up check of the sub-backend flags that refuses to start (each release's are
    `ReleaseRules.sub_refusals`, with the line that raises)."""

    LINEAR_DECODE_FLASHINFER = "linear-decode-flashinfer"
    """FlashInfer's linear-attention decode kernel on SM100+ needs a bfloat16 Mamba SSM
    state (`--mamba-ssm-dtype`, not modelled: taken as unset)."""
    LINEAR_PREFILL_FLASHINFER = "linear-prefill-flashinfer"
    """FlashInfer's linear-attention prefill kernel on SM100+ needs CUDA 13."""
    LINEAR_DECODE_FLASHKDA = "linear-decode-flashkda"
    """FlashKDA has no decode kernel (named for decode itself; inherited, decode runs triton)."""
    LINEAR_DECODE_FLASHINFER_NO_BUFFER = "linear-decode-flashinfer-no-buffer"
    """FlashInfer's linear-attention decode kernel named for decode, with a hybrid model's
    Mamba cache on no_buffer (0.5.10; read off the replay's state, not here)."""
    DSA_TRITON_ROCM_ONLY = "dsa-triton-rocm-only"
    """The triton DSA kernels run on ROCm only."""
    DSA_TILELANG_FP8 = "dsa-tilelang-fp8"
    """On CUDA, the tilelang DSA kernels do not read an FP8 KV cache (0.5.17 to 0.5.21)."""
    DSA_TILELANG_FP8_MIXED = "dsa-tilelang-fp8-mixed"
    """On CUDA with an FP8 KV cache, tilelang for one phase needs it for both (0.5.22+)."""

    @property
    def dsa(self) -> bool:
        """Whether the check is the DSA backends' (a DeepSeek sparse attention model's)."""
        return self.value.startswith("dsa-")

    def refuses(self, launch: Launch, kv_dtype: str) -> bool:
        """Whether the check refuses the launch, given the KV dtype start-up resolved."""
        subs = launch.sub_backends
        if self.dsa:
            return _dsa_refuses(self, launch, kv_dtype)
        if self is SubRefusal.LINEAR_DECODE_FLASHKDA:
            return subs.linear_attn_decode_backend == "flashkda"
        if self is SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER:
            return subs.linear_attn_decode_backend == "flashinfer"
        if self is SubRefusal.LINEAR_DECODE_FLASHINFER:
            kernel = subs.linear_attn_decode_backend or subs.linear_attn_backend
        else:
            kernel = subs.linear_attn_prefill_backend or subs.linear_attn_backend
        capability = launch.capability
        sm100 = (
            launch.platform is Platform.CUDA and capability is not None and capability.major >= 10
        )
        if kernel != "flashinfer" or not sm100:
            return False
        if self is SubRefusal.LINEAR_DECODE_FLASHINFER:
            return True
        # `int(torch.version.cuda.split(".")[0]) < 13`. An unknown CUDA is taken as 12.x: the
        # default PyPI builds of the torch these releases pin are CUDA 12 builds.
        return launch.cuda_version is None or launch.cuda_version[0] < 13


def _dsa_refuses(refusal: SubRefusal, launch: Launch, kv_dtype: str) -> bool:
    """The DSA backends' checks, for a DSA model on CUDA (SGLang's `not hip`; its CPU and
    XPU paths are not modelled). The flags the launch leaves unset get SGLang's defaults,
    never triton nor tilelang on CUDA."""
    if ModelFeature.SPARSE_DSA not in launch.features or launch.platform is not Platform.CUDA:
        return False
    subs = launch.sub_backends
    chosen = {subs.dsa_prefill_backend, subs.dsa_decode_backend}
    if refusal is SubRefusal.DSA_TRITON_ROCM_ONLY:
        return "triton" in chosen
    if kv_dtype != "fp8_e4m3" or "tilelang" not in chosen:
        return False
    return refusal is SubRefusal.DSA_TILELANG_FP8 or chosen != {"tilelang"}


class SubRefusalAt(msgspec.Struct, frozen=True):
    """One release's start-up check of a sub-backend flag, and where it raises."""

    check: SubRefusal
    file: str
    function: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"
