"""The runtime of the model zoo: SGLang's own config loading, over a pinned transformers.

The grid's runtime (runtime.py) hands `ModelConfig` a flat attribute object read from
`config.json`, which is enough for its five text models. The zoo's models take
SGLang's model-specific branches, and those read what SGLang's own loader builds: nested
text/vision configs, the architecture SGLang substitutes when transformers refuses a
model type, SGLang's config classes for the types it registers. So here, on top of the
grid's runtime:

- real, from the release: its config loader (`sglang/srt/utils/hf_transformers_utils.py`,
  from 0.5.11 the `sglang/srt/utils/hf_transformers/` package: `get_config`,
  `get_hf_text_config`, the registry of SGLang's config classes and its
  `AutoConfig.register` calls, the `deepseek_v32` fallback, the model-config parsers) and
  the quantization registry's `__init__` (which methods exist on which platform);
- `transformers` is hf_standin.py's stand-in for the version the release pins;
- SGLang's config classes (`sglang/srt/configs/*.py`, other than the modules run for
  real) are stand-ins with the literal defaults their source declares;
- the quantization classes answer `override_quantization_method` only for checkpoint
  formats whose classes never override it (fp8 and mxfp4 checkpoints, the zoo's); any
  other use fails loudly as a harness stub.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

from compat.inputs.zoo import ZOO_MODELS
from conformance import stubs
from conformance.hf_configs import pinned_transformers, transformers_facts
from conformance.hf_standin import HfWorld
from conformance.runtime import PLACEHOLDER_ROOTS, REAL_MODULES, SglangRuntime
from conformance.wheel import source_root

ZOO_REAL_MODULES = (
    *REAL_MODULES,
    "sglang.srt.utils.hf_transformers_utils",  # up to 0.5.10 the loader; then a re-export
    "sglang.srt.utils.hf_transformers",  # 0.5.11+: the loader package
    "sglang.srt.utils.hf_transformers.common",
    "sglang.srt.utils.hf_transformers.config",
    "sglang.srt.utils.hf_transformers.mistral_utils",
    "sglang.srt.utils.hf_transformers_patches",
    "sglang.srt.configs.model_config_parser_registry",  # 0.5.12+
    "sglang.srt.layers.quantization",  # the package __init__: the registry of methods
)
# SGLang's config loader, the modules whose memos are cleared between launches.
_LOADER_MODULES = (
    "sglang.srt.utils.hf_transformers_utils",
    "sglang.srt.utils.hf_transformers.common",
    "sglang.srt.utils.hf_transformers.config",
)
# Helpers of heavy modules that start-up calls: run from the release's source, lazily,
# with the names of SGLang's utilities in scope (the rest of each module stays a stub).
_LAZY_DEFINITIONS = {
    "sglang.srt.layers.attention.nsa.utils": (
        "print_nsa_bool_env_vars",  # 0.5.7: logs the DSA switches
        "aiter_can_use_preshuffle_paged_mqa",  # 0.5.12: ROCm DSA page size
    ),
    "sglang.srt.layers.attention.dsa.utils": ("aiter_can_use_preshuffle_paged_mqa",),
}
# Checkpoint formats (quantization_config.quant_method) for which no quantization class
# of 0.5.7-0.5.23 overrides the method, whatever --quantization says, except these
# user choices, whose classes inspect the checkpoint further.
_NEVER_OVERRIDDEN = frozenset({"fp8", "mxfp4"})
_INSPECTING_CHOICES = frozenset({"modelopt", "humming", "moe_wna16", "mlx_q4", "mlx_q8"})


# Module roots only the zoo runtime shadows (the grid's runtime handles transformers).
_ZOO_ROOTS = frozenset({"regex", "sentencepiece", "tiktoken"})


def prepare(version: str) -> None:
    """Fetch what the zoo runtime of `version` reads (once, before worker processes)."""
    source_root(version)
    transformers_facts(pinned_transformers(version))


class _ZooFinder(stubs.StubFinder):
    """Every `transformers.*` module not prepared is this world's stand-in too."""

    world: HfWorld

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name.split(".")[0] == "transformers" and spec.name not in self.fixed:
            module = self.world.transformers_module(spec.name)
            module.__spec__ = spec
            return module
        return super().create_module(spec)


