"""Run a release's own attention registry: what `ModelRunner` builds after start-up.

`ModelRunner` builds its attention backends through
`sglang/srt/layers/attention/attention_registry.py`: `ATTENTION_BACKENDS[name](runner)`, then
`attn_backend_wrapper(runner, backend)`. Each factory checks the model (MLA or MHA,
encoder-decoder), the GPU (its compute capability, read with the release's own
`get_device_capability` over the fake torch) and speculative decoding; the wrapper checks
hybrid linear-attention models against allow-lists per GPU class.

Real (the wheel's code, executed): the registry module, `sglang/srt/utils/common.py` (the GPU
predicates it calls) and the modules `runtime.REAL_MODULES` names. Stand-ins: the model
runner (`BuildCase`: the facts the registry reads of it), the backend classes (every module a
factory imports its class from is a placeholder, so building one records the class name and
runs none of its constructor), the runtime context (`get_spec`, `get_parallel`, `get_platform`,
whose values start-up has settled) and the model-config helpers that tell a hybrid model.
The backends' own constructors are not run: their checks are not part of this phase.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
import types
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from conformance import stubs
from conformance.fake_torch import GpuProfile
from conformance.harness import open_runtime
from conformance.runtime import REAL_MODULES, REFUSALS, SglangRuntime
from conformance.wheel import FRESH, cache_dir, harness_digest, source_root

REGISTRY = "sglang.srt.layers.attention.attention_registry"
REGISTRY_FILE = "sglang/srt/layers/attention/attention_registry.py"
DRAFT = "sglang.srt.speculative.draft_utils"
DRAFT_FILE = "sglang/srt/speculative/draft_utils.py"
_LINEAR_KERNELS = "sglang.srt.layers.attention.linear.utils"
# 0.5.20+: `parse_qsa_profile`, which the EAGLE workers call on the draft runner's config
# and hand the factory (`DraftBackendFactory(..., qsa_profile=...)`).
QSA_CONFIG = "sglang.srt.layers.attention.qsa.config"
# A QSA model's indexer, as a Qwen4-Exp config carries it (in its text config): values
# `parse_qsa_profile` accepts (one KV head, budget / ratio a top-k width it supports).
QSA_INDEXER = {"indexer_n_heads": 32, "indexer_kv_heads": 1, "indexer_head_dim": 128,
               "indexer_budget": 2048, "indexer_compress_ratio": 4}  # fmt: skip

# The machines of the build grid, by exact compute capability (CUDA 12.8, as the releases'
# CUDA images ship), one ROCm part (torch's ROCm build reports gfx942 as 9.4) and a CPU.
BUILD_PROFILES: dict[str, GpuProfile] = {
    profile.name: profile
    for profile in (
        *(
            GpuProfile(f"sm{major}{minor}", "cuda", f"sm{major}{minor}", (major, minor),
                       "12.8", None, 80_000)
            for major, minor in ((8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0),
                                 (12, 0), (12, 1))
        ),
        GpuProfile("gfx942", "rocm", "AMD Instinct MI300X", (9, 4), None, "6.3.42131", 196_592),
        GpuProfile("cpu", "cpu", "Intel Xeon", None, None, None, 515_000),
    )
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class BuildCase:
    """What the registry reads of a model runner after start-up."""

    backend: str
    mla: bool = False
    encoder_decoder: bool = False
    hybrid_gdn: bool = False
    speculative: str | None = None  # the speculative algorithm start-up settled on


@dataclasses.dataclass(frozen=True)
class BuildOutcome:
    """What the registry did: the class it built, or where it raised."""

    built: str | None
    error: str | None = None
    raised_at: int | None = None  # the registry's line that raised
    raised_in: str | None = None  # the registry's function that raised
    names: str | None = None  # the draft factory's: the backends it looked up (decode,extend)

    @property
    def failed(self) -> bool:
        return self.built is None


@dataclasses.dataclass(frozen=True)
class DraftCase:
    """What the draft worker reads: the target's backend (both phases), the model's
    architecture, the draft's steps, `--speculative-draft-attention-backend` and the draft
    model's own architecture."""

    backend: str  # the target's decode backend (and prefill one, unless `prefill` is set)
    mla: bool = False
    steps: int = 3  # `--speculative-num-steps`: 1 builds no multi-step decode backend
    prefill: str | None = None  # the target's prefill backend, where it differs
    draft_backend: str | None = None  # `--speculative-draft-attention-backend`
    draft_mla: bool | None = None  # the draft model's `use_mla_backend` (None: the target's)
    decode_mode: bool = False  # `--speculative-attention-mode decode`
    hybrid_gdn: bool = False  # a hybrid GDN model (the registry's wrapper reads it)
    encoder_decoder: bool = False  # cross-attention (the registry's factories read it)
    qsa: bool = False  # the draft model's config carries a QSA indexer (`QSA_CONFIG`)

    @property
    def draft_is_mla(self) -> bool:
        return self.mla if self.draft_mla is None else self.draft_mla


