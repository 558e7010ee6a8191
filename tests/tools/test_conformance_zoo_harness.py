"""The zoo harness: SGLang's own config loader and ModelConfig decide the model facts.

Each model fact below (MLA, multimodal, encoder-decoder, attention sinks, KV heads per TP
rank, the architecture SGLang substitutes) is read off the ModelConfig that the release's
own code builds from the published config.json, over the transformers that release pins;
none is restated by the harness.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conformance import hf_configs, hf_standin, stubs, zoo, zoo_runtime
from conformance.availability import require_source
from conformance.harness import Launch, open_runtime, run_many
from conformance.wheel import WheelUnavailableError

from compat.inputs.zoo import ZOO, ZOO_MODELS

OLDEST, NEWEST = "0.5.7", "0.5.23"


def _require(version: str) -> Path:
    root = require_source(version)
    try:
        zoo_runtime.prepare(version)
    except WheelUnavailableError as exc:
        pytest.skip(str(exc))
    return root


@pytest.fixture(scope="module", params=[OLDEST, NEWEST])
def release(request: pytest.FixtureRequest) -> str:
    _require(request.param)
    return str(request.param)


@functools.cache
def _facts(version: str) -> dict[str, dict[str, Any]]:
    """Per zoo model, what SGLang `version`'s own ModelConfig says (one runtime)."""
    found: dict[str, dict[str, Any]] = {}
    with open_runtime(version, "H200", zoo=True) as runtime:
        for model in ZOO:
            try:
                config = zoo_runtime.model_config(runtime, model, ZOO[model].launch)
            except ValueError as error:  # a model type the release's loader cannot read
                found[model] = {"refused": str(error)}
                continue
            # Read everything inside: the runtime's modules are gone once it closes.
            found[model] = {
                "arch": config.attention_arch.name,
                "architecture": config.hf_config.architectures[0],
                "model_type": config.hf_config.model_type,
                "multimodal": config.is_multimodal,
                "encoder_decoder": config.is_encoder_decoder,
                "sinks": getattr(config, "has_attention_sinks", None),
                "kv_heads": {tp: config.get_num_kv_heads(tp) for tp in (1, 4, 8)},
                "config_class": type(config.hf_config).__name__,
                "config_file": inspect.getsourcefile(type(config.hf_config)),
            }
    return found


def _model_config(version: str, model: str) -> dict[str, Any]:
    return _facts(version)[model]


@pytest.mark.parametrize("model", ["DeepSeek-V3.2-Exp", "Kimi-K2-Instruct"])
def test_sglang_says_mla_for_deepseek_style_models(release: str, model: str) -> None:
    facts = _model_config(release, model)
    assert facts["arch"] == "MLA"
    assert _model_config(release, "Qwen3-8B")["arch"] == "MHA"


def test_multimodal_and_encoder_decoder_come_from_the_architecture(release: str) -> None:
    vision = _model_config(release, "Llama-3.2-11B-Vision")
    # The published config has no is_encoder_decoder flag: SGLang decides by architecture.
    assert "is_encoder_decoder" not in ZOO_MODELS["Llama-3.2-11B-Vision"]
    assert vision["encoder_decoder"] is True
    assert vision["multimodal"] is True
    qwen_vl = _model_config(release, "Qwen2.5-VL-7B")
    assert (qwen_vl["multimodal"], qwen_vl["encoder_decoder"]) == (True, False)
    text = _model_config(release, "Qwen3-8B")
    assert (text["multimodal"], text["encoder_decoder"]) == (False, False)


def test_a_model_type_newer_than_the_releases_transformers_is_refused() -> None:
    _require(OLDEST)
    _require(NEWEST)
    # Qwen3.5 (model type qwen3_5) is unknown to 0.5.7's transformers 4.57.1.
    assert "qwen3_5" in _model_config(OLDEST, "Qwen3.5-0.8B")["refused"]
    new = _model_config(NEWEST, "Qwen3.5-0.8B")
    assert (new["architecture"], new["arch"]) == ("Qwen3_5ForConditionalGeneration", "MHA")


def test_gpt_oss_has_attention_sinks_from_0_5_11() -> None:
    _require(NEWEST)
    assert _model_config(NEWEST, "gpt-oss-120b")["sinks"] is True
    assert _model_config(NEWEST, "Qwen3-8B")["sinks"] is False


def test_kv_heads_per_tp_rank_are_sglangs(release: str) -> None:
    # Kimi-K2's 64 heads: 16 per rank at TP 4, the count SGLang's ROCm MLA default keys on.
    assert _model_config(release, "Kimi-K2-Instruct")["kv_heads"] == {1: 64, 4: 16, 8: 8}
    assert _model_config(release, "Qwen3-8B")["kv_heads"] == {1: 8, 4: 2, 8: 1}


