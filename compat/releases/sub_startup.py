"""Each release's start-up checks of the sub-backend flags, with the line that raises.

Read from each release's wheel: `ServerArgs._handle_linear_attn_backend`
(`sglang/srt/server_args.py`; from 0.5.19 `handle_linear_attn_backend` in
`sglang/srt/arg_groups/attention_hook.py`) for the linear-attention kernels, which runs for
every model; and the DSA backends' defaults for a DeepSeek sparse attention model
(`_check_tilelang_dsa_fp8_kv`, from 0.5.20 `_check_dsa_backend_constraints`, in
`sglang/srt/arg_groups/overrides.py`). What each check refuses is
`compat.engine.sub_backends.SubRefusal`; `tests/engine/test_sub_build.py` reads every line
back from every wheel. A release absent from `LINES` has its predecessor's (none before
0.5.10).

`EXTRA_BUFFER` is where, from 0.5.14, the Mamba cache's extra_buffer strategy is supported
only with `--linear-attn-backend triton` (`supports_mamba_cache_extra_buffer`).
"""

from __future__ import annotations

from collections.abc import Mapping

from compat.engine.sub_backends import SubRefusal, SubRefusalAt

SERVER_ARGS = "sglang/srt/server_args.py"
ATTENTION_HOOK = "sglang/srt/arg_groups/attention_hook.py"
OVERRIDES = "sglang/srt/arg_groups/overrides.py"
_SA_LINEAR = "ServerArgs._handle_linear_attn_backend"
_HOOK_LINEAR = "handle_linear_attn_backend"
_TILELANG_CHECK = "_check_tilelang_dsa_fp8_kv"
_DSA_CHECK = "_check_dsa_backend_constraints"
LDF, LPF = SubRefusal.LINEAR_DECODE_FLASHINFER, SubRefusal.LINEAR_PREFILL_FLASHINFER
LDK, DTR = SubRefusal.LINEAR_DECODE_FLASHKDA, SubRefusal.DSA_TRITON_ROCM_ONLY
DTF, DTM = SubRefusal.DSA_TILELANG_FP8, SubRefusal.DSA_TILELANG_FP8_MIXED
LDN = SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER
_SA_MAMBA = "ServerArgs._handle_mamba_radix_cache"