class _Config(types.SimpleNamespace):
    """A hybrid model's layer layout, as the wrapper reads it."""


class _ServerArgs(types.SimpleNamespace):
    """The resolved flags: those a case sets, every other one unset (its default, None or
    off: double sparsity, DCP, ... are off in the grid)."""

    def __getattr__(self, name: str) -> None:
        if name.startswith("__"):
            raise AttributeError(name)
        return None


class BuildRuntime(SglangRuntime):
    """The release's registry loaded for one machine, ready to build backends."""

    # The linear-attention kernel choice (`--linear-attn-*-backend`, flags of their own) is
    # not part of this phase: what the wrapper imports of it is a placeholder.
    real_modules = tuple(name for name in REAL_MODULES if name != _LINEAR_KERNELS)
    # What tells a QSA model (the wrapper's `is_qwen_qsa`, the draft's profile): the
    # release's own reading of the config (plain code, no kernel).
    real_modules += (QSA_CONFIG,)

    def __enter__(self) -> BuildRuntime:
        super().__enter__()
        return self

    def _load(self) -> None:
        environ = importlib.import_module("sglang.srt.environ")
        utils = stubs.module_with("sglang.utils", envs=environ.envs)
        stubs.exec_definitions(self.root / "sglang/utils.py", ["is_in_ci"], utils.__dict__)
        self._finder.fixed["sglang.utils"] = utils
        # A factory opens a CUDA stream for FlashInfer's planning under EAGLE.
        importlib.import_module("torch").cuda.Stream = type("Stream", (), {})
        self.common = importlib.import_module("sglang.srt.utils.common")
        self._finder.real = self._finder.real | {REGISTRY}
        self.registry = importlib.import_module(REGISTRY)

    def build(self, case: BuildCase, draft_worker: bool = False) -> BuildOutcome:
        """`ATTENTION_BACKENDS[backend](runner)`, then `attn_backend_wrapper`, as
        `ModelRunner._get_attention_backend_from_str` calls them (for the draft's model
        runner where `draft_worker`)."""
        registry = self.registry
        runner = self._runner(case)
        runner.is_draft_worker = draft_worker
        saved = dict(registry.__dict__)
        registry.__dict__.update(self._context(case))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # `nsa` warns it is deprecated: no refusal
                factory = registry.ATTENTION_BACKENDS[case.backend]
                built = registry.attn_backend_wrapper(runner, factory(runner))
        except REFUSALS as exc:
            line, function = self._registry_frame(exc)
            return BuildOutcome(None, f"{type(exc).__name__}: {exc}", line, function)
        finally:
            registry.__dict__.clear()
            registry.__dict__.update(saved)
        return BuildOutcome(type(built).__name__)

    def build_draft(self, case: DraftCase) -> BuildOutcome:
        """The target's backends, then the draft worker's, in SGLang's order: the target
        runner's registry build (decode, then prefill), the draft runner's (its own
        `use_mla_backend`: the flag alone, else the target's backends, as
        `ModelRunner._get_attention_backend` and, from 0.5.16,
        `resolve_attention_backend_strs` choose), then the EAGLE worker's
        `DraftBackendFactory(...)`, `create_decode_backend()` and
        `create_draft_extend_backend()`. `built` names the factory's two classes (decode,
        then draft extend; `None` for none)."""
        prefill = case.prefill or case.backend
        target = dict.fromkeys((case.backend, prefill))
        runner = (case.draft_backend,) if case.draft_backend else tuple(target)
        for draft, mla, backends in ((False, case.mla, target), (True, case.draft_is_mla, runner)):
            for backend in backends:
                built = BuildCase(backend, mla, case.encoder_decoder, case.hybrid_gdn, "EAGLE")
                outcome = self.build(built, draft)
                if outcome.failed:
                    return outcome
        return self._draft_factory(case)

    def _draft_factory(self, case: DraftCase) -> BuildOutcome:
        factory_module = self._draft_module()
        mla = case.draft_is_mla
        target = BuildCase(case.backend, mla, case.encoder_decoder, case.hybrid_gdn, "EAGLE")
        runner = self._runner(target)
        # 0.5.18+: the draft runner carries the flag (`resolve_draft_attention_backend`).
        runner.draft_attention_backend = case.draft_backend
        server_args = runner.server_args
        prefill = case.prefill or case.backend
        server_args.prefill_attention_backend = prefill
        # Up to 0.5.15 the factory reads the process-wide `use_mla_backend`, which each
        # runner sets as it is built: the draft runner, built last, sets its own.
        server_args.use_mla_backend = mla
        mode = "decode" if case.decode_mode else "prefill"
        server_args.speculative_attention_mode = mode
        server_args.speculative_draft_attention_backend = case.draft_backend
        spec = types.SimpleNamespace(
            speculative_attention_mode=mode,
            speculative_draft_attention_backend=case.draft_backend,
        )
        context = {
            "get_global_server_args": lambda: server_args,
            "get_spec": lambda: spec,
            "attention_backends": lambda: (prefill, case.backend),
        }
        saved = dict(factory_module.__dict__)
        factory_module.__dict__.update(
            {name: value for name, value in context.items() if name in saved}
        )
        arguments = {"draft_model_runner": runner, "topk": 1,
                     "speculative_num_steps": case.steps, "server_args": server_args}  # fmt: skip
        factory_class = factory_module.DraftBackendFactory
        accepted = inspect.signature(factory_class).parameters
        if case.qsa:
            text = types.SimpleNamespace(**vars(runner.model_config.hf_config), **QSA_INDEXER)
            runner.model_config.hf_config = types.SimpleNamespace(text_config=text)
        if "qsa_profile" in accepted:
            # As the EAGLE workers build the factory: the profile of the draft runner's own
            # config, read by the release's own parser.
            parse = importlib.import_module(QSA_CONFIG).parse_qsa_profile
            arguments["qsa_profile"] = parse(runner.model_config.hf_config)
        # What `_create_backend` looks up in the map it is handed: the backend it builds.
        looked_up: list[str] = []
        original = factory_class._create_backend

        def recording(
            self: object, name: str, backend_map: dict[str, Any], *a: Any, **k: Any
        ) -> Any:
            return original(self, name, _Lookups(backend_map, looked_up), *a, **k)

        factory_class._create_backend = recording
        # 0.5.23 sets the children's phase names on a per-step container; a stand-in
        # container has none.
        stubs.inert_attribute("attn_backends", ())
        try:
            factory = factory_class(
                **{name: value for name, value in arguments.items() if name in accepted}
            )
            decode = factory.create_decode_backend()
            decoded = _looked_up(decode, looked_up, 0)
            before = len(looked_up)
            extend = factory.create_draft_extend_backend()
            extended = _looked_up(extend, looked_up, before)
        except REFUSALS as exc:
            line, function = _frame_in(exc, DRAFT_FILE)
            return BuildOutcome(None, f"{type(exc).__name__}: {exc}", line, function)
        finally:
            factory_class._create_backend = original
            stubs.inert_attribute("attn_backends", None)
            factory_module.__dict__.clear()
            factory_module.__dict__.update(saved)
        names = f"{decoded},{extended}"
        return BuildOutcome(f"{_name(decode)},{_name(extend)}", names=names)

    def _draft_module(self) -> types.ModuleType:
        self._finder.real = self._finder.real | {DRAFT}
        return importlib.import_module(DRAFT)

    def _runner(self, case: BuildCase) -> types.SimpleNamespace:
        hybrid = _Config(full_attention_layer_ids=[3]) if case.hybrid_gdn else None
        server_args = _ServerArgs(
            attention_backend=case.backend,
            prefill_attention_backend=case.backend,
            decode_attention_backend=case.backend,
            speculative_algorithm=case.speculative,
            dcp_size=1,  # no decode context parallelism (0.5.17+ reads the size)
        )
        hf_config = types.SimpleNamespace(architectures=["LlamaForCausalLM"], model_type="llama")
        model_config = types.SimpleNamespace(
            is_encoder_decoder=case.encoder_decoder,
            hf_config=hf_config,
            hf_text_config=hf_config,
            quantization=None,
        )
        spec = types.SimpleNamespace(is_speculative=lambda: case.speculative is not None)
        return types.SimpleNamespace(
            use_mla_backend=case.mla,
            model_config=model_config,
            server_args=server_args,
            prefill_attention_backend_str=case.backend,
            decode_attention_backend_str=case.backend,
            kv_cache_dtype=None,
            init_new_workspace=False,
            is_draft_worker=False,
            spec_algorithm=spec,
            # Up to 0.5.12 the runner carries the hybrid configs itself.
            hybrid_gdn_config=hybrid,
            mambaish_config=hybrid,
            mamba2_config=None,
            kimi_linear_config=None,
        )

    def _context(self, case: BuildCase) -> dict[str, Any]:
        """The registry's module-level names whose answers start-up has settled."""
        hybrid = _Config(full_attention_layer_ids=[3]) if case.hybrid_gdn else None
        spec = types.SimpleNamespace(speculative_algorithm=case.speculative)
        parallel = types.SimpleNamespace(dcp_enabled=False, tp_size=1, attn_tp_size=1)
        sm120 = getattr(self.common, "is_sm120_supported", lambda: False)
        context: dict[str, Any] = {
            "get_spec": lambda: spec,
            "get_parallel": lambda: parallel,
            "get_platform": lambda: types.SimpleNamespace(is_sm120=sm120()),
            # 0.5.17 publishes the linear-attention kernel default here (not this phase).
            "get_context": lambda: types.SimpleNamespace(override=lambda *a, **k: None),
            "resolved_view": lambda server_args: server_args,
            "attention_backends_of": lambda view: (
                view.prefill_attention_backend,
                view.decode_attention_backend,
            ),
            "hybrid_gdn_config": lambda model_config: hybrid,
            "mambaish_config": lambda model_config: hybrid,
        }
        for other in ("mamba2_config", "kimi_linear_config", "hybrid_kda_config",
                      "glm5_next_config", "hybrid_lightning_config"):  # fmt: skip
            context[other] = lambda model_config: None
        return {name: value for name, value in context.items() if name in self.registry.__dict__}

    def _registry_frame(self, exc: BaseException) -> tuple[int | None, str | None]:
        """The line and function of the innermost registry frame that raised."""
        return _frame_in(exc, REGISTRY_FILE)


