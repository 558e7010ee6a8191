"""Public API: what SGLang's own start-up code does with one launch, or with many.

    from conformance.harness import run_startup, GPU_PROFILES, MODELS
    outcome = run_startup("0.5.7", "B200", "Llama-3.1-8B", ["--attention-backend", "fa4"])
    outcome.refused, outcome.error  # True, "ValueError: FA4 backend is only supported ..."

Any release 0.5.7 .. 0.5.23 loads (its wheel is fetched and cached). `open_runtime` keeps
one loaded runtime for many launches and hands out SGLang's own records: `server_args()`
the resolved one (after post-init up to 0.5.18, after `resolve_once()` from 0.5.19, when
the fields keep the raw flags and `resolved()` reads what resolution decided) and
`raw_server_args()` the unresolved one; `run_many` spreads a grid over worker processes
(one fresh interpreter per chunk, so the fake torch never meets the rest of the test run).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import types
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.fake_torch import GPU_PROFILES, GpuProfile
from conformance.models import MODELS
from conformance.runtime import SglangRuntime
from conformance.wheel import source_root

__all__ = [
    "GPU_PROFILES",
    "MODELS",
    "GpuProfile",
    "Launch",
    "StartupOutcome",
    "open_runtime",
    "run_many",
    "run_startup",
]


@dataclass(frozen=True)
class Launch:
    """One grid point: a machine, a model and SGLang launch flags."""

    gpu: str
    model: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class StartupOutcome:
    """What SGLang's start-up did. Backend fields are None when it refused."""

    refused: bool
    error: str | None  # "ExceptionType: message" (or "argparse: ...") when refused
    attention_backend: str | None  # the attention_backend field after post-init
    prefill_backend: str | None  # resolved: prefill_attention_backend, else attention_backend
    decode_backend: str | None  # resolved: decode_attention_backend, else attention_backend
    page_size: int | None
    topk: int | None
    num_steps: int | None
    num_draft_tokens: int | None
    kv_cache_dtype: str | None
    # Which phase's backend runs draft/verify in a hybrid; 0.5.21+ and 0.5.23 rewrite it.
    speculative_attention_mode: str | None
    warnings: tuple[str, ...]
    # Where SGLang raised a refusal: "sglang/srt/server_args.py:1234 (function)".
    raised_at: str | None = None
    # Where a started launch's backend and page-size fields were last written, per field
    # (see writes.py): the line that chose what it runs with.
    chosen_at: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "warnings": list(self.warnings)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StartupOutcome:
        return cls(**{**data, "warnings": tuple(data["warnings"])})


# The resolved fields an outcome reports.
_READ = (
    *("attention_backend", "prefill_attention_backend", "decode_attention_backend"),
    *("page_size", "speculative_eagle_topk", "speculative_num_steps"),
    *("speculative_num_draft_tokens", "kv_cache_dtype", "speculative_attention_mode"),
)


class Runtime:
    """A loaded SGLang runtime for one GPU profile (see open_runtime)."""

    def __init__(self, runtime: SglangRuntime) -> None:
        self._runtime = runtime
        self.ServerArgs = runtime.server_args.ServerArgs

    def outcome(self, model: str, argv: Sequence[str]) -> StartupOutcome:
        server_args, error, warnings = self._runtime.start(model, list(argv))
        if server_args is None:
            raised_at = self._runtime.raised_at
            return StartupOutcome(True, error, *([None] * 9), warnings, raised_at)
        view, prefill, decode = self.resolved(server_args)
        return StartupOutcome(
            refused=False,
            error=None,
            attention_backend=view.attention_backend,
            prefill_backend=prefill,
            decode_backend=decode,
            page_size=view.page_size,
            topk=view.speculative_eagle_topk,
            num_steps=view.speculative_num_steps,
            num_draft_tokens=view.speculative_num_draft_tokens,
            kv_cache_dtype=view.kv_cache_dtype,
            speculative_attention_mode=view.speculative_attention_mode,
            warnings=warnings,
            chosen_at=dict(sorted(self._runtime.writes.last.items())),
        )

    def choices(self, flag: str) -> tuple[str, ...]:
        """The values SGLang's own argument parser accepts for `flag`."""
        for action in self._runtime.parser._actions:
            if flag in action.option_strings:
                return tuple(action.choices or ())
        raise KeyError(f"sglang has no flag {flag}")

    def resolved(self, server_args: Any) -> tuple[Any, str | None, str | None]:
        """(values, prefill, decode): what SGLang's engine reads off a resolved ServerArgs.

        Up to 0.5.18 the fields hold the resolved values and `get_attention_backends()`
        resolves the phases. From 0.5.19 the fields keep the raw input: each resolved value
        is the release's `resolution_result(record, field)` (what `resolved_dict()` reads
        for every field), and the phases come from its `attention_backends_of` over them.
        """
        if not self._runtime.resolves_once:
            prefill, decode = server_args.get_attention_backends()  # SGLang's own resolution
            return server_args, prefill, decode
        import importlib

        base = importlib.import_module("sglang.srt.arg_groups.model_override_base")
        overrides = importlib.import_module("sglang.srt.arg_groups.overrides")
        view = types.SimpleNamespace(
            **{name: overrides.resolution_result(server_args, name) for name in _READ}
        )
        prefill, decode = base.attention_backends_of(view)
        return view, prefill, decode

    def server_args(self, model: str, argv: Sequence[str]) -> Any:
        """The resolved ServerArgs of an accepted launch (after its post-init; from 0.5.19
        after `resolve_once()`); RefusedError when SGLang refuses.

        Use it inside the `open_runtime` block: its methods import SGLang modules lazily.
        """
        server_args, error, _ = self._runtime.start(model, list(argv))
        if server_args is None:
            raise RefusedError(error or "refused")
        return server_args

    def raw_server_args(self, model: str, argv: Sequence[str]) -> Any:
        """A ServerArgs holding the parsed flags as given: SGLang's resolution has not run.

        What an engine would hand over before its own resolution: from 0.5.19 SGLang's own
        `from_cli_args` (construction no longer resolves); before, `from_cli_args` without
        `__post_init__`.
        """
        namespace = self._runtime.parser.parse_args(
            ["--model-path", self._runtime.model_paths[model], *argv]
        )
        if self._runtime.resolves_once:
            return self.ServerArgs.from_cli_args(namespace)
        raw = object.__new__(self.ServerArgs)
        for field in dataclasses.fields(self.ServerArgs):
            setattr(raw, field.name, getattr(namespace, field.name, field.default))
        return raw


