"""SGLang's model-specific start-up rules, one behaviour each, release by release.

The zoo conformance suite (test_conformance_zoo.py) proves every rule against the releases'
own code; these tests pin each rule's behaviour where it changes, without the wheels, so a
wrong edit of a release file fails here with a readable message.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.guard.report import Enforcement, Report

H200 = {"platform": "cuda", "compute_capability": (9, 0)}
B200 = {"platform": "cuda", "compute_capability": (10, 0)}
A100 = {"platform": "cuda", "compute_capability": (8, 0)}
MI300X = {"platform": "rocm"}
AMX_CPU = {"platform": "cpu"}
GPT_OSS = {
    "attention_arch": "mha",
    "model_architecture": "GptOssForCausalLM",
    "model_type": "gpt_oss",
    "checkpoint_quantization": "mxfp4",
}
LLAMA4 = {"attention_arch": "mha", "model_architecture": "Llama4ForConditionalGeneration"}
QWEN3 = {"attention_arch": "mha", "model_architecture": "Qwen3ForCausalLM"}
QWEN3_NEXT = {"attention_arch": "mha", "model_architecture": "Qwen3NextForCausalLM"}
QWEN3_5 = {"attention_arch": "mha", "model_architecture": "Qwen3_5ForConditionalGeneration"}
NEMOTRON_H = {"attention_arch": "mha", "model_architecture": "NemotronHForCausalLM"}
KIMI_K2 = {
    "attention_arch": "mla",
    "model_architecture": "DeepseekV3ForCausalLM",
    "model_type": "kimi_k2",
    "remote_code": True,
    "kv_heads": 64,
    "checkpoint_quantization": "fp8",
}
DEEPSEEK_V32 = {
    "attention_arch": "mla",
    "model_architecture": "DeepseekV32ForCausalLM",
    "model_type": "deepseek_v32",
    "sparse_attention": True,
    "kv_heads": 128,
    "checkpoint_quantization": "fp8",
}


def run(release: str, machine: dict[str, Any], model: dict[str, Any], **flags: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **machine, **model, **flags))


def rules_of(report: Report) -> set[str]:
    return {f.rule for f in report.startup_reasons}


def runs(report: Report) -> tuple[str | None, str | None, int]:
    assert not report.refused_at_startup, [f.message for f in report.startup_reasons]
    resolved = report.resolved
    return resolved.prefill_backend, resolved.decode_backend, resolved.page_size


# -- GPT-OSS: its own default and its list, on the resolved phases --------------------------


@pytest.mark.parametrize("release", ["0.5.7", "0.5.23"])
@pytest.mark.parametrize("machine", [H200, B200])
def test_gpt_oss_refuses_flashinfer_and_names_its_list(
    release: str, machine: dict[str, Any]
) -> None:
    report = run(release, machine, GPT_OSS, attention_backend="flashinfer")
    assert rules_of(report) == {"startup-gpt-oss-backends"}
    message = report.startup_reasons[0].message
    assert message.startswith(f"SGLang {release} refuses to start: it allows only triton, ")
    assert "for GptOssForCausalLM" in message and "got flashinfer" in message
    where = "model_hook.py" if release == "0.5.23" else "_handle_model_specific_adjustments"
    assert where in message


def test_gpt_oss_defaults_per_machine_and_a_phase_flag_is_checked_too() -> None:
    assert runs(run("0.5.7", H200, GPT_OSS)) == ("fa3", "fa3", 1)
    assert runs(run("0.5.7", B200, GPT_OSS)) == ("trtllm_mha", "trtllm_mha", 64)
    pair = run("0.5.23", H200, GPT_OSS, prefill_attention_backend="fa3",
               decode_attention_backend="flashinfer")  # fmt: skip
    assert rules_of(pair) == {"startup-gpt-oss-backends"}


def test_gpt_oss_mxfp4_checkpoint_needs_a_machine_that_registers_it() -> None:
    assert "startup-quantization-unregistered" in rules_of(run("0.5.23", MI300X, GPT_OSS))
    assert "startup-quantization-unregistered" in rules_of(run("0.5.13", AMX_CPU, GPT_OSS))
    assert runs(run("0.5.14", AMX_CPU, GPT_OSS)) == ("intel_amx", "intel_amx", 1)
    mismatch = run("0.5.23", H200, GPT_OSS, quantization="fp8")
    assert rules_of(mismatch) == {"startup-quantization-mismatch"}


def test_gpt_oss_on_a_gpu_hosts_cpu_meets_its_list_then_the_amx_fallback() -> None:
    assert rules_of(run("0.5.12", H200, GPT_OSS, device="cpu")) == {"startup-gpt-oss-backends"}
    report = run("0.5.13", H200, GPT_OSS, device="cpu")
    assert runs(report) == ("torch_native", "torch_native", 1)
    assert "startup-intel-amx-fallback" in {f.rule for f in report.findings}


# -- Llama 4: its list reads --attention-backend only ----------------------------------------


def test_llama4_checks_the_attention_backend_field_only() -> None:
    assert rules_of(run("0.5.7", H200, LLAMA4, attention_backend="flashinfer")) == {
        "startup-llama4-backends"
    }
    escaped = run("0.5.7", H200, LLAMA4, prefill_attention_backend="fa3",
                  decode_attention_backend="flashinfer")  # fmt: skip
    assert runs(escaped) == ("fa3", "flashinfer", 1)
    # Skipped under --device cpu: the CPU's own default runs.
    assert runs(run("0.5.23", H200, LLAMA4, device="cpu"))[0] == "torch_native"


# -- deterministic inference ------------------------------------------------------------------


def test_deterministic_inference_judges_the_default_then_picks_its_own() -> None:
    old = run("0.5.7", B200, QWEN3, enable_deterministic_inference=True)
    assert rules_of(old) == {"startup-deterministic-backends"}
    assert "not trtllm_mha" in old.startup_reasons[0].message
    assert runs(run("0.5.12", B200, QWEN3, enable_deterministic_inference=True)) == (
        "flashinfer", "flashinfer", 1)  # fmt: skip
    assert runs(run("0.5.23", MI300X, QWEN3, enable_deterministic_inference=True))[0] == "fa3"
    explicit = run("0.5.23", B200, QWEN3, enable_deterministic_inference=True,
                   attention_backend="trtllm_mha")  # fmt: skip
    assert rules_of(explicit) == {"startup-deterministic-backends"}


# -- parallelism ------------------------------------------------------------------------------


@pytest.mark.parametrize(("tp", "backend"), [(1, "triton"), (4, "aiter"), (8, "triton")])
def test_rocm_mla_default_reads_kv_heads_per_tp_rank(tp: int, backend: str) -> None:
    report = run("0.5.23", MI300X, KIMI_K2, tp_size=tp, trust_remote_code=True)
    assert runs(report)[0] == backend


def test_dp_attention_needs_tp_a_multiple_of_dp() -> None:
    refused = run("0.5.23", H200, QWEN3, dp_size=2, enable_dp_attention=True)
    assert rules_of(refused) == {"startup-dp-attention-size"}
    assert not run("0.5.23", H200, QWEN3, dp_size=2, enable_dp_attention=True,
                   tp_size=4).refused_at_startup  # fmt: skip


# -- the model loader: model types, remote code, the DeepSeek V3.2 reload ---------------------


def test_remote_code_needs_trust_until_sglang_knows_the_type() -> None:
    assert rules_of(run("0.5.11", H200, KIMI_K2)) == {"startup-remote-code"}
    assert not run("0.5.11", H200, KIMI_K2, trust_remote_code=True).refused_at_startup
    assert not run("0.5.12", H200, KIMI_K2).refused_at_startup  # SGLang's kimi_k2 alias
    unknown = run("0.5.23", H200, {**QWEN3, "model_type": "no_such_type"})
    assert rules_of(unknown) == {"startup-model-type"}


def test_deepseek_v32_on_0_5_7_is_reloaded_as_deepseek_v3_and_runs_dsa() -> None:
    report = run("0.5.7", H200, DEEPSEEK_V32)
    assert runs(report) == ("nsa", "nsa", 64)
    assert report.resolved.kv_dtype.value == "bf16"
    assert "startup-model-reloaded" in {f.rule for f in report.findings}
    fp4 = run("0.5.7", B200, DEEPSEEK_V32, kv_cache_dtype="fp4_e2m1")
    assert "startup-dsa-backend" in rules_of(fp4)
    # DSA asks torch.cuda for the GPU: a CPU-only machine fails, whatever the device.
    assert "startup-dsa-backend" in rules_of(run("0.5.23", AMX_CPU, DEEPSEEK_V32))


# -- hybrid linear attention (Mamba cache) ----------------------------------------------------


def test_qwen3_next_page_and_platform_rules_move_with_the_releases() -> None:
    assert runs(run("0.5.10", B200, QWEN3_NEXT, page_size=64)) == ("triton", "triton", 64)
    assert runs(run("0.5.11", B200, QWEN3_NEXT, page_size=64)) == ("triton", "triton", 1)
    assert runs(run("0.5.23", B200, QWEN3_NEXT, page_size=64)) == ("triton", "triton", 1)
    assert rules_of(run("0.5.14", MI300X, QWEN3_NEXT)) == {"startup-mamba-cache-platform"}
    assert runs(run("0.5.16", MI300X, QWEN3_NEXT))[0] == "aiter"
    assert rules_of(run("0.5.23", B200, QWEN3_NEXT, kv_cache_dtype="nvfp4")) == {
        "startup-nvfp4-backends"
    }


EXTRA_BUFFER = {"mamba_scheduler_strategy": "extra_buffer"}
NEXTN_ONE_TOKEN = {
    "speculative_algorithm": "NEXTN",
    "speculative_num_steps": 1,
    "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 1,
}


@pytest.mark.parametrize("release", ["0.5.10", "0.5.12", "0.5.13"])
def test_an_asked_for_extra_buffer_keeps_the_radix_cache_with_speculation(release: str) -> None:
    # Field report sglang-28312: Qwen3.5 with NEXTN and extra_buffer served on 0.5.13.
    flags = {"attention_backend": "triton", **NEXTN_ONE_TOKEN}
    refused = run(release, B200, QWEN3_5, **flags)
    assert rules_of(refused) == {"startup-mamba-cache-speculation"}
    assert runs(run(release, B200, QWEN3_5, **flags, **EXTRA_BUFFER))[:2] == ("triton", "triton")


def test_an_asked_for_extra_buffer_skips_no_buffers_page_size_one() -> None:
    assert runs(run("0.5.12", H200, QWEN3_NEXT, page_size=64))[2] == 1
    assert runs(run("0.5.12", H200, QWEN3_NEXT, page_size=64, **EXTRA_BUFFER))[2] == 64
    # On SM100 the cache can page, so Qwen3-Next keeps the default decision's trtllm_mha.
    assert runs(run("0.5.13", B200, QWEN3_NEXT, **EXTRA_BUFFER)) == ("trtllm_mha", "trtllm_mha", 64)


def test_extra_buffer_needs_a_model_that_has_it_and_a_machine_for_its_kernels() -> None:
    assert rules_of(run("0.5.12", H200, NEMOTRON_H, **EXTRA_BUFFER)) == {
        "startup-mamba-cache-strategy"
    }
    assert not run("0.5.13", H200, NEMOTRON_H, **EXTRA_BUFFER).refused_at_startup
    assert rules_of(run("0.5.13", MI300X, QWEN3_NEXT, **EXTRA_BUFFER)) == {
        "startup-mamba-cache-platform"
    }
    # 0.5.8 checks an asked-for extra_buffer only in the GLM-4 MoE branch.
    assert not run("0.5.8", MI300X, QWEN3_NEXT, **EXTRA_BUFFER).refused_at_startup


def test_extra_buffer_pages_divide_the_track_interval_and_up_to_0_5_8_the_fla_chunk() -> None:
    interval = "startup-mamba-cache-interval"
    assert rules_of(run("0.5.7", H200, QWEN3_NEXT, page_size=128, **EXTRA_BUFFER)) == {interval}
    assert runs(run("0.5.9", H200, QWEN3_NEXT, page_size=128, **EXTRA_BUFFER))[2] == 128
    assert rules_of(run("0.5.9", H200, QWEN3_NEXT, page_size=512, **EXTRA_BUFFER)) == {interval}


def test_from_0_5_14_an_asked_for_no_buffer_meets_the_overlap_schedule() -> None:
    no_buffer = {"mamba_scheduler_strategy": "no_buffer"}
    assert not run("0.5.13", H200, QWEN3_NEXT, **no_buffer).refused_at_startup
    assert rules_of(run("0.5.14", H200, QWEN3_NEXT, **no_buffer)) == {
        "startup-mamba-cache-strategy"
    }


def test_the_strategy_choices_are_the_releases() -> None:
    lazy = {"mamba_scheduler_strategy": "extra_buffer_lazy"}
    with pytest.raises(ValueError, match=r"added in 0\.5\.13"):
        AttentionConfig(sglang_version="0.5.12", **H200, **QWEN3_NEXT, **lazy)
    assert not run("0.5.13", H200, QWEN3_NEXT, **lazy).refused_at_startup


# -- the model's facts by architecture --------------------------------------------------------


def test_encoder_decoder_by_architecture_flags_triton_for_the_backend_build() -> None:
    mllama = AttentionConfig.from_model_config(_config({"architectures":
        ["MllamaForConditionalGeneration"]}), attention_backend="triton", **H200)  # fmt: skip
    report = check(mllama)
    assert not report.refused_at_startup
    assert any(
        f.backend == "triton" and f.enforced is Enforcement.BACKEND_BUILD for f in report.errors
    )


def _config(data: dict[str, Any]) -> str:
    import json
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "config.json").write_text(json.dumps(data))
    return str(folder)


# -- suggestions ------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "allowed"), [(GPT_OSS, "gpt-oss"), (LLAMA4, "llama4")])
def test_suggestions_keep_to_the_models_list(model: dict[str, Any], allowed: str) -> None:
    report = run("0.5.23", H200, model, attention_backend="flashinfer")
    assert report.suggestions
    assert report.suggestions[0].flags == (("--attention-backend", "fa3"),)
    for suggestion in report.suggestions:
        fixed = dict(suggestion.flags)
        assert fixed.get("--attention-backend", "fa3") != "flashinfer"


@pytest.mark.parametrize("release", ["0.5.7", "0.5.15", "0.5.23"])
def test_the_model_rule_lookup_is_the_first_branch_that_takes_the_model(release: str) -> None:
    """`ReleaseRules.model_rule` remembers its answers: asked twice, in two orders, it is
    still the first of the release's branches that takes the model, sparse attention and
    device (every architecture a branch names, a name containing a branch's substring, and
    one no branch takes)."""
    from compat.inputs.flags import DEVICE
    from compat.releases import RELEASES

    rules = RELEASES[release]
    names = {name for rule in rules.model_rules for name in rule.architectures}
    names |= {f"My{rule.substring}Model" for rule in rules.model_rules if rule.substring}
    asks = [
        (name, sparse, device)
        for name in sorted(names | {"LlamaForCausalLM", "NoSuchForCausalLM"})
        for sparse in (False, True)
        for device in DEVICE.choices
    ]
    for ask in [*asks, *reversed(asks)]:
        first = next((rule for rule in rules.model_rules if rule.applies(*ask)), None)
        assert rules.model_rule(*ask) is first, ask
    # Some asks find a branch and some do not, so the test holds both answers.
    assert {rules.model_rule(*ask) is None for ask in asks} == {True, False}


# -- DeepSeek V4: dsv4 at page 256 whatever the flags, FP8 KV, EAGLE at topk 1 ---------------

DEEPSEEK_V4 = {"attention_arch": "mha", "model_architecture": "DeepseekV4ForCausalLM"}


@pytest.mark.parametrize("release", ["0.5.12", "0.5.18", "0.5.23"])
def test_deepseek_v4_runs_dsv4_at_page_256_whatever_the_flags(release: str) -> None:
    flagged = run(release, H200, DEEPSEEK_V4, attention_backend="triton")
    assert runs(flagged) == ("dsv4", "dsv4", 256)
    # The deterministic check then meets dsv4, outside its list.
    refused = run(release, H200, DEEPSEEK_V4, enable_deterministic_inference=True)
    assert rules_of(refused) == {"startup-deterministic-backends"}


def test_deepseek_v4_kv_cache_is_fp8_then_bfloat16_too() -> None:
    assert rules_of(run("0.5.12", B200, DEEPSEEK_V4, kv_cache_dtype="bfloat16")) == {
        "startup-deepseek-v4-backend"
    }
    assert runs(run("0.5.14", B200, DEEPSEEK_V4, kv_cache_dtype="bfloat16"))[2] == 256
    assert run("0.5.12", B200, DEEPSEEK_V4).resolved.kv_dtype.value == "fp8_e4m3"


@pytest.mark.parametrize(
    ("algorithm", "topk", "refused"),
    [("EAGLE", 1, False), ("EAGLE", None, True), ("EAGLE", 2, True), ("NEXTN", 1, True)],
)
def test_deepseek_v4_speculates_only_as_eagle_at_topk_one(
    algorithm: str, topk: int | None, refused: bool
) -> None:
    flags: dict[str, Any] = {"speculative_algorithm": algorithm, "speculative_num_steps": 1}
    if topk is not None:
        flags["speculative_eagle_topk"] = topk
    report = run("0.5.23", B200, DEEPSEEK_V4, **flags)
    assert ("startup-deepseek-v4-backend" in rules_of(report)) is refused