class _Lookups(dict[str, Any]):
    """A backend map that records each key it is indexed by."""

    def __init__(self, backend_map: dict[str, Any], looked_up: list[str]) -> None:
        super().__init__(backend_map)
        self.looked_up = looked_up

    def __getitem__(self, key: str) -> Any:
        self.looked_up.append(key)
        return super().__getitem__(key)


def _frame_in(exc: BaseException, file: str) -> tuple[int | None, str | None]:
    """The line and function of the innermost frame of `file` that raised."""
    found: tuple[int | None, str | None] = (None, None)
    traceback = exc.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_filename.endswith(file):
            found = (traceback.tb_lineno, code.co_name)
        traceback = traceback.tb_next
    return found


def _looked_up(backend: object, looked_up: list[str], before: int) -> str:
    """The backend one call of the factory built, by name: the map key it looked up, else
    (a model's own path, ahead of the maps) the name the factory stamped on what it built;
    "None" for none."""
    if len(looked_up) > before:
        return looked_up[-1]
    if isinstance(backend, tuple):
        backend = backend[-1]
    if backend is None:
        return "None"
    return str(vars(backend).get("decode_attention_backend_str", "?"))


def _name(backend: object) -> str:
    """A built backend's class (a tuple: 0.5.23's `(phase name, backend)`), or "None"."""
    if isinstance(backend, tuple):
        backend = backend[-1]
    return "None" if backend is None else type(backend).__name__


