"""SGLang's start-up checks of the sub-backend flags, replayed.

`_handle_linear_attn_backend` (0.5.10+; `handle_linear_attn_backend` from 0.5.19) refuses
linear-attention kernels a machine cannot run, for every model; the DSA backends' defaults
of a DeepSeek sparse attention model (0.5.17+) refuse DSA kernels the machine or the KV
cache cannot run. Each release's checks are `ReleaseRules.sub_refusals`, with their lines.
They run after the KV dtype is resolved: the DSA checks read it.
"""

from __future__ import annotations

from compat.engine.events import StartupEvent
from compat.engine.launch import Launch
from compat.engine.rules import ReleaseRules
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.engine.sub_backends import SubRefusal
from compat.vocab.terms import ModelFeature, Platform

# The flags each check reads, by the ServerArgs field of 0.5.13+ (the guard spells them
# as the release does).
_FIELDS = {
    SubRefusal.LINEAR_DECODE_FLASHINFER: ("linear_attn_decode_backend", "linear_attn_backend"),
    SubRefusal.LINEAR_PREFILL_FLASHINFER: ("linear_attn_prefill_backend", "linear_attn_backend"),
    SubRefusal.LINEAR_DECODE_FLASHKDA: ("linear_attn_decode_backend",),
    SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER: ("linear_attn_decode_backend",),
    SubRefusal.DSA_TRITON_ROCM_ONLY: ("dsa_prefill_backend", "dsa_decode_backend"),
    SubRefusal.DSA_TILELANG_FP8: ("dsa_prefill_backend", "dsa_decode_backend"),
    SubRefusal.DSA_TILELANG_FP8_MIXED: ("dsa_prefill_backend", "dsa_decode_backend"),
}


class SubBackendRefused(StartupEvent, frozen=True, kw_only=True):
    """A sub-backend flag's value that a start-up check refuses."""

    check: SubRefusal
    fields: tuple[str, ...]
    """The ServerArgs fields of the flags set, that the check read."""
    where: str
    function: str
    kv_dtype: str
    cuda_assumed: tuple[int, int] | None = None
    """The CUDA the check read when the launch did not give one: the release's image's."""


def handle_sub_backends(
    launch: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """The release's checks of the sub-backend flags, over the KV dtype start-up resolved."""
    subs = launch.sub_backends
    for at in rules.sub_refusals:
        if not refuses(at.check, launch, f.kv_dtype):
            continue
        if at.check is SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER and not f.mamba_no_buffer:
            continue  # checked in the Mamba cache handler, for a hybrid model on no_buffer
        fields = tuple(name for name in _FIELDS[at.check] if getattr(subs, name) is not None)
        log.add(
            SubBackendRefused(
                rule=at.check.value,
                flags=tuple("--" + name.replace("_", "-") for name in fields),
                value=getattr(subs, fields[0]),
                check=at.check,
                fields=fields,
                where=at.where,
                function=at.function,
                kv_dtype=f.kv_dtype,
                cuda_assumed=launch.image_cuda
                if at.check is SubRefusal.LINEAR_PREFILL_FLASHINFER and launch.cuda_version is None
                else None,
            )
        )


def refuses(check: SubRefusal, launch: Launch, kv_dtype: str) -> bool:
    """Whether `check` refuses the launch, given the KV dtype start-up resolved."""
    subs = launch.sub_backends
    if check.value.startswith("dsa-"):
        return _dsa_refuses(check, launch, kv_dtype)
    if check is SubRefusal.LINEAR_DECODE_FLASHKDA:
        return subs.linear_attn_decode_backend == "flashkda"
    if check is SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER:
        return subs.linear_attn_decode_backend == "flashinfer"
    if check is SubRefusal.LINEAR_DECODE_FLASHINFER:
        kernel = subs.linear_attn_decode_backend or subs.linear_attn_backend
    else:
        kernel = subs.linear_attn_prefill_backend or subs.linear_attn_backend
    capability = launch.capability
    sm100 = launch.platform is Platform.CUDA and capability is not None and capability.major >= 10
    if kernel != "flashinfer" or not sm100:
        return False
    if check is SubRefusal.LINEAR_DECODE_FLASHINFER:
        # `self.mamba_ssm_dtype != "bfloat16"`: unset is None here, read from the model
        # config only later.
        return launch.mamba_ssm_dtype != "bfloat16"
    # `int(torch.version.cuda.split(".")[0]) < 13`.
    return launch.cuda[0] < 13


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
