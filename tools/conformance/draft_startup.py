"""Run a release's own start-up with the draft's flag: what it makes of
`--speculative-draft-attention-backend`.

SGLang's parser takes the flag as free text; start-up renames a deprecated name (0.5.12+)
and, from 0.5.21, on SM100's native NVFP4 cache on trtllm_mha, sets an unset flag to
trtllm_mha and refuses another. Each launch of `launches` runs through the release's own
argument parser and start-up (`ServerArgs` post-init, `resolve_once()` from 0.5.19) over the
fake torch; the outcome is whether it refused, the draft's backend it resolved, and whether
that name is one of the release's `--attention-backend` choices.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from conformance.harness import open_runtime

DRAFT_FLAG = "--speculative-draft-attention-backend"
GPUS = ("H200", "B200")
MODELS = ("Llama-3.1-8B", "DeepSeek-V3")
SPEC = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")  # fmt: skip
# The target's flags: SGLang's choice, a backend of each architecture, the native NVFP4
# cache on trtllm_mha (refused before 0.5.21's choices, as invalid input).
TARGETS = (
    (),
    ("--attention-backend", "triton"),
    ("--attention-backend", "trtllm_mha"),
    ("--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"),
)
DRAFTS = (None, "triton", "flashinfer", "trtllm_mha", "fa3", "compressed")


def launches() -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(gpu, model, argv) of every launch of the draft's start-up grid."""
    for gpu in GPUS:
        for model in MODELS:
            for target in TARGETS:
                for draft in DRAFTS:
                    flag = () if draft is None else (DRAFT_FLAG, draft)
                    yield gpu, model, (*SPEC, *target, *flag)


def draft_rows(version: str) -> list[dict[str, Any]]:
    """SGLang `version`'s start-up on every launch: refused (and why), else the draft's
    backend it resolved (None: it inherits the target's)."""
    rows = []
    for gpu in GPUS:
        with open_runtime(version, gpu) as runtime:
            inner = runtime._runtime
            known = runtime.choices("--attention-backend")
            for at, model, argv in launches():
                if at != gpu:
                    continue
                server_args, error, _ = inner.start(model, list(argv))
                draft = argv[-1] if DRAFT_FLAG in argv else None
                row: dict[str, Any] = {"version": version, "gpu": gpu, "model": model,
                                       "argv": list(argv), "error": error,
                                       "known": draft is None or draft in known}  # fmt: skip
                if server_args is not None:
                    row["draft"] = _resolved_draft(inner.resolves_once, server_args)
                rows.append(row)
    return rows


def _resolved_draft(resolves_once: bool, server_args: Any) -> str | None:
    """The draft's backend start-up left: the field up to 0.5.18, then what `resolve_once()`
    decided for it (`resolution_result`)."""
    name = "speculative_draft_attention_backend"
    if not resolves_once:
        return getattr(server_args, name)  # type: ignore[no-any-return]
    overrides = importlib.import_module("sglang.srt.arg_groups.overrides")
    return overrides.resolution_result(server_args, name)  # type: ignore[no-any-return]
