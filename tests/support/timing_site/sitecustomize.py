"""Measures the SGLang plugin's CPU time in every process of a real launch (opt-in test).

On `PYTHONPATH`, Python imports this module at start-up in SGLang's launcher and in every
worker it starts. It wraps the loading of the `attention_compat` entry point, its
`register()` and each run of the hook's `check_launch()`, and writes this process's totals
(CPU seconds of the calling thread) to `$COMPAT_PLUGIN_TIMING_DIR/<pid>.json` after each:
a worker SGLang kills still leaves what it measured.
"""

from __future__ import annotations

import json
import os
import time
from importlib import metadata
from pathlib import Path
from typing import Any

_OUT = os.environ.get("COMPAT_PLUGIN_TIMING_DIR")
_SPENT: dict[str, Any] = {"load": 0.0, "checks": []}


def _dump() -> None:
    if _OUT:
        Path(_OUT, f"{os.getpid()}.json").write_text(json.dumps(_SPENT))


def _timed(function: Any, key: str) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent = time.thread_time() - start
            if key == "load":
                _SPENT["load"] += spent
            else:
                _SPENT["checks"].append(spent)
            _dump()

    return run


_load = metadata.EntryPoint.load


def _load_timed(self: metadata.EntryPoint) -> Any:
    if not self.value.startswith("compat.sglang_plugin"):
        return _load(self)
    start = time.thread_time()
    register = _load(self)
    _SPENT["load"] += time.thread_time() - start
    import compat.sglang_plugin as plugin

    plugin.check_launch = _timed(plugin.check_launch, "checks")  # type: ignore[method-assign]
    _dump()
    return _timed(register, "load")


if _OUT:
    metadata.EntryPoint.load = _load_timed  # type: ignore[method-assign]