class RefusedError(Exception):
    """SGLang refused the launch at start-up (its message is the argument)."""


@contextmanager
def open_runtime(version: str, gpu: str, zoo: bool = False) -> Iterator[Runtime]:
    """SGLang `version` loaded for `gpu`; the fake torch is in sys.modules only inside.

    With `zoo`, the models are the zoo's (compat.inputs.zoo) and SGLang's own config loader
    runs over the transformers its release pins (zoo_runtime.py).
    """
    kind: type[SglangRuntime] = SglangRuntime
    if zoo:
        from conformance.zoo_runtime import ZooRuntime

        kind = ZooRuntime
    with kind(source_root(version), _profile(gpu)) as runtime:
        yield Runtime(runtime)


def run_startup(version: str, gpu: str, model: str, argv: Sequence[str]) -> StartupOutcome:
    """One launch through SGLang `version`'s argument parser and ServerArgs post-init."""
    with open_runtime(version, gpu) as runtime:
        return runtime.outcome(model, argv)


def run_many(
    version: str, launches: Sequence[Launch], workers: int = 2, zoo: bool = False
) -> list[StartupOutcome]:
    """Outcomes of `launches`, in order, computed by `workers` parallel interpreters
    (with `zoo`, of the zoo's models; see open_runtime)."""
    source_root(version)  # download and extract once, before the workers start
    known: dict[str, object] = MODELS
    if zoo:
        from compat.inputs.zoo import ZOO_MODELS
        from conformance.zoo_runtime import prepare

        prepare(version)  # the transformers facts, once, before the workers start
        known = ZOO_MODELS
    for launch in launches:
        _profile(launch.gpu)
        if launch.model not in known:
            raise KeyError(f"unknown model {launch.model!r}; known: {', '.join(known)}")
    # One process per worker, each loading a GPU profile once for all its launches.
    by_gpu: dict[str, list[int]] = {}
    for index, launch in enumerate(launches):
        by_gpu.setdefault(launch.gpu, []).append(index)
    shares: list[list[int]] = [[] for _ in range(max(1, min(workers, len(by_gpu))))]
    for indices in sorted(by_gpu.values(), key=len, reverse=True):
        min(shares, key=len).extend(indices)  # largest profile to the least loaded worker
    results: list[StartupOutcome | None] = [None] * len(launches)

    def work(share: list[int]) -> None:
        lines = [json.dumps([launches[i].gpu, launches[i].model, list(launches[i].argv)])
                 for i in share]  # fmt: skip
        outcomes = _worker_process(version, "\n".join(lines) + "\n", zoo)
        for index, outcome in zip(share, outcomes, strict=True):
            results[index] = outcome

    with ThreadPoolExecutor(max_workers=len(shares)) as pool:
        list(pool.map(work, shares))
    return [outcome for outcome in results if outcome is not None]


def _worker_process(version: str, stdin: str, zoo: bool = False) -> list[StartupOutcome]:
    tools_dir = str(Path(__file__).resolve().parent.parent)
    path = os.pathsep.join([tools_dir, os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-m", "conformance._worker", version, *(["--zoo"] if zoo else [])],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"conformance worker failed:\n{done.stderr}")
    return [StartupOutcome.from_json(json.loads(line)) for line in done.stdout.splitlines()]


def _profile(gpu: str) -> GpuProfile:
    try:
        return GPU_PROFILES[gpu]
    except KeyError:
        raise KeyError(f"unknown GPU profile {gpu!r}; known: {', '.join(GPU_PROFILES)}") from None