def _profile(gpu: str) -> GpuProfile:
    try:
        return BUILD_PROFILES[gpu]
    except KeyError:
        known = ", ".join(BUILD_PROFILES)
        raise KeyError(f"unknown build profile {gpu!r}; known: {known}") from None


def registered(version: str) -> tuple[str, ...]:
    """The backend names the release's registry registers, in its order."""
    with BuildRuntime(source_root(version), BUILD_PROFILES["sm90"]) as runtime:
        return tuple(runtime.registry.ATTENTION_BACKENDS)


def cases(version: str) -> Iterator[BuildCase]:
    """The build grid of a release: every registered backend on MHA, MLA, an
    encoder-decoder and a hybrid GDN model, with and without speculative decoding."""
    models = ((False, False, False), (True, False, False), (False, True, False),
              (False, False, True))  # fmt: skip
    for backend in registered(version):
        for mla, encoder_decoder, hybrid_gdn in models:
            for speculative in (None, "EAGLE"):
                yield BuildCase(backend, mla, encoder_decoder, hybrid_gdn, speculative)


def run_grid(
    version: str, gpus: Iterable[str] = BUILD_PROFILES
) -> dict[tuple[str, BuildCase], BuildOutcome]:
    """SGLang `version`'s outcome for every case of its grid on every machine; cached beside
    the wheels, keyed on the wheel and the harness."""
    gpus = tuple(gpus)
    digest = harness_digest(version)
    digest.update(json.dumps(gpus).encode())
    cache = cache_dir() / f"build-{version}-{digest.hexdigest()[:16]}.json"
    if cache.is_file() and not os.environ.get(FRESH):
        rows = json.loads(cache.read_text())
        return {(gpu, BuildCase(**case)): BuildOutcome(**outcome) for gpu, case, outcome in rows}
    grid = tuple(cases(version))
    results: dict[tuple[str, BuildCase], BuildOutcome] = {}
    for gpu in gpus:
        with BuildRuntime(source_root(version), _profile(gpu)) as runtime:
            for case in grid:
                results[gpu, case] = runtime.build(case)
    rows = [
        (gpu, dataclasses.asdict(case), dataclasses.asdict(outcome))
        for (gpu, case), outcome in results.items()
    ]
    cache.write_text(json.dumps(rows))
    return results


