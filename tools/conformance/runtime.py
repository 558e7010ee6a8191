"""Load SGLang's real start-up modules for one GPU profile, isolated from everything else.

`SglangRuntime` is a context manager. On entry it swaps into `sys.modules` a fake `torch`
for the profile, the stubs of stubs.py and fresh copies of the wheel's real modules (so
their `lru_cache`d GPU predicates see this profile only), scrubs `SGLANG_*` variables from
the environment and captures SGLang's log records. On exit every one of those is put back
as it was, so nothing leaks into other tests.

Real (the wheel's code, executed): sglang/srt/server_args.py (argument parser and the whole
`ServerArgs.__post_init__`), sglang/srt/utils/common.py (GPU predicates, device probes,
`is_flashinfer_available`, ...), sglang/srt/environ.py, sglang/srt/configs/model_config.py
(`ModelConfig`, which decides MHA vs MLA and the KV heads), sglang/srt/connector/__init__.py,
and from hf_transformers_utils.py / sglang/utils.py the functions named in _stub_modules.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import platform
import sys
import tempfile
import types
import typing
import warnings
from pathlib import Path
from typing import Any

from conformance import fake_torch, stubs
from conformance.fake_torch import GpuProfile
from conformance.models import MODELS
from conformance.writes import WriteLog

# Executed from the release's own source (`.*`: the package and everything under it);
# what a release does not have is a placeholder there.
REAL_MODULES = (
    "sglang.srt.server_args",
    "sglang.srt.arg_groups.*",  # 0.5.15+: the resolution passes, 0.5.19+: its pipeline
    "sglang.srt.environ",
    "sglang.srt.utils",  # the package __init__ (re-exports utils.common)
    "sglang.srt.utils.common",
    "sglang.srt.configs.model_config",
    "sglang.srt.connector",
    "sglang.srt.utils.runai_utils",  # 0.5.10+: is the model path an object-store URI?
    "sglang.srt.configs.linear_attn_model_registry",  # 0.5.11+: hybrid linear-attention models
    "sglang.srt.configs.embedding_model_spec",  # 0.5.17+
    "sglang.srt.speculative.spec_info",  # 0.5.12+: the speculative-algorithm registry
    "sglang.srt.speculative.spec_registry",
    "sglang.srt.speculative.ragged_verify",  # 0.5.16+: env-selected verify mode
    "sglang.jit_kernel.kv_canary.consts",  # enum choices of a CLI flag (moved in 0.5.16)
    "sglang.kernels.ops.kv_canary.consts",
    "sglang.srt.model_executor.cuda_graph_config",  # 0.5.14+: choices of CUDA-graph flags
    "sglang.srt.layers.cp.base",  # 0.5.14+: binds the context-parallel strategy (none here)
    "sglang.srt.layers.deep_gemm_wrapper.configurer",
    "sglang.srt.hardware_backend.mlx.runtime",  # 0.5.19+: Apple MLX / MPS probes
    "sglang.srt.hardware_backend.mps.runtime",
    "sglang.srt.parser.reasoning_parser_names",  # 0.5.21+: parser choices as plain names
    "sglang.srt.function_call.parser_names",
    "sglang.srt.layers.attention.linear.utils",  # 0.5.22+: env switch read by the pipeline
    "sglang.srt.kernel_plugins.nvidia.binding",  # 0.5.22+: pipeline steps, off unless flagged
    "sglang.srt.kernel_plugins.amd.binding",
    "sglang.kernels.plugin_kernels.nvidia.spec",  # their feature tables (plain enums)
    "sglang.kernels.plugin_kernels.amd.spec",
    "sglang.srt.runtime_context",  # 0.5.16+: platform and parallel context
    "sglang.srt.platforms.*",  # 0.5.11+: current_platform
    "sglang.srt.plugins.*",  # 0.5.11+: load_plugins, HookRegistry
)
# What ModelConfig and server_args import from hf_transformers_utils, and the helpers those
# call where a release has them.
_HF_FUNCTIONS = (
    *("get_hf_text_config", "get_context_length", "CONTEXT_LENGTH_KEYS", "check_gguf_file"),
    *("get_sparse_attention_config", "download_from_hf"),
)
_HF_HELPERS = ("normalize_rope_scaling_compat", "get_rope_config", "resolve_hf_gguf_reference")
_CONSTANTS = {
    "sglang.srt.layers.attention.fla.chunk_delta_h": ("CHUNK_SIZE",),
    "sglang.kernels.ops.attention.fla.chunk_delta_h": ("CHUNK_SIZE",),  # 0.5.16+
    "sglang.srt.layers.cp.utils": ("CP_V2_DEFAULT_MODEL_CLASSES",),  # 0.5.14+
    "sglang.srt.utils.hf_transformers.config": ("POINTER_ADAPTER_BASES",),  # 0.5.23
}
# Packages whose __init__ pulls in kernels, answered from the one real submodule start-up
# reads (0.5.16+: whether DeepGEMM is on, computed by the release's own configurer).
_REEXPORTS = {
    "sglang.srt.layers.deep_gemm_wrapper": "sglang.srt.layers.deep_gemm_wrapper.configurer",
}
# Heavy dependencies of those files, used only by code start-up does not run.
PLACEHOLDER_ROOTS = (
    *("sglang", "numpy", "orjson", "psutil", "pybase64", "requests", "triton", "zmq"),
    *("fastapi", "PIL", "starlette", "huggingface_hub", "IPython", "pydantic", "tqdm"),
    *("decord", "modelscope", "torchvision", "safetensors", "cloudpickle"),
)
# Must look uninstalled to importlib.util.find_spec (SGLang probes them).
ABSENT = ("triton_kernels", "habana_frameworks", "torch_npu", "deep_gemm")
# Every module name the runtime may shadow; saved on entry, restored on exit.
_SHADOWED_ROOTS = {*PLACEHOLDER_ROOTS, *ABSENT, "torch", "transformers", "flashinfer", "sgl_kernel"}
# Refusals SGLang raises at start-up. Anything else (AttributeError, TypeError, ...) is a
# gap in the harness and propagates instead of being recorded as a refusal.
REFUSALS = (ValueError, AssertionError, RuntimeError, NotImplementedError)


class ArgvError(Exception):
    """argparse rejected the command line (SGLang would exit with status 2)."""


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        raise ArgvError(message)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class SglangRuntime:
    """SGLang `version`'s start-up code running on `profile` (use as a context manager).

    Subclasses widen what runs for real (`real_modules`, `placeholder_roots`) and which
    model directories exist (`models`: name -> config.json fields); see zoo_runtime.py.
    """

    real_modules: tuple[str, ...] = REAL_MODULES
    placeholder_roots: tuple[str, ...] = PLACEHOLDER_ROOTS
    models: dict[str, dict[str, Any]] = MODELS
    finder_class: type[stubs.StubFinder] = stubs.StubFinder

    def __init__(self, source_root: Path, profile: GpuProfile) -> None:
        self.root = source_root
        self.profile = profile
        self.records = _Records()
        self.raised_at: str | None = None  # where the last refusal was raised
        self.writes = WriteLog(source_root)  # where the last launch's fields were chosen

    # -- entering and leaving -------------------------------------------------------
    def __enter__(self) -> SglangRuntime:
        self._saved_modules = {
            name: module
            for name, module in sys.modules.items()
            if name.split(".")[0] in _SHADOWED_ROOTS
        }
        for name in self._saved_modules:
            del sys.modules[name]
        self._saved_environ = dict(os.environ)
        for key in list(os.environ):
            if key.startswith(("SGLANG_", "SGL_")):
                del os.environ[key]
        if self.profile.platform == "cpu":
            os.environ["SGLANG_USE_CPU_ENGINE"] = "1"  # how SGLang's CPU build is started
        self._saved_machine = platform.machine
        platform.machine = lambda: "x86_64"  # every profile is an x86-64 host
        self._models_dir = tempfile.TemporaryDirectory(prefix="sglang-models-")
        self._logger = logging.getLogger("sglang")
        self._saved_logger = (self._logger.level, self._logger.propagate)
        self._logger.setLevel(logging.WARNING)
        self._logger.propagate = False
        self._logger.addHandler(self.records)
        torch_modules = fake_torch.build(self.profile)
        self._finder = self.finder_class(
            self.root,
            self.real_modules,
            {**torch_modules, **self._stub_modules(torch_modules["torch"])},
            self.placeholder_roots,
        )
        sys.meta_path.insert(0, self._finder)
        stubs._ACTIVE.append(self._finder)
        for name in ABSENT:
            sys.modules[name] = None  # type: ignore[assignment]
        self._patch_msgspec()
        try:
            self._load()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        sys.meta_path.remove(self._finder)
        stubs._ACTIVE.remove(self._finder)
        for name in [n for n in sys.modules if n.split(".")[0] in _SHADOWED_ROOTS]:
            del sys.modules[name]
        sys.modules.update(self._saved_modules)
        os.environ.clear()
        os.environ.update(self._saved_environ)
        platform.machine = self._saved_machine
        if self._saved_fields is not None:
            import msgspec.structs

            msgspec.structs.fields = self._saved_fields
        self._logger.removeHandler(self.records)
        self._logger.setLevel(self._saved_logger[0])
        self._logger.propagate = self._saved_logger[1]
        for name in ("FP8_E4M3_MAX", "FP8_E4M3_MIN"):  # common.py writes them into builtins
            _drop_builtin(name)
        self._models_dir.cleanup()

    def _patch_msgspec(self) -> None:
        # 0.5.20+ asks msgspec for ServerArgs' fields several times per launch, and msgspec
        # re-evaluates every string annotation each time; the answer depends on the class
        # alone, so it is memoised per class while the runtime is open.
        self._saved_fields = None
        try:
            import msgspec.structs
        except ImportError:  # only 0.5.20+ needs it; the import there reports its absence
            return
        self._saved_fields = original = msgspec.structs.fields
        msgspec.structs.fields = functools.cache(original)

    # -- the modules ----------------------------------------------------------------
    def _stub_modules(self, torch: types.ModuleType) -> dict[str, types.ModuleType]:
        root = self.root
        fixed: dict[str, types.ModuleType] = {
            "transformers": stubs.module_with(
                "transformers", PretrainedConfig=PretrainedConfig, __version__="4.57.1"
            ),
            # 0.5.23's model_config imports a Hub helper it calls only for remote configs.
            "transformers.utils": stubs.placeholder_module("transformers.utils"),
            # sgl_kernel is installed with every SGLang build; only its CPU build registers
            # the AMX op that fake_torch exposes on the AMX profile.
            "sgl_kernel": stubs.module_with("sgl_kernel"),
            # The parser choices of --tool-call-parser / --reasoning-parser: not attention.
            "sglang.srt.function_call.function_call_parser": stubs.module_with(
                "ffp", FunctionCallParser=types.SimpleNamespace(ToolCallParserEnum={})
            ),
            "sglang.srt.parser.reasoning_parser": stubs.module_with(
                "rp", ReasoningParser=types.SimpleNamespace(DetectorMap={})
            ),
            # 0.5.17+ common.py lists requests' base exception among media-loading errors.
            "requests": stubs.module_with(
                "requests",
                exceptions=stubs.module_with(
                    "requests.exceptions", RequestException=type("RequestException", (OSError,), {})
                ),
            ),
            # Read by ModelConfig only when a quantization method is set.
            "sglang.srt.layers.quantization": stubs.module_with("q", QUANTIZATION_METHODS={}),
        }
        # Modules with heavy imports of which start-up reads only constants: those constants
        # are the release's own statements, run alone; the rest stays a placeholder.
        for name, constants in _CONSTANTS.items():
            file = root / (name.replace(".", "/") + ".py")
            if file.is_file():
                module = stubs.placeholder_module(name)
                stubs.exec_definitions(file, (), module.__dict__, optional=constants)
                fixed[name] = module
        for name, source in _REEXPORTS.items():
            if (root / (source.replace(".", "/") + ".py")).is_file():
                fixed[name] = stubs.reexporting_module(name, source)
        if self.profile.platform == "cuda":
            # SGLang's CUDA install ships flashinfer; is_flashinfer_available() finds it.
            fixed["flashinfer"] = stubs.module_with("flashinfer")
        hf_utils = stubs.module_with("sglang.srt.utils.hf_transformers_utils")
        namespace = hf_utils.__dict__
        namespace.update(vars(typing))
        namespace.update(os=os, json=json, Path=Path, torch=torch, logging=logging)
        namespace.update(PretrainedConfig=PretrainedConfig, snapshot_download=_no_download)
        # 0.5.11+ keeps these in utils/hf_transformers/common.py (the old module re-exports)
        # and the rope-scaling normalisation they call in utils/hf_transformers_patches.py.
        files = [root / "sglang/srt/utils/hf_transformers_patches.py"]
        files.append(root / "sglang/srt/utils/hf_transformers/common.py")
        if not files[-1].is_file():
            files[-1] = root / "sglang/srt/utils/hf_transformers_utils.py"
        if files[0].is_file():
            stubs.exec_definitions(files[0], [], namespace, optional=_HF_HELPERS)
        stubs.exec_definitions(files[-1], _HF_FUNCTIONS, namespace, optional=_HF_HELPERS)
        # The two that need transformers' AutoConfig: read the model directory's config.json.
        namespace["get_config"] = _get_config
        namespace["get_generation_config"] = lambda *args, **kwargs: None
        fixed["sglang.srt.utils.hf_transformers_utils"] = hf_utils
        return fixed

    def _load(self) -> None:
        import importlib

        environ = importlib.import_module("sglang.srt.environ")
        utils = stubs.module_with("sglang.utils", envs=environ.envs)
        stubs.exec_definitions(self.root / "sglang/utils.py", ["is_in_ci"], utils.__dict__)
        self._finder.fixed["sglang.utils"] = utils
        common = importlib.import_module("sglang.srt.utils.common")
        # Memory probes shell out to nvidia-smi / rocminfo / sysfs: answer for the profile.
        memory = float(self.profile.memory_mib)
        for probe in ("get_nvgpu_memory_capacity", "get_amdgpu_memory_capacity"):
            setattr(common, probe, lambda: memory)
        common.get_cpu_memory_capacity = lambda: memory
        self.common = common
        self.model_config = importlib.import_module("sglang.srt.configs.model_config")
        self.server_args = importlib.import_module("sglang.srt.server_args")
        if (self.root / "sglang/srt/arg_groups/overrides.py").is_file():
            importlib.import_module("sglang.srt.arg_groups.overrides")  # its declarations
        self.writes.install(self.server_args)
        self.parser = _RaisingParser()
        self.server_args.ServerArgs.add_cli_args(self.parser)
        self.model_paths: dict[str, str] = {}
        for name, config in self.models.items():
            directory = Path(self._models_dir.name) / name
            directory.mkdir()
            (directory / "config.json").write_text(json.dumps(config))
            self.model_paths[name] = str(directory)

    # -- one launch -----------------------------------------------------------------
    @property
    def resolves_once(self) -> bool:
        """0.5.19+: a ServerArgs is raw until `resolve_once()` runs the resolution."""
        return hasattr(self.server_args.ServerArgs, "resolve_once")

    def start(self, model: str, argv: list[str]) -> tuple[Any, str | None, tuple[str, ...]]:
        """Parse `argv` for `model` and resolve it as the launcher does (post-init, and
        from 0.5.19 `resolve_once()`): (ServerArgs or None, error, warnings)."""
        self.records.messages.clear()
        self.writes.clear()
        stub_uses = len(stubs.USES)
        server_args = error = None
        self.raised_at = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                namespace = self.parser.parse_args(["--model-path", self.model_paths[model], *argv])
                built = self.server_args.ServerArgs.from_cli_args(namespace)
                # 0.5.19+: construction keeps the raw flags; the launcher resolves once.
                if hasattr(built, "resolve_once"):
                    built.resolve_once()
                server_args = built
            except ArgvError as exc:
                error = f"argparse: {exc}"
            except REFUSALS as exc:
                error = f"{type(exc).__name__}: {exc}"
                self.raised_at = self._raising_frame(exc)
        if len(stubs.USES) != stub_uses:
            used = ", ".join(stubs.USES[stub_uses:])
            raise stubs.StubUsedError(f"SGLang used harness stubs ({used}) for {model} {argv}")
        messages = [*self.records.messages, *(str(w.message) for w in caught)]
        prefix = self._models_dir.name + os.sep
        clean = tuple(m.replace(prefix, "") for m in messages)
        return server_args, None if error is None else error.replace(prefix, ""), clean

    def _raising_frame(self, exc: BaseException) -> str | None:
        """`file:line (function)` of the innermost frame of SGLang's source that raised."""
        found = None
        traceback = exc.__traceback__
        while traceback is not None:
            code = traceback.tb_frame.f_code
            file = Path(code.co_filename)
            if file.is_relative_to(self.root):
                line = traceback.tb_lineno
                found = f"{file.relative_to(self.root)}:{line} ({code.co_name})"
            traceback = traceback.tb_next
        return found


def _drop_builtin(name: str) -> None:
    import builtins

    if hasattr(builtins, name):
        delattr(builtins, name)


def _no_download(*args: object, **kwargs: object) -> typing.NoReturn:
    raise stubs.StubUsedError("the harness never downloads models")


class PretrainedConfig:
    """transformers.PretrainedConfig, reduced to attribute access over config.json."""

    model_type = ""

    def __init__(self, **fields: Any) -> None:
        self.architectures = None
        self.__dict__.update(fields)
        # transformers 4.57 reads the checkpoint dtype as `dtype` (alias of torch_dtype).
        self.dtype = fields.get("dtype", fields.get("torch_dtype"))

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@functools.cache
def _config_text(model: str) -> str:
    return (Path(model) / "config.json").read_text()


def _get_config(model: str, *args: object, **kwargs: object) -> PretrainedConfig:
    # A fresh object per launch: SGLang writes into hf_config (context_len, ...).
    return PretrainedConfig(**json.loads(_config_text(model)))