# release -> (check, file, function, line of its `raise`), in SGLang's order of reading.
LINES: Mapping[str, tuple[tuple[SubRefusal, str, str, int], ...]] = {
    "0.5.10": ((LDN, SERVER_ARGS, _SA_MAMBA, 2158), (LDF, SERVER_ARGS, _SA_LINEAR, 2594)),
    "0.5.11": ((LDF, SERVER_ARGS, _SA_LINEAR, 2884),),
    "0.5.12": ((LDF, SERVER_ARGS, _SA_LINEAR, 3018),),
    "0.5.13": ((LDF, SERVER_ARGS, _SA_LINEAR, 3244), (LPF, SERVER_ARGS, _SA_LINEAR, 3261)),
    "0.5.14": ((LDF, SERVER_ARGS, _SA_LINEAR, 4910), (LPF, SERVER_ARGS, _SA_LINEAR, 4927)),
    "0.5.15": ((LDF, SERVER_ARGS, _SA_LINEAR, 4704), (LPF, SERVER_ARGS, _SA_LINEAR, 4721), (LDK, SERVER_ARGS, _SA_LINEAR, 4686)),
    "0.5.16": ((LDF, SERVER_ARGS, _SA_LINEAR, 5291), (LPF, SERVER_ARGS, _SA_LINEAR, 5308), (LDK, SERVER_ARGS, _SA_LINEAR, 5273)),
    "0.5.17": ((LDF, SERVER_ARGS, _SA_LINEAR, 6077), (LPF, SERVER_ARGS, _SA_LINEAR, 6109), (LDK, SERVER_ARGS, _SA_LINEAR, 6059), (DTF, OVERRIDES, _TILELANG_CHECK, 1568)),
    "0.5.18": ((LDF, SERVER_ARGS, _SA_LINEAR, 6293), (LPF, SERVER_ARGS, _SA_LINEAR, 6325), (LDK, SERVER_ARGS, _SA_LINEAR, 6275), (DTF, OVERRIDES, _TILELANG_CHECK, 1656)),
    "0.5.19": ((LDF, ATTENTION_HOOK, _HOOK_LINEAR, 291), (LPF, ATTENTION_HOOK, _HOOK_LINEAR, 323), (LDK, ATTENTION_HOOK, _HOOK_LINEAR, 269), (DTF, OVERRIDES, _TILELANG_CHECK, 660)),
    "0.5.20": ((LDF, ATTENTION_HOOK, _HOOK_LINEAR, 272), (LPF, ATTENTION_HOOK, _HOOK_LINEAR, 304), (LDK, ATTENTION_HOOK, _HOOK_LINEAR, 250), (DTR, OVERRIDES, _DSA_CHECK, 633), (DTF, OVERRIDES, _DSA_CHECK, 641)),
    "0.5.21": ((LDF, ATTENTION_HOOK, _HOOK_LINEAR, 269), (LPF, ATTENTION_HOOK, _HOOK_LINEAR, 301), (LDK, ATTENTION_HOOK, _HOOK_LINEAR, 247), (DTR, OVERRIDES, _DSA_CHECK, 536), (DTF, OVERRIDES, _DSA_CHECK, 544)),
    "0.5.22": ((LDF, ATTENTION_HOOK, _HOOK_LINEAR, 340), (LPF, ATTENTION_HOOK, _HOOK_LINEAR, 389), (LDK, ATTENTION_HOOK, _HOOK_LINEAR, 318), (DTR, OVERRIDES, _DSA_CHECK, 539), (DTM, OVERRIDES, _DSA_CHECK, 548)),
    "0.5.23": ((LDF, ATTENTION_HOOK, _HOOK_LINEAR, 341), (LPF, ATTENTION_HOOK, _HOOK_LINEAR, 390), (LDK, ATTENTION_HOOK, _HOOK_LINEAR, 319), (DTR, OVERRIDES, _DSA_CHECK, 563), (DTM, OVERRIDES, _DSA_CHECK, 572)),
}  # fmt: skip

EXTRA_BUFFER: Mapping[str, tuple[str, str, int]] = {
    "0.5.14": (SERVER_ARGS, "ServerArgs._support_mamba_cache_extra_buffer", 4351), "0.5.15": (OVERRIDES, "supports_mamba_cache_extra_buffer", 1002), "0.5.16": (OVERRIDES, "supports_mamba_cache_extra_buffer", 1154), "0.5.17": (OVERRIDES, "supports_mamba_cache_extra_buffer", 1457), "0.5.18": (OVERRIDES, "supports_mamba_cache_extra_buffer", 1545), "0.5.19": (OVERRIDES, "supports_mamba_cache_extra_buffer", 549), "0.5.20": (OVERRIDES, "supports_mamba_cache_extra_buffer", 509), "0.5.21": (OVERRIDES, "supports_mamba_cache_extra_buffer", 423), "0.5.22": (OVERRIDES, "supports_mamba_cache_extra_buffer", 425), "0.5.23": (OVERRIDES, "supports_mamba_cache_extra_buffer", 449)
}  # fmt: skip
"""release -> (file, function, line) of `return ... linear_attn_backend == "triton"`."""


def sub_refusals(release: str, before: tuple[SubRefusalAt, ...]) -> tuple[SubRefusalAt, ...]:
    """The start-up checks of the sub-backend flags in `release`: its row of `LINES`, else
    those of the release before (`before`)."""
    rows = LINES.get(release)
    return before if rows is None else tuple(SubRefusalAt(*row) for row in rows)
