"""The sub-backend flags of a launch: the kernels chosen inside a backend.

DeepSeek sparse attention (`--dsa-prefill-backend`, `--dsa-decode-backend`; `--nsa-*` up to
0.5.12), the linear-attention layers of hybrid models (`--linear-attn-backend` and its
per-phase forms) and the vision encoder (`--mm-attention-backend`) each choose their own
kernels. A launch holds them as given; the names each release accepts are its parser's
(`compat.engine.parser.sub_choices`).
"""

from __future__ import annotations

import msgspec

from compat.vocab.terms import Term


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


class SubRefusalAt(msgspec.Struct, frozen=True):
    """One release's start-up check of a sub-backend flag, and where it raises."""

    check: SubRefusal
    file: str
    function: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"
