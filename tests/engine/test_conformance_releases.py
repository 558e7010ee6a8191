"""The harness runs each release's own start-up code: facts that only that release has.

Every fact here is one the releases differ on (see each test), so a harness that loaded the
wrong release, or resolved a record the wrong way, fails them. Each test runs for the
releases COMPAT_CONFORMANCE_RELEASES selects (see conformance/releases.py) that the fact is
about, so CI fetches no other wheels than the suite's; `=all` runs every one.
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

SELECTED = releases.selected()
FA4 = ["--attention-backend", "fa4"]
TOPK4_ONLY = ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"]


def _source(version: str) -> Path:
    return require_source(version)


def _minor(version: str) -> int:
    return int(version.split(".")[2])


def _selected(low: int = 7, high: int = 23) -> list[str]:
    return [version for version in SELECTED if low <= _minor(version) <= high]


@pytest.mark.parametrize("version", SELECTED)
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


@pytest.mark.parametrize("version", SELECTED)
def test_fa4_serves_decode_from_0_5_8(version: str) -> None:
    refused = version == "0.5.7"
    _source(version)
    outcome = run_startup(version, "B200", "Llama-3.1-8B", FA4)
    assert outcome.refused is refused, outcome.error
    if not refused:
        assert (outcome.prefill_backend, outcome.decode_backend) == ("fa4", "fa4")


@pytest.mark.parametrize("version", SELECTED)
def test_fp4_kv_spellings_are_the_releases(version: str) -> None:
    # fp4_e2m1 until 0.5.20 (argparse rejects it from 0.5.21); nvfp4 & co. from 0.5.16.
    _source(version)
    rejected = _minor(version) >= 21
    outcome = run_startup(version, "B200", "Llama-3.1-8B", ["--kv-cache-dtype", "fp4_e2m1"])
    assert (outcome.error or "").startswith("argparse: ") is rejected
    assert ("fp4_e2m1" in grid.kv_dtypes(version)) is not rejected
    new = {"nvfp4", "fp4_mx_block16", "mxfp8"}
    assert (new <= set(grid.kv_dtypes(version))) is (_minor(version) >= 16)


_BACKEND_FACTS = {
    "0.5.7": ({"cutlass_mla", "nsa", "dual_chunk_flash_attn"}, {"tokenspeed_mla", "dsa"}),
    "0.5.8": ({"cutlass_mla", "nsa"}, {"tokenspeed_mla", "dsa"}),
    "0.5.11": ({"cutlass_mla", "nsa"}, {"tokenspeed_mla", "dsa"}),
    "0.5.12": ({"tokenspeed_mla", "dsv4", "compressed"}, {"dsa", "cutedsl_mla"}),
    "0.5.16": ({"dsa", "cutedsl_mla", "cutlass_mla"}, {"hpc_ops"}),
    "0.5.17": ({"hpc_ops", "dsa", "cutedsl_mla"}, {"minicpm_flashattn"}),
    "0.5.19": ({"minicpm_flashattn", "cutlass_mla"}, {"qsa"}),
    "0.5.20": ({"qsa"}, {"cutlass_mla", "dual_chunk_flash_attn"}),
    "0.5.21": ({"qsa"}, {"cutlass_mla", "llada2_cfg_flashinfer"}),
    "0.5.22": ({"llada2_cfg_flashinfer"}, {"cutlass_mla"}),
    "0.5.23": ({"llada2_cfg_flashinfer", "tokenspeed_mla"}, {"cutlass_mla"}),
}


@pytest.mark.parametrize("version", [v for v in SELECTED if v in _BACKEND_FACTS])
def test_backend_choices_are_the_releases(version: str) -> None:
    present, absent = _BACKEND_FACTS[version]
    _source(version)
    names = set(grid.backends(version))
    assert present <= names
    assert not absent & names
    with open_runtime(version, "CPU-AMX") as runtime:  # the parser agrees with the constant
        assert set(runtime.choices("--attention-backend")) >= names


@pytest.mark.parametrize("version", _selected(low=21))
def test_0_5_23_rewrites_tokenspeed_mla_to_cutedsl_mla(version: str) -> None:
    _source(version)
    argv = ["--attention-backend", "tokenspeed_mla", "--kv-cache-dtype", "fp8_e4m3"]
    outcome = run_startup(version, "B200", "DeepSeek-V3", argv)
    assert not outcome.refused, outcome.error
    phases = (outcome.prefill_backend, outcome.decode_backend)
    if version == "0.5.23":
        assert phases == ("trtllm_mla", "cutedsl_mla")
        assert any("tokenspeed_mla is deprecated" in warning for warning in outcome.warnings)
    else:
        assert phases == ("tokenspeed_mla", "tokenspeed_mla")
    # With speculation 0.5.23's alias also moves draft/verify to the decode phase.
    spec = run_startup(version, "B200", "DeepSeek-V3", [*argv, "--speculative-algorithm", "EAGLE"])
    assert not spec.refused, spec.error
    assert spec.speculative_attention_mode == ("decode" if version == "0.5.23" else "prefill")


@pytest.mark.parametrize("version", SELECTED)
def test_eagle_topk_without_steps_is_an_assertion(version: str) -> None:
    # SGLang auto-picks steps/topk/drafts only when all three are unset: a bare assert.
    _source(version)
    outcome = run_startup(version, "B200", "Llama-3.1-8B", TOPK4_ONLY)
    assert outcome.refused
    assert outcome.error == "AssertionError: "


@pytest.mark.parametrize("version", _selected(low=19))
def test_from_0_5_19_resolve_once_resolves_and_the_fields_stay_raw(version: str) -> None:
    _source(version)
    with open_runtime(version, "B200") as runtime:
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


@pytest.mark.parametrize("version", _selected(high=18))
def test_up_to_0_5_18_construction_resolves(version: str) -> None:
    _source(version)
    with open_runtime(version, "B200") as runtime:
        assert not hasattr(runtime.ServerArgs, "resolve_once")
        resolved = runtime.server_args("Llama-3.1-8B", [])
        assert (resolved.attention_backend, resolved.page_size) == ("trtllm_mha", 64)
        raw = runtime.raw_server_args("Llama-3.1-8B", [])
        assert raw.attention_backend is None and raw.page_size is None


# The plugin framework arrived in 0.5.11; those three releases always, plus the selected.
@pytest.mark.parametrize("version", sorted({"0.5.11", "0.5.16", "0.5.23", *_selected(low=11)}))
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


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", releases.DEFAULT_RELEASES),
        ("all", tuple(f"0.5.{minor}" for minor in range(7, 24))),
        ("0.5.9, 0.5.19", ("0.5.9", "0.5.19")),
    ],
)
def test_the_release_selection(value: str, expected: tuple[str, ...]) -> None:
    assert releases.selected(value) == expected


def test_an_unknown_release_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown release 0\.5\.99; use 'all' or some of 0\.5\.7"):
        releases.selected("0.5.8,0.5.99")