def run_cases(
    version: str, profile: GpuProfile, wanted: Iterable[BuildCase]
) -> dict[BuildCase, BuildOutcome]:
    """SGLang `version`'s outcome for each of `wanted` on `profile` (not cached)."""
    with BuildRuntime(source_root(version), profile) as runtime:
        return {case: runtime.build(case) for case in dict.fromkeys(wanted)}


def draft_cases(version: str) -> Iterator[DraftCase]:
    """The draft grid of a release: every registered backend as the target's, on an MHA and
    an MLA model, with one draft step (no multi-step decode backend) and three; the draft
    inheriting it, or on its own backend (`--speculative-draft-attention-backend`, each
    registered one) with a draft model of the target's architecture or the other one (an
    EAGLE3 Llama draft on an MLA target); the draft of a QSA model (its config carries the
    indexer `parse_qsa_profile` reads) on each backend, inherited or the flag's."""
    backends = registered(version)
    for backend in backends:
        for mla in (False, True):
            for steps in (1, 3):
                yield DraftCase(backend, mla, steps)
                yield DraftCase(backend, mla, steps, draft_mla=not mla)
    # With the flag set the target's backend matters only for its own build: one that
    # builds for both architectures stands for them all.
    for draft in backends:
        for mla in (False, True):
            for draft_mla in (False, True):
                for steps in (1, 3):
                    yield DraftCase("triton", mla, steps, draft_backend=draft, draft_mla=draft_mla)
    # A QSA model's draft (the target's own model, its MTP layers): the factory reads the
    # draft runner's config, whatever the backend, inherited or the flag's.
    for backend in backends:
        for steps in (1, 3):
            yield DraftCase(backend, False, steps, qsa=True)
            yield DraftCase("triton", False, steps, draft_backend=backend, qsa=True)
    # Phases apart (triton prefill): `--speculative-attention-mode` picks the draft-extend
    # backend, unless the flag is set.
    for backend in backends:
        for mla in (False, True):
            for decode_mode in (False, True):
                yield DraftCase(backend, mla, 3, prefill="triton", decode_mode=decode_mode)
                yield DraftCase(backend, mla, 3, prefill="triton", decode_mode=decode_mode,
                                draft_backend="flashinfer")  # fmt: skip


