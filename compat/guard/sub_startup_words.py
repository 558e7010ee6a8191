"""The guard's words for the start-up checks of the sub-backend flags (`--linear-attn-*`,
`--dsa-*`): one sentence per check (`compat.engine.sub_backends.SubRefusal`), said after the
flags and before where the release's code checks it."""

from __future__ import annotations

from compat.engine.startup.sub_backends import SubBackendRefused
from compat.engine.sub_backends import SubRefusal

_SUB_SAID = {
    SubRefusal.LINEAR_DECODE_FLASHINFER: "FlashInfer's linear-attention decode kernel on SM100+ "
    "needs --mamba-ssm-dtype bfloat16",
    SubRefusal.LINEAR_PREFILL_FLASHINFER: "FlashInfer's linear-attention prefill kernel on "
    "SM100+ needs CUDA 13+",
    SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER: "FlashInfer's linear-attention decode "
    "kernel does not run with the Mamba cache's no_buffer strategy (--mamba-scheduler-strategy "
    "extra_buffer does)",
    SubRefusal.LINEAR_DECODE_FLASHKDA: "FlashKDA is a prefill-only kernel; use "
    "--linear-attn-prefill-backend flashkda (decode stays on triton)",
    SubRefusal.DSA_TRITON_ROCM_ONLY: "the triton DSA kernels run on ROCm only (on CUDA: "
    "flashmla_kv on Hopper, trtllm on Blackwell)",
    SubRefusal.DSA_TILELANG_FP8: "the tilelang DSA kernels read no FP8 KV cache on CUDA; use "
    "--kv-cache-dtype bfloat16 or another DSA kernel",
    SubRefusal.DSA_TILELANG_FP8_MIXED: "with an FP8 KV cache on CUDA, tilelang for one DSA "
    "phase needs tilelang for both",
}


def sub_refusal_said(event: SubBackendRefused) -> str:
    """What a sub-backend flag's start-up check refused, and the way out."""
    flags = " ".join(
        f"{flag} {event.value}" if i == 0 else flag for i, flag in enumerate(event.flags)
    )
    cuda = event.cuda_assumed
    assumed = (
        ""
        if cuda is None
        else f"; CUDA not given: taken as {cuda[0]}.{cuda[1]}, the CUDA of this release's "
        "official image (--cuda-version)"
    )
    return (
        f"{flags}: {_SUB_SAID[event.check]} ({event.where}, {event.function}){assumed}; "
        f"leave {event.flags[0]} unset to let SGLang choose"
    )
