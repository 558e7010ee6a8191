"""The start-up steps before SGLang's backend check: names, platforms, models, NVFP4.

Each runs before `_handle_attention_backend_compatibility` (`compat.engine.startup.backend`), so
what it writes (a rewritten name, a platform's or a model's backend, a page size, a KV
dtype) is what the default decision and every later check read.
"""

from __future__ import annotations

from compat.engine.events import (
    NOTE,
    AliasKvDtype,
    DeprecatedBackend,
    Nvfp4Backends,
    Nvfp4Decode,
    Nvfp4NativeGpu,
    Nvfp4Prefill,
)
from compat.engine.launch import Launch
from compat.engine.rules import BackendField, ReleaseRules
from compat.engine.startup.state import ServerArgsFields, StartupLog

_BACKEND_FLAGS = (BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE)


def handle_deprecated_args(rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """Deprecated backend names, rewritten first (`_handle_deprecated_args`)."""
    for name, new in rules.backend_aliases.items():
        for field in _BACKEND_FLAGS:
            if f.get(field) != name:
                continue
            target = new
            if field is BackendField.PREFILL and new in rules.decode_only:
                target = rules.decode_only[new]
            log.add(
                DeprecatedBackend(
                    flags=(field.flag,),
                    value=name,
                    allowed=(target,),
                    backend=name,
                    flag=field.flag,
                    name=name,
                    target=target,
                )
            )
            f.set(field, target)
            # The dtype goes with the successor backend, not the prefill stand-in.
            forced = rules.alias_kv_dtypes.get(name) if target == new else None
            if forced is not None and f.kv_dtype != forced:
                log.add(
                    AliasKvDtype(
                        flags=("--kv-cache-dtype",),
                        value=f.kv_dtype,
                        allowed=(forced,),
                        backend=name,
                        name=name,
                        forced=forced,
                    )
                )
                f.kv_dtype = forced
    # From 0.5.12 the same loop renames the draft's flag (`speculative_draft_attention_backend`
    # is in its list of fields); the draft's build reads the successor.
    if f.draft_backend is not None:
        f.draft_backend = rules.backend_aliases.get(f.draft_backend, f.draft_backend)


def handle_platform_backends(parsed: Launch, f: ServerArgsFields) -> str | None:
    """The device's own defaults (`_handle_hpu_backends`, `_handle_cpu_backends`, NPU
    `set_default_server_args`): they read `--device`, else the machine's device.

    Returns the backend the device chose, when no backend flag was set.
    """
    device = parsed.on_device
    if device == "hpu":
        f.attention = "torch_native"
        return f.attention
    if device == "cpu" and f.attention is None:
        f.attention = "intel_amx"
        return f.attention
    if device == "npu":
        unset = f.backend_unset
        f.attention = f.prefill = f.decode = "ascend"
        if f.page_size is None:
            f.page_size = 128
        return f.attention if unset else None
    return None


def handle_nvfp4_prefill_backends(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """NVFP4 picks its own backends (`handle_nvfp4_prefill_kv_dequant_dtype`).

    The prefill one by dequant dtype (native NVFP4 on SM100, else FP8), trtllm_mha to decode.
    """
    by_dtype = rules.nvfp4_prefill_backends
    if by_dtype is None or f.kv_dtype != "nvfp4":
        return
    wanted = {backend: dtype for dtype, backend in by_dtype.items()}
    given = f.prefill or f.attention
    if given is not None and given not in wanted:
        log.add(
            Nvfp4Prefill(
                flags=("--attention-backend", "--prefill-attention-backend", "--kv-cache-dtype"),
                value=given,
                allowed=tuple(sorted(wanted)),
                backend=given,
                backends=tuple(sorted(wanted)),
            )
        )
        return
    sm100 = parsed.capability is not None and parsed.capability.major == 10
    if given is None:
        given = by_dtype["nvfp4"] if sm100 else by_dtype["fp8_e4m3"]
    decode = by_dtype["nvfp4"]
    if f.decode is not None and f.decode != decode:
        log.add(
            Nvfp4Decode(
                flags=("--decode-attention-backend", "--kv-cache-dtype"),
                value=f.decode,
                allowed=(decode,),
                backend=f.decode,
                decode=decode,
            )
        )
        return
    if wanted[given] == "nvfp4" and not sm100:
        log.add(
            Nvfp4NativeGpu(
                flags=("--kv-cache-dtype", "--compute-capability"), value=parsed.capability
            )
        )
    log.add(
        Nvfp4Backends(
            severity=NOTE,
            flags=("--kv-cache-dtype",),
            value=f"{given}+{decode}",
            prefill=given,
            decode=decode,
        )
    )
    f.prefill, f.decode = given, decode
