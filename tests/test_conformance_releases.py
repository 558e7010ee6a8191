"""The harness runs each release's own start-up code: facts that only that release has.

Every fact here is one the releases differ on (see each test), so a harness that loaded the
wrong release, or resolved a record the wrong way, fails them.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from conformance import grid, releases
from conformance.availability import require_source
from conformance.harness import open_runtime, run_startup

FA4 = ["--attention-backend", "fa4"]
TOPK4_ONLY = ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"]


def _source(version: str) -> Path:
    return require_source(version)


@pytest.mark.parametrize("version", releases.ALL_RELEASES)
def test_the_code_that_runs_is_the_releases_own(version: str) -> None:
    source = _source(version)
    with open_runtime(version, "B200") as runtime:
        assert Path(inspect.getsourcefile(runtime.ServerArgs) or "").is_relative_to(source)
        outcome = runtime.outcome("Llama-3.1-8B", [])
    assert not outcome.refused, outcome.error
    # sm100 MHA without flags: trtllm_mha and its page snap, in every release.
    assert (outcome.prefill_backend, outcome.decode_backend, outcome.page_size) == (
        "trtllm_mha",
        "trtllm_mha",
        64,
    )


@pytest.mark.parametrize(("version", "refused"), [("0.5.7", True), ("0.5.8", False)])
def test_fa4_serves_decode_from_0_5_8(version: str, refused: bool) -> None:
    _source(version)
    outcome = run_startup(version, "B200", "Llama-3.1-8B", FA4)
    assert outcome.refused is refused, outcome.error
    if not refused:
        assert (outcome.prefill_backend, outcome.decode_backend) == ("fa4", "fa4")


@pytest.mark.parametrize(("version", "rejected"), [("0.5.20", False), ("0.5.21", True)])
def test_fp4_e2m1_leaves_the_choices_in_0_5_21(version: str, rejected: bool) -> None:
    _source(version)
    outcome = run_startup(version, "B200", "Llama-3.1-8B", ["--kv-cache-dtype", "fp4_e2m1"])
    assert (outcome.error or "").startswith("argparse: ") is rejected
    assert ("fp4_e2m1" in grid.kv_dtypes(version)) is not rejected
    assert {"nvfp4", "fp4_mx_block16", "mxfp8"} <= set(grid.kv_dtypes(version))


def test_kv_dtypes_before_0_5_16_have_no_new_fp4_names() -> None:
    _source("0.5.15")
    assert set(grid.kv_dtypes("0.5.15")) == {
        *("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"),
    }


@pytest.mark.parametrize(
    ("version", "present", "absent"),
    [
        ("0.5.11", {"cutlass_mla", "nsa"}, {"tokenspeed_mla", "dsa"}),
        ("0.5.12", {"tokenspeed_mla", "dsv4", "compressed"}, {"dsa", "cutedsl_mla"}),
        ("0.5.17", {"hpc_ops", "dsa", "cutedsl_mla"}, {"minicpm_flashattn"}),
        ("0.5.20", {"qsa"}, {"cutlass_mla", "dual_chunk_flash_attn"}),
        ("0.5.22", {"llada2_cfg_flashinfer"}, {"cutlass_mla"}),
    ],
)
def test_backend_choices_are_the_releases(
    version: str, present: set[str], absent: set[str]
) -> None:
    _source(version)
    names = set(grid.backends(version))
    assert present <= names
    assert not absent & names
    with open_runtime(version, "CPU-AMX") as runtime:  # the parser agrees with the constant
        assert set(runtime.choices("--attention-backend")) >= names


def test_0_5_23_rewrites_tokenspeed_mla_to_cutedsl_mla() -> None:
    _source("0.5.23")
    argv = ["--attention-backend", "tokenspeed_mla"]
    outcome = run_startup("0.5.23", "B200", "DeepSeek-V3", argv)
    assert not outcome.refused, outcome.error
    assert (outcome.prefill_backend, outcome.decode_backend) == ("trtllm_mla", "cutedsl_mla")
    assert outcome.kv_cache_dtype == "fp8_e4m3"
    assert any("tokenspeed_mla is deprecated" in warning for warning in outcome.warnings)
    _source("0.5.22")
    before = run_startup("0.5.22", "B200", "DeepSeek-V3", [*argv, "--kv-cache-dtype", "fp8_e4m3"])
    assert (before.prefill_backend, before.decode_backend) == ("tokenspeed_mla", "tokenspeed_mla")


@pytest.mark.parametrize("version", ["0.5.7", "0.5.14", "0.5.23"])
def test_eagle_topk_without_steps_is_an_assertion(version: str) -> None:
    # SGLang auto-picks steps/topk/drafts only when all three are unset: a bare assert.
    _source(version)
    outcome = run_startup(version, "B200", "Llama-3.1-8B", TOPK4_ONLY)
    assert outcome.refused
    assert outcome.error == "AssertionError: "


def test_0_5_19_resolves_once_and_keeps_the_raw_fields() -> None:
    _source("0.5.19")
    with open_runtime("0.5.19", "B200") as runtime:
        raw = runtime.raw_server_args("Llama-3.1-8B", [])
        assert raw.attention_backend is None and raw.page_size is None  # construction: raw
        assert not getattr(raw, "_resolution_finished", False)
        resolved = runtime.server_args("Llama-3.1-8B", [])
        assert resolved.attention_backend is None  # the field keeps the raw input ...
        values = resolved.resolved_dict()  # ... what resolution decided is declared
        assert (values["attention_backend"], values["page_size"]) == ("trtllm_mha", 64)
        overrides = importlib.import_module("sglang.srt.arg_groups.overrides")
        assert overrides.resolution_result(resolved, "attention_backend") == "trtllm_mha"
        resolved.resolve_once()  # a second call is a no-op
        assert resolved.resolved_dict()["page_size"] == 64


def test_0_5_18_resolves_at_construction() -> None:
    _source("0.5.18")
    with open_runtime("0.5.18", "B200") as runtime:
        assert not hasattr(runtime.ServerArgs, "resolve_once")
        resolved = runtime.server_args("Llama-3.1-8B", [])
        assert (resolved.attention_backend, resolved.page_size) == ("trtllm_mha", 64)
        raw = runtime.raw_server_args("Llama-3.1-8B", [])
        assert raw.attention_backend is None


@pytest.mark.parametrize("version", ["0.5.11", "0.5.16", "0.5.23"])
def test_an_after_hook_from_the_releases_plugin_registry_fires(version: str) -> None:
    _source(version)
    with open_runtime(version, "B200") as runtime:
        plugins = importlib.import_module("sglang.srt.plugins")
        registry = importlib.import_module("sglang.srt.plugins.hook_registry")
        assert callable(plugins.load_plugins)
        method = "resolve_once" if hasattr(runtime.ServerArgs, "resolve_once") else "__post_init__"
        seen: list[Any] = []

        def after(result: Any, server_args: Any, *args: Any, **kwargs: Any) -> None:
            seen.append(runtime.resolved(server_args)[1])  # the prefill backend it resolved

        target = f"sglang.srt.server_args.ServerArgs.{method}"
        registry.HookRegistry.register(target, after, registry.HookType.AFTER)
        registry.HookRegistry.apply_hooks()
        outcome = runtime.outcome("Llama-3.1-8B", [])
    assert not outcome.refused, outcome.error
    assert seen == ["trtllm_mha"]