def test_0_5_7_reloads_deepseek_v32_as_deepseek_v3() -> None:
    _require(OLDEST)
    _require(NEWEST)
    # transformers 4.57.1 (pinned by 0.5.7) does not know deepseek_v32: SGLang's own
    # fallback rewrites the config to DeepseekV3; 0.5.23's transformers knows it.
    assert hf_configs.pinned_transformers(OLDEST) == "4.57.1"
    known = hf_configs.transformers_facts("4.57.1").model_types
    assert "deepseek_v32" not in known and "deepseek_v3" in known
    old = _model_config(OLDEST, "DeepSeek-V3.2-Exp")
    assert (old["architecture"], old["model_type"]) == ("DeepseekV3ForCausalLM", "deepseek_v3")
    new = _model_config(NEWEST, "DeepSeek-V3.2-Exp")
    assert new["architecture"] == "DeepseekV32ForCausalLM"


def test_the_stand_in_refuses_unknown_types_as_transformers_does(tmp_path: Path) -> None:
    root = _require(OLDEST)
    world = hf_standin.HfWorld("4.57.1", root)
    (tmp_path / "config.json").write_text('{"model_type": "deepseek_v32"}')
    with pytest.raises(ValueError, match="model type `deepseek_v32` but Transformers does not"):
        world.auto_config.from_pretrained(str(tmp_path))
    remote_code = '{"model_type": "kimi_k2", "auto_map": {"AutoConfig": "c.K"}}'
    (tmp_path / "config.json").write_text(remote_code)
    with pytest.raises(ValueError, match="custom code"):
        world.auto_config.from_pretrained(str(tmp_path), trust_remote_code=False)
    remote = world.auto_config.from_pretrained(str(tmp_path), trust_remote_code=True)
    assert type(remote).__name__ == "K" and remote.model_type == "kimi_k2"
    with pytest.raises(ValueError, match="already used by a Transformers config"):
        world.auto_config.register("llama", type("X", (world.base,), {"model_type": "llama"}))


def test_config_classes_sglang_registers_are_its_own(release: str) -> None:
    facts = _model_config(release, "Qwen3-Next-80B-A3B")
    # The class is SGLang's, defined by the wheel's own source file.
    assert facts["config_class"] == "Qwen3NextConfig"
    assert facts["config_file"] is not None
    assert Path(facts["config_file"]).is_relative_to(require_source(release))


def test_kimi_k2_needs_remote_code_until_sglang_registers_kimi_k2() -> None:
    _require(OLDEST)
    _require(NEWEST)
    with open_runtime(OLDEST, "B200", zoo=True) as runtime:
        refused = runtime.outcome("Kimi-K2-Instruct", [])
    assert refused.refused and refused.error is not None
    assert "trust_remote_code=True" in refused.error
    with open_runtime(NEWEST, "B200", zoo=True) as runtime:
        started = runtime.outcome("Kimi-K2-Instruct", [])
    assert not started.refused
    assert (started.prefill_backend, started.page_size) == ("trtllm_mla", 64)


@pytest.mark.parametrize(
    ("version", "gpu", "model", "argv", "expected"),
    [
        # Kimi-K2 on MI300X: the MLA default reads the KV heads per TP rank (64, 16).
        (NEWEST, "MI300X", "Kimi-K2-Instruct", (), ("triton", "triton", 1)),
        (NEWEST, "MI300X", "Kimi-K2-Instruct", ("--tp-size", "4"), ("aiter", "aiter", 1)),
        # Qwen3-Next on B200: triton page 1, whatever --page-size says.
        (NEWEST, "B200", "Qwen3-Next-80B-A3B", ("--page-size", "64"), ("triton", "triton", 1)),
        # DeepSeek-V3.2 on 0.5.7 (loaded as DeepseekV3): the DSA branch, nsa at page 64.
        (OLDEST, "B200", "DeepSeek-V3.2-Exp", (), ("nsa", "nsa", 64)),
        # Deterministic inference picks its own default from 0.5.16 (flashinfer on B200).
        ("0.5.16", "B200", "Qwen3-8B", ("--enable-deterministic-inference",),
         ("flashinfer", "flashinfer", 1)),
    ],
)  # fmt: skip
def test_resolutions_from_the_issue(
    version: str, gpu: str, model: str, argv: tuple[str, ...], expected: tuple[object, ...]
) -> None:
    _require(version)
    with open_runtime(version, gpu, zoo=True) as runtime:
        outcome = runtime.outcome(model, [*ZOO[model].launch, *argv])
    assert not outcome.refused, outcome.error
    assert (outcome.prefill_backend, outcome.decode_backend, outcome.page_size) == expected


