"""The guard reports where SGLang fails in the first forward pass, in a kernel it pins.

The engine replays the kernel limits of each release (`compat.engine.kernels`, read from the
wheels: tests/engine/test_kernel_data.py) after the backend build; the guard words the
failure as an error enforced at the warm-up, naming SGLang's line, the kernel package's
file and line (or the architectures its wheel carries kernels for) and the GPUs it accepts,
and `--parity` refuses it as it refuses a start-up refusal.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_cli import compat_check

from compat import AttentionConfig, check
from compat.engine.kernels import KernelLimit, KernelPath
from compat.guard.kernel_words import is_kernel_finding
from compat.guard.report import Enforcement, Report
from compat.releases import RELEASES

QWEN35_MOE: dict[str, Any] = {"model_architecture": "Qwen3_5MoeForConditionalGeneration"}
QWEN3: dict[str, Any] = {"model_architecture": "Qwen3ForCausalLM"}
DSA: dict[str, Any] = {
    "model_architecture": "DeepseekV32ForCausalLM",
    "attention_arch": "mla",
    "sparse_attention": True,
}


def _on(capability: tuple[int, int]) -> dict[str, Any]:
    return {"platform": "cuda", "compute_capability": capability}


def _report(release: str, capability: tuple[int, int], **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **_on(capability), **kwargs))


def _limit(release: str, path: KernelPath) -> KernelLimit | None:
    return next((lim for lim in RELEASES[release].kernels.limits if lim.path is path), None)


def _kernel_errors(report: Report) -> list[str]:
    return [f.rule for f in report.errors if is_kernel_finding(f)]


def _refused(limit: KernelLimit) -> list[tuple[int, int]]:
    """The capabilities SGLang's path reaches and the kernel refuses."""
    assert limit.reaches is not None
    return sorted(c for c in limit.reaches if not limit.accepts(c))


def test_the_vision_encoders_fa4_fails_on_a_b300_in_0_5_12_at_its_lines() -> None:
    limit = _limit("0.5.12", KernelPath.VISION_FA4)
    assert limit is not None and _refused(limit) == [(10, 3)]
    report = _report("0.5.12", (10, 3), **QWEN35_MOE)
    errors = [f for f in report.errors if is_kernel_finding(f)]
    assert [f.rule for f in errors] == [KernelPath.VISION_FA4.rule]
    finding = errors[0]
    assert finding.enforced is Enforcement.WARMUP
    assert report.sglang_fails and not report.refused_at_startup
    kernel, caller = limit.kernel, limit.caller
    assert finding.raised_at == f"{kernel.file}:{kernel.line} ({kernel.function})"
    assert f"{caller.file}:{caller.line}" in finding.message
    assert f"flash-attn-4 {kernel.version}" in finding.message
    assert "sm103" in finding.message and "first forward pass" in report.startup_summary
    # The fix the guard finds, and checks: SGLang's own encoder backend on the other GPUs.
    fix = f"--mm-attention-backend {limit.fallback}"
    assert fix in finding.message
    assert [s.args for s in report.suggestions] == [fix]
    fixed = _report("0.5.12", (10, 3), mm_attention_backend=limit.fallback, **QWEN35_MOE)
    assert fixed.ok


@pytest.mark.parametrize(
    ("release", "capability", "model"),
    [
        ("0.5.12", (10, 0), QWEN35_MOE),  # the kernel accepts sm100
        ("0.5.12", (10, 3), QWEN3),  # no vision encoder
        ("0.5.12", (12, 0), QWEN35_MOE),  # the encoder's default is triton_attn on sm120
        ("0.5.11", (10, 3), QWEN35_MOE),  # its CuTe DSL (4.4.2) has no sm_110 alias yet
        ("0.5.13", (10, 3), QWEN35_MOE),  # its default leaves sm103 off fa4
    ],
)
def test_the_vision_encoders_fa4_passes_where_the_kernel_runs(
    release: str, capability: tuple[int, int], model: dict[str, Any]
) -> None:
    assert _kernel_errors(_report(release, capability, **model)) == []


def test_an_encoder_backend_of_the_launchs_own_is_not_held_against_it() -> None:
    report = _report("0.5.12", (10, 3), mm_attention_backend="triton_attn", **QWEN35_MOE)
    assert _kernel_errors(report) == []


