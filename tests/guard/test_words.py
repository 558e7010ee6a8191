"""The guard's words: one finding per fact, lists worded for the model and the machine, and
why SGLang's default moved."""

from __future__ import annotations

import itertools
from typing import Any

from compat import AttentionConfig, check
from compat.guard.report import Enforcement, Report
from compat.releases import NEWEST, RELEASES
from compat.vocab.terms import Severity

# The newest release: the tests' default is the baseline.
B200: dict[str, Any] = {"platform": "cuda", "compute_capability": (10, 0), "sglang_version": NEWEST}
H100: dict[str, Any] = {"platform": "cuda", "compute_capability": (9, 0), "sglang_version": NEWEST}
DEEPSEEK_R1 = {"attention_arch": "mla", "model_architecture": "DeepseekV3ForCausalLM"}
GPT_OSS = {"attention_arch": "mha", "model_architecture": "GptOssForCausalLM"}
QWEN3 = {"attention_arch": "mha", "model_architecture": "Qwen3ForCausalLM"}


def _twins(report: Report) -> list[str]:
    """Rules said twice: the page's `RULE` and SGLang's `startup-RULE`, for one backend,
    with one verdict and one allowed set."""
    pages = {(f.rule, f.backend, f.severity, frozenset(f.allowed)) for f in report.findings}
    return [
        f.rule
        for f in report.findings
        if f.rule.startswith("startup-")
        and (f.rule.removeprefix("startup-"), f.backend, f.severity, frozenset(f.allowed)) in pages
    ]


def test_deepseek_on_b200_with_nvfp4_and_trtllm_mla_says_each_fact_once() -> None:
    report = check(
        AttentionConfig(**DEEPSEEK_R1, **B200, attention_backend="trtllm_mla",
                        kv_cache_dtype="nvfp4")
    )  # fmt: skip
    rules = [f.rule for f in report.findings]
    assert "startup-backend-kv-dtype" not in rules
    (dtype,) = [f for f in report.errors if f.rule == "backend-kv-dtype"]
    # SGLang enforces it, and the finding names both sources.
    assert dtype.enforced is Enforcement.STARTUP
    assert dtype.message.startswith(f"SGLang {NEWEST} refuses to start: trtllm_mla takes")
    assert "SGLang's start-up code and the page both state it" in dtype.message
    assert report.refused_at_startup and not report.ok
    data = report.to_dict()
    assert [e["rule"] for e in data["errors"]].count("backend-kv-dtype") == 1


def test_a_kv4_hybrid_pair_warns_once() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", **{**H100, "sglang_version": "0.5.7"},
                        prefill_attention_backend="flashinfer", decode_attention_backend="triton",
                        kv_cache_dtype="fp4_e2m1")
    )  # fmt: skip
    hybrid = [f for f in report.warnings if f.rule.endswith("kv4-hybrid-pair")]
    assert [f.rule for f in hybrid] == ["kv4-hybrid-pair"]
    assert hybrid[0].enforced is Enforcement.STARTUP
    # The verdicts keep their meaning: SGLang starts; the page documents flashinfer's FP4.
    assert not report.refused_at_startup and not report.ok
    assert [(f.rule, f.enforced) for f in report.errors] == [("fp4-kv", Enforcement.DOCUMENTED)]


def test_no_fact_is_said_twice_over_a_sample_of_launches() -> None:
    rules = RELEASES[NEWEST]
    checked = 0
    for arch, backend, dtype, machine in itertools.product(
        ("mha", "mla"), rules.backend_choices, rules.kv_choices, (B200, H100)
    ):
        config = AttentionConfig(attention_arch=arch, attention_backend=backend,
                                 kv_cache_dtype=dtype, **machine)  # fmt: skip
        assert _twins(check(config)) == [], config
        checked += 1
    assert checked > 500


def test_an_mla_launch_is_not_pointed_at_an_mha_backend() -> None:
    report = check(
        AttentionConfig(**DEEPSEEK_R1, **B200, attention_backend="trtllm_mla",
                        kv_cache_dtype="nvfp4")
    )  # fmt: skip
    (prefill,) = [f for f in report.errors if f.rule == "startup-nvfp4-backends"]
    # SGLang's list also names trtllm_mha, which cannot run an MLA model.
    assert "only on flashinfer" in prefill.message
    assert "trtllm_mha" not in prefill.message
    assert "MLA models" in prefill.message
    assert prefill.allowed == ("flashinfer",)


def test_gpt_oss_on_an_h100_names_the_backends_of_this_machine() -> None:
    report = check(AttentionConfig(**GPT_OSS, **H100, attention_backend="flashinfer"))
    (listed,) = [f for f in report.errors if f.rule == "startup-gpt-oss-backends"]
    assert "it allows only triton, fa3 " in listed.message
    for elsewhere in ("ascend", "aiter", "intel_xpu", "intel_amx"):
        assert elsewhere not in listed.message
    assert "4 for other platforms" in listed.message
    assert "trtllm_mha, fa4 on other GPUs" in listed.message
    assert listed.allowed == ("triton", "fa3")


def test_the_pages_check_list_names_the_backends_of_this_machine() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", **H100, attention_backend="torch_native",
                        speculative_algorithm="EAGLE", speculative_eagle_topk=2,
                        speculative_num_steps=3, speculative_num_draft_tokens=4)
    )  # fmt: skip
    (topk,) = [f for f in report.errors if f.rule == "spec-topk-gt1"]
    assert "aiter" not in topk.message and "aiter" not in topk.allowed
    assert "1 for other platforms" in topk.message


def test_the_default_says_which_input_moved_it() -> None:
    plain = check(AttentionConfig(**QWEN3, **H100))
    speculative = check(
        AttentionConfig(**QWEN3, **H100, speculative_algorithm="EAGLE", speculative_eagle_topk=1,
                        speculative_num_steps=3, speculative_num_draft_tokens=4, page_size=16)
    )  # fmt: skip
    (usual,) = [f for f in plain.infos if f.rule == "default-backend"]
    (moved,) = [f for f in speculative.infos if f.rule == "default-backend"]
    assert usual.value == "fa3" and "usual" not in usual.message
    assert moved.value == "flashinfer"
    assert "not its usual fa3" in moved.message
    assert "speculative topk 1 with page size 16" in moved.message
    assert "only without speculative decoding, or with topk 1 and page size 1" in moved.message
    assert moved.severity is Severity.INFO