@pytest.mark.parametrize(
    ("version", "gpu", "model", "argv", "message", "function"),
    [
        (OLDEST, "H200", "gpt-oss-120b", ("--attention-backend", "flashinfer"),
         "GptOssForCausalLM requires one of", "_handle_model_specific_adjustments"),
        (NEWEST, "H200", "gpt-oss-120b", ("--attention-backend", "flashinfer"),
         "GptOssForCausalLM requires one of", "handle_model_specific_adjustments"),
        # The DSA branch asks torch.cuda for the capability: no CUDA, no start.
        (OLDEST, "CPU-AMX", "DeepSeek-V3.2-Exp", (),
         "NVIDIA driver", "_handle_model_specific_adjustments"),
        # Qwen3-Next's own triton default meets the NVFP4 prefill rule of 0.5.21+.
        (NEWEST, "B200", "Qwen3-Next-80B-A3B", ("--kv-cache-dtype", "nvfp4"),
         "backend 'triton' provides neither", "handle_nvfp4_prefill_kv_dequant_dtype"),
    ],
)  # fmt: skip
def test_refusals_name_sglangs_raising_line(
    version: str, gpu: str, model: str, argv: tuple[str, ...], message: str, function: str
) -> None:
    root = _require(version)
    with open_runtime(version, gpu, zoo=True) as runtime:
        outcome = runtime.outcome(model, [*ZOO[model].launch, *argv])
    assert outcome.refused
    assert outcome.error is not None and message in outcome.error
    assert outcome.raised_at is not None
    location, _, where = outcome.raised_at.partition(" (")
    file, _, line = location.rpartition(":")
    assert (root / file).is_file() and int(line) > 0
    if function:
        assert where == f"{function})"


def test_each_launch_reads_a_fresh_config() -> None:
    _require(OLDEST)
    with open_runtime(OLDEST, "H200", zoo=True) as runtime:
        first = runtime.server_args("Qwen3-8B", []).get_model_config().hf_config
        second = runtime.server_args("Qwen3-8B", []).get_model_config().hf_config
        assert first is not second  # SGLang's get_config memo is cleared between launches


def test_nothing_leaks_out_of_the_zoo_runtime() -> None:
    _require(OLDEST)
    before = {name: sys.modules.get(name) for name in ("torch", "transformers", "regex")}
    with open_runtime(OLDEST, "H200", zoo=True) as runtime:
        runtime.outcome("Nemotron-Nano-9B-v2", ["--trust-remote-code"])  # imports "regex"
        assert sys.modules.get("regex") is not None
    assert {name: sys.modules.get(name) for name in before} == before
    assert not [name for name in sys.modules if name.split(".")[0] == "sglang"]


def test_worker_processes_match_in_process_runs() -> None:
    _require(NEWEST)
    launches = [
        Launch("MI300X", "Kimi-K2-Instruct", ("--trust-remote-code", "--tp-size", "4")),
        Launch("B200", "gpt-oss-120b", ("--attention-backend", "flashinfer")),
        Launch("CPU-AMX", "DeepSeek-V3.2-Exp", ()),
    ]
    expected = []
    for launch in launches:
        with open_runtime(NEWEST, launch.gpu, zoo=True) as runtime:
            expected.append(runtime.outcome(launch.model, list(launch.argv)))
    assert run_many(NEWEST, launches, workers=2, zoo=True) == expected


def test_unmodelled_quantization_overrides_fail_loudly() -> None:
    method = zoo_runtime._quantization_method("gptq")
    assert method.override_quantization_method({"quant_method": "fp8"}, None) is None
    before = len(stubs.USES)
    with pytest.raises(stubs.StubUsedError):
        method.override_quantization_method({"quant_method": "gptq"}, None)
    assert len(stubs.USES) == before + 1


def test_zoo_grid_spans_models_machines_and_axes() -> None:
    _require(NEWEST)
    pairs = list(zoo.labelled(NEWEST))
    launches = [launch for launch, _ in pairs]
    # The zoo's cost in CI grows with its checkpoints, not faster: about 150 launches each
    # (the sub-backend flags, with and without --mamba-ssm-dtype, and the Mamba cache
    # strategies run only on the models that have those parts).
    assert 100 * len(ZOO) <= len(launches) <= 160 * len(ZOO)
    assert len(set(launches)) == len(launches)
    assert {launch.model for launch in launches} == set(ZOO)
    assert {launch.gpu for launch in launches} == set(zoo.MACHINES)
    assert len({ZOO[name].config["architectures"][0] for name in ZOO}) >= 15
    flat = Counter(" ".join(launch.argv) for launch in launches)
    for flag in (
        "--enable-deterministic-inference", "--tp-size 4", "--tp-size 8",
        "--dp-size 2 --enable-dp-attention", "--device cpu", "--quantization modelopt_fp4",
        "--disaggregation-mode prefill", "--disaggregation-mode decode",
        "--kv-cache-dtype nvfp4", "--kv-cache-dtype fp8_e4m3", "--page-size 64",
        "--speculative-algorithm NEXTN", "--speculative-eagle-topk 1",
    ):  # fmt: skip
        assert any(flag in argv for argv in flat), flag
    labels = Counter(label for _, label in pairs)
    assert labels["plain"] == len(ZOO) * len(zoo.MACHINES)
    # The whitelist edges: gpt-oss meets flashinfer, Llama-3.2-Vision meets triton.
    tried = {(launch.model, " ".join(launch.argv)) for launch in launches}
    assert ("gpt-oss-120b", "--attention-backend flashinfer") in tried
    assert ("Llama-3.2-11B-Vision", "--attention-backend triton") in tried


def test_zoo_kv_dtypes_follow_the_releases_spelling() -> None:
    _require(OLDEST)
    _require(NEWEST)
    assert zoo.kv_values(OLDEST) == ("fp8_e4m3", "fp4_e2m1")
    assert zoo.kv_values(NEWEST) == ("fp8_e4m3", "nvfp4")