def test_an_encoder_backend_the_release_does_not_know_is_refused_with_its_choices() -> None:
    machine = (
        "--gpu",
        "B300",
        "--sglang-version",
        "0.5.7",
        "--model-architecture",
        "Qwen3ForCausalLM",
    )
    refused = compat_check(
        *machine, "--", "python3", "-m", "sglang.launch_server", "--mm-attention-backend", "fa4"
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    assert "--mm-attention-backend" in said and "triton_attn" in said and "added in" in said


def test_a_multimodal_model_named_by_its_config_alone_is_read_as_one() -> None:
    report = _report("0.5.12", (10, 3), multimodal=True, model_architecture="LlamaForCausalLM")
    assert _kernel_errors(report) == [KernelPath.VISION_FA4.rule]


def test_the_fa4_backend_fails_an_mha_model_on_a_b300_in_0_5_12() -> None:
    limit = _limit("0.5.12", KernelPath.FA4_BACKEND)
    assert limit is not None and _refused(limit) == [(10, 3)] and "fa4" in limit.backends
    llama = {"model_architecture": "LlamaForCausalLM", "attention_backend": "fa4"}
    report = _report("0.5.12", (10, 3), **llama)
    errors = [f for f in report.errors if is_kernel_finding(f)]
    assert [f.rule for f in errors] == [KernelPath.FA4_BACKEND.rule]
    assert errors[0].enforced is Enforcement.WARMUP
    assert f"{limit.caller.file}:{limit.caller.line}" in errors[0].message
    assert _kernel_errors(_report("0.5.12", (10, 0), **llama)) == []
    assert _kernel_errors(_report("0.5.11", (10, 3), **llama)) == []
    # Each suggested fix moves the launch off the kernel.
    for suggestion in report.suggestions:
        fields = {f.removeprefix("--").replace("-", "_"): v for f, v in suggestion.flags}
        assert _kernel_errors(_report("0.5.12", (10, 3), **{**llama, **fields})) == []


def test_the_dsa_indexers_deepgemm_fails_on_sm120_until_its_wheel_carries_sm120() -> None:
    limit = _limit("0.5.12", KernelPath.DSA_PAGED_MQA)
    assert limit is not None and 12 not in limit.accepted_majors
    report = _report("0.5.12", (12, 0), **DSA)
    errors = [f for f in report.errors if is_kernel_finding(f)]
    assert [f.rule for f in errors] == [KernelPath.DSA_PAGED_MQA.rule]
    assert errors[0].enforced is Enforcement.WARMUP and report.sglang_fails
    assert f"{limit.caller.file}:{limit.caller.line}" in errors[0].message
    assert all(arch in errors[0].message for arch in limit.kernel.built)
    # On Hopper and Blackwell the pinned DeepGEMM runs it.
    assert _kernel_errors(_report("0.5.12", (9, 0), **DSA)) == []
    assert _kernel_errors(_report("0.5.12", (10, 0), **DSA)) == []


def test_every_release_whose_deepgemm_lacks_sm120_fails_a_dsa_model_on_sm120() -> None:
    for release in RELEASES:
        limit = _limit(release, KernelPath.DSA_PAGED_MQA)
        if limit is None:
            continue
        report = _report(release, (12, 0), **DSA)
        if report.refused_at_startup or report.resolved.decode_backend not in limit.backends:
            continue
        failed = KernelPath.DSA_PAGED_MQA.rule in _kernel_errors(report)
        assert failed == (12 not in limit.accepted_majors), release


def test_a_fix_the_guard_suggests_for_a_kernel_failure_passes_it() -> None:
    report = _report("0.5.12", (12, 0), **DSA)
    assert report.suggestions
    for suggestion in report.suggestions:
        fields = {
            flag.removeprefix("--").replace("-", "_"): value for flag, value in suggestion.flags
        }
        fixed = _report("0.5.12", (12, 0), **{**DSA, **fields})
        assert _kernel_errors(fixed) == [], suggestion.summary


def test_every_limit_cites_sglangs_line_and_can_fail_a_gpu_its_path_reaches() -> None:
    for release, rules in RELEASES.items():
        for limit in rules.kernels.limits:
            assert limit.caller.package == "sglang" and limit.caller.line > 0, release
            assert limit.kernel.line > 0 or limit.kernel.built, (release, limit.path)
            if limit.reaches is not None:
                assert _refused(limit), (release, limit.path)  # else left out


def test_parity_refuses_a_first_forward_pass_failure() -> None:
    machine = ("--gpu", "B300", "--sglang-version", "0.5.12", "--model-architecture")
    machine += ("Qwen3_5MoeForConditionalGeneration",)
    fails = compat_check(*machine, "--parity")
    assert fails.returncode == 1, fails.stdout + fails.stderr
    assert "what SGLang 0.5.12 does in the first forward pass:" in fails.stdout
    assert f"[{KernelPath.VISION_FA4.rule}]" in fails.stdout
    launch = ("--", "python3", "-m", "sglang.launch_server", "--mm-attention-backend", "sdpa")
    passes = compat_check(*machine, "--parity", *launch)
    assert passes.returncode == 0, passes.stdout + passes.stderr


R1: dict[str, Any] = {"model_architecture": "DeepseekV3ForCausalLM", "attention_arch": "mla"}


@pytest.mark.parametrize("release", ["0.5.7", "0.5.23"])
def test_the_flashmla_backend_fails_on_sm120_where_flashmla_has_no_kernel_image(
    release: str,
) -> None:
    limit = _limit(release, KernelPath.FLASHMLA)
    assert limit is not None and limit.reaches is None and "flashmla" in limit.backends
    assert not limit.accepts((12, 0)) and limit.accepts((9, 0))
    report = _report(release, (12, 0), attention_backend="flashmla", **R1)
    errors = [f for f in report.errors if is_kernel_finding(f)]
    assert [f.rule for f in errors] == [KernelPath.FLASHMLA.rule]
    finding = errors[0]
    assert finding.enforced is Enforcement.WARMUP and not report.refused_at_startup
    assert f"{limit.caller.file}:{limit.caller.line}" in finding.message
    assert f"{limit.kernel.package} {limit.kernel.version}" in finding.message
    assert all(arch in finding.message for arch in limit.kernel.built)
    assert "first forward pass" in report.startup_summary
    # The page's GPU verdict on flashmla is now the code's too: enforced at the warm-up.
    page = [f for f in report.errors if f.rule == "compute-capability"]
    assert page and all(f.enforced is Enforcement.WARMUP for f in page)
    assert "documents" not in report.startup_summary
    for suggestion in report.suggestions:
        fields = {f.removeprefix("--").replace("-", "_"): v for f, v in suggestion.flags}
        fixed = _report(release, (12, 0), **{**R1, "attention_backend": "flashmla", **fields})
        assert _kernel_errors(fixed) == [], suggestion.summary


@pytest.mark.parametrize("capability", [(9, 0), (10, 0), (10, 3)])
def test_the_flashmla_backend_passes_where_flashmla_carries_a_kernel_image(
    capability: tuple[int, int],
) -> None:
    # 0.5.7's FlashMLA carries sm_90a and sm_100a alone: a B300 (sm103) has no image (below).
    releases = ("0.5.12", "0.5.23") if capability == (10, 3) else ("0.5.7", "0.5.12", "0.5.23")
    for release in releases:
        limit = _limit(release, KernelPath.FLASHMLA)
        assert limit is not None and limit.accepts(capability), (release, capability)
        report = _report(release, capability, attention_backend="flashmla", **R1)
        assert _kernel_errors(report) == [], (release, capability)


def test_flashmla_fails_a_b300_in_0_5_7_whose_flashmla_carries_no_sm103_image() -> None:
    limit = _limit("0.5.7", KernelPath.FLASHMLA)
    assert limit is not None and limit.kernel.built == ("sm_90a", "sm_100a")
    report = _report("0.5.7", (10, 3), attention_backend="flashmla", **R1)
    assert _kernel_errors(report) == [KernelPath.FLASHMLA.rule]


def test_every_release_fails_flashmla_exactly_where_its_kernel_images_do_not_run() -> None:
    for release in RELEASES:
        limit = _limit(release, KernelPath.FLASHMLA)
        assert limit is not None, release  # every modelled release has the backend
        for capability in [(9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)]:
            report = _report(release, capability, attention_backend="flashmla", **R1)
            if report.refused_at_startup or report.resolved.decode_backend != "flashmla":
                continue
            failed = KernelPath.FLASHMLA.rule in _kernel_errors(report)
            assert failed == (not limit.accepts(capability)), (release, capability)


def test_a_flashmla_prefill_under_another_decode_backend_does_not_reach_flashmla() -> None:
    hybrid = {"prefill_attention_backend": "flashmla", "decode_attention_backend": "triton"}
    report = _report("0.5.23", (12, 0), **hybrid, **R1)
    assert KernelPath.FLASHMLA.rule not in _kernel_errors(report)


def test_parity_refuses_flashmla_on_an_rtx_pro_6000() -> None:
    machine = ("--gpu", "RTX PRO 6000", "--sglang-version", "0.5.23", "--model-architecture")
    machine += ("DeepseekV3ForCausalLM",)
    launch = ("--", "python3", "-m", "sglang.launch_server", "--attention-backend", "flashmla")
    fails = compat_check(*machine, "--parity", *launch)
    assert fails.returncode == 1, fails.stdout + fails.stderr
    assert f"[{KernelPath.FLASHMLA.rule}]" in fails.stdout
    passes = compat_check("--gpu", "H100", *machine[2:], "--parity", *launch)
    assert passes.returncode == 0, passes.stdout + passes.stderr


def test_an_mha_model_on_flashmla_is_the_pages_to_refuse_not_flashmlas_kernel() -> None:
    report = _report("0.5.23", (12, 0), attention_backend="flashmla", **QWEN3)
    assert KernelPath.FLASHMLA.rule not in _kernel_errors(report)