class ZooRuntime(SglangRuntime):
    """SglangRuntime with the zoo's models and SGLang's own config loader."""

    real_modules = ZOO_REAL_MODULES
    # Tokenizer libraries some config modules import (their classes never run here).
    placeholder_roots = (*PLACEHOLDER_ROOTS, "transformers", "sentencepiece", "tiktoken")
    models = ZOO_MODELS

    @property
    def finder_class(self) -> type[stubs.StubFinder]:  # type: ignore[override]
        return type("ZooFinder", (_ZooFinder,), {"world": self.world})

    def __enter__(self) -> ZooRuntime:
        # The roots this runtime adds to the grid's: shadowed inside, put back on exit.
        self._zoo_saved = {
            name: module for name, module in sys.modules.items() if name.split(".")[0] in _ZOO_ROOTS
        }
        for name in self._zoo_saved:
            del sys.modules[name]
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for name in [n for n in sys.modules if n.split(".")[0] in _ZOO_ROOTS]:
            del sys.modules[name]
        sys.modules.update(self._zoo_saved)

    def __init__(self, source_root: Path, profile: Any) -> None:
        super().__init__(source_root, profile)
        version = source_root.name.removeprefix("sglang-").removesuffix("-py")
        self.transformers_version = pinned_transformers(version)
        self.world = HfWorld(self.transformers_version, source_root)

    def _stub_modules(self, torch: types.ModuleType) -> dict[str, types.ModuleType]:
        fixed = super()._stub_modules(torch)
        # What the grid's runtime prepares in place of modules that run for real here.
        added = set(self.real_modules) - set(REAL_MODULES)
        for name in [*fixed]:
            if name in added or name.split(".")[0] == "transformers":
                del fixed[name]
        fixed.update(self.world.transformers_modules())
        for name, module in self.world.config_modules().items():
            if not _is_real(name, self.real_modules, self.root):
                fixed[name] = module
        # `regex` (a superset of `re` for the patterns config classes parse) is not
        # installed here; the standard library answers for it.
        fixed["regex"] = re
        for name, functions in _LAZY_DEFINITIONS.items():
            file = self.root / (name.replace(".", "/") + ".py")
            if file.is_file():
                fixed[name] = _LazyDefinitions(name, file, functions)
        return fixed

    def _load(self) -> None:
        super()._load()
        quantization = importlib.import_module("sglang.srt.layers.quantization")
        methods = quantization.QUANTIZATION_METHODS
        for name in list(methods):
            methods[name] = _quantization_method(name)
        # SGLang memoises get_config (and the generation config) per process; a server
        # is one launch, the zoo is many: each launch starts with empty memos.
        self._memo_clears = [
            value.cache_clear
            for name in _LOADER_MODULES
            if name in sys.modules
            for value in vars(sys.modules[name]).values()
            if callable(getattr(value, "cache_clear", None))
        ]

    def start(self, model: str, argv: list[str]) -> tuple[Any, str | None, tuple[str, ...]]:
        for clear in self._memo_clears:
            clear()
        return super().start(model, argv)


class _LazyDefinitions(stubs._PlaceholderModule):
    """A stub module whose `functions` are the release's own, defined on first use."""

    def __init__(self, name: str, file: Path, functions: tuple[str, ...]) -> None:
        super().__init__(name)
        self.__path__ = []
        self._file = file
        self._functions = functions

    def __getattr__(self, name: str) -> Any:
        if name in self._functions:
            common = importlib.import_module("sglang.srt.utils.common")
            environ = importlib.import_module("sglang.srt.environ")
            namespace = self.__dict__
            for key, value in vars(common).items():
                namespace.setdefault(key, value)
            namespace.update(envs=environ.envs, functools=functools, os=os)
            stubs.exec_definitions(self._file, (), namespace, optional=self._functions)
            if name in namespace:
                return namespace[name]
        return super().__getattr__(name)


def _is_real(name: str, real: tuple[str, ...], root: Path) -> bool:
    for entry in real:
        tree = entry.removesuffix(".*")
        if name == tree or (entry.endswith(".*") and name.startswith(tree + ".")):
            base = root.joinpath(*name.split("."))
            return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    return False


@functools.cache
def _quantization_method(name: str) -> type:
    def override_quantization_method(cls: type, hf_quant_cfg: Any, user_quant: Any) -> None:
        method = hf_quant_cfg.get("quant_method") if isinstance(hf_quant_cfg, dict) else None
        if method in _NEVER_OVERRIDDEN and user_quant not in _INSPECTING_CHOICES:
            return None
        stubs.USES.append(f"{name}.override_quantization_method")
        raise stubs.StubUsedError(
            f"quantization class {name}: override for {method!r} / {user_quant!r} not modelled"
        )

    return type(
        f"QuantizationMethod_{name}",
        (),
        {
            "override_quantization_method": classmethod(override_quantization_method),
            "get_name": classmethod(lambda cls: name),
        },
    )


def model_config(runtime: Any, model: str, argv: Any = ()) -> Any:
    """SGLang's own ModelConfig of `model` under `argv`, built the way the release's
    start-up builds it (`ServerArgs.get_model_config()` up to 0.5.18,
    `model_override_base.model_config_of` from 0.5.19). `runtime` is an open zoo
    runtime (harness.open_runtime(..., zoo=True))."""
    server_args = runtime.raw_server_args(model, list(argv))
    if hasattr(server_args, "get_model_config"):
        return server_args.get_model_config()
    base = importlib.import_module("sglang.srt.arg_groups.model_override_base")
    return base.model_config_of(server_args)