def run_draft_grid(
    version: str, gpus: Iterable[str] = BUILD_PROFILES
) -> dict[tuple[str, DraftCase], BuildOutcome]:
    """SGLang `version`'s draft build for every case of its draft grid on every machine;
    cached beside the wheels, keyed on the wheel and the harness."""
    gpus = tuple(gpus)
    digest = harness_digest(version)
    digest.update(json.dumps(["draft", *gpus]).encode())
    cache = cache_dir() / f"draft-{version}-{digest.hexdigest()[:16]}.json"
    if cache.is_file() and not os.environ.get(FRESH):
        rows = json.loads(cache.read_text())
        return {(gpu, DraftCase(**case)): BuildOutcome(**outcome) for gpu, case, outcome in rows}
    grid = tuple(draft_cases(version))
    results: dict[tuple[str, DraftCase], BuildOutcome] = {}
    for gpu in gpus:
        with BuildRuntime(source_root(version), _profile(gpu)) as runtime:
            for case in grid:
                results[gpu, case] = runtime.build_draft(case)
    rows = [
        (gpu, dataclasses.asdict(case), dataclasses.asdict(outcome))
        for (gpu, case), outcome in results.items()
    ]
    cache.write_text(json.dumps(rows))
    return results


def run_draft_cases(
    version: str, profile: GpuProfile, wanted: Iterable[DraftCase]
) -> dict[DraftCase, BuildOutcome]:
    """SGLang `version`'s draft build for each of `wanted` on `profile` (not cached)."""
    with BuildRuntime(source_root(version), profile) as runtime:
        return {case: runtime.build_draft(case) for case in dict.fromkeys(wanted)}


# -- the draft's flag at start-up ----------------------------------------------------------
# What start-up makes of `--speculative-draft-attention-backend` before the draft's build
# reads it. Kept in this module, which start-up's cached outcomes are not keyed on
# (`dump._PRODUCT_SIDE`): it runs its own launches, not the grid's.
#
# SGLang's parser takes the flag as free text; start-up renames a deprecated name (0.5.12+)
# and, from 0.5.21, on SM100's native NVFP4 cache on trtllm_mha, sets an unset flag to
# trtllm_mha and refuses another. Each launch of `startup_launches` runs through the
# release's own argument parser and start-up (`ServerArgs` post-init, `resolve_once()` from
# 0.5.19) over the fake torch; the outcome is whether it refused, the draft's backend it
# resolved, and whether that name is one of the release's `--attention-backend` choices.

DRAFT_FLAG = "--speculative-draft-attention-backend"
STARTUP_GPUS = ("H200", "B200")
STARTUP_MODELS = ("Llama-3.1-8B", "DeepSeek-V3")
SPEC = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")  # fmt: skip
# The target's flags: SGLang's choice, a backend of each architecture, the native NVFP4
# cache on trtllm_mha (refused before 0.5.21's choices, as invalid input).
STARTUP_TARGETS = (
    (),
    ("--attention-backend", "triton"),
    ("--attention-backend", "trtllm_mha"),
    ("--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"),
)
STARTUP_DRAFTS = (None, "triton", "flashinfer", "trtllm_mha", "fa3", "compressed", "tokenspeed_mla")


def startup_launches() -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(gpu, model, argv) of every launch of the draft's start-up grid."""
    for gpu in STARTUP_GPUS:
        for model in STARTUP_MODELS:
            for target in STARTUP_TARGETS:
                for draft in STARTUP_DRAFTS:
                    flag = () if draft is None else (DRAFT_FLAG, draft)
                    yield gpu, model, (*SPEC, *target, *flag)


def draft_rows(version: str) -> list[dict[str, Any]]:
    """SGLang `version`'s start-up on every launch: refused (and why), else the draft's
    backend it resolved (None: it inherits the target's)."""
    rows = []
    for gpu in STARTUP_GPUS:
        with open_runtime(version, gpu) as runtime:
            inner = runtime._runtime
            known = runtime.choices("--attention-backend")
            for at, model, argv in startup_launches():
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
