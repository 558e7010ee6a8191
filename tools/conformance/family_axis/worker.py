"""Worker of the family axis: stdin one JSON [gpu, architecture, argv] per line, stdout one
JSON object per line, in order: {"outcome": StartupOutcome} or {"unreadable": reason}.
Usage: python -m conformance.family_axis.worker VERSION"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

from conformance import stubs
from conformance.family_axis.axis import BASES, UNREADABLE, model_name, stand_in
from conformance.harness import Runtime, _profile
from conformance.runtime import REAL_MODULES, SglangRuntime
from conformance.wheel import source_root

# DeepSeek V4's `ModelConfig` probes the checkpoint's expert weights for their layout
# unless this is set (0.5.12 configs/model_config.py:252-257); the layout picks only the MoE
# runner, never an attention field, and a stand-in has no weights: pin SGLang's default.
DSV4_EXPERTS = ("SGLANG_DSV4_FP4_EXPERTS", "1")


# 0.5.23's CUDA-graph pass asks whether the prefill context-parallel setup supports BCG
# (arg_groups/cuda_graph_hook.py:113) once DeepSeek V4's overrides ran; its answer is pure
# Python over the server args.
FAMILY_REAL_MODULES = ("sglang.srt.layers.cp.bcg", "sglang.srt.layers.cp.bcg.*")


def _runtime_class(architectures: list[str]) -> type[SglangRuntime]:
    models = {
        model_name(name, base): stand_in(name, base) for name in architectures for base in BASES
    }

    class FamilyRuntime(SglangRuntime):
        real_modules = (*REAL_MODULES, *FAMILY_REAL_MODULES)

        def __enter__(self) -> SglangRuntime:
            entered = super().__enter__()  # clears SGLang's variables, restored on exit
            os.environ[DSV4_EXPERTS[0]] = DSV4_EXPERTS[1]
            return entered

    FamilyRuntime.models = models
    return FamilyRuntime


def _one(runtime: Runtime, architecture: str, argv: list[str]) -> dict[str, Any]:
    """The outcome on the first stand-in the release's code can read."""
    reasons = []
    for base in BASES:
        try:
            outcome = runtime.outcome(model_name(architecture, base), argv)
        except (AttributeError, KeyError, TypeError, IndexError, stubs.StubUsedError) as exc:
            # The release's branch read what this stand-in does not carry.
            reasons.append(f"{base}: {type(exc).__name__}: {exc}"[:200])
            continue
        return {"base": base, "outcome": outcome.to_json()}
    return {"base": None, "outcome": None, UNREADABLE: "; ".join(reasons)}


def main(version: str) -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # anything SGLang prints must not corrupt the JSON lines
    launches = [json.loads(line) for line in sys.stdin if line.strip()]
    kind = _runtime_class(sorted({launch[1] for launch in launches}))
    root: Path = source_root(version)
    for gpu, group in itertools.groupby(launches, key=lambda launch: launch[0]):
        with kind(root, _profile(gpu)) as loaded:
            runtime = Runtime(loaded)
            for _, architecture, argv in group:
                out.write(json.dumps(_one(runtime, architecture, argv)) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
