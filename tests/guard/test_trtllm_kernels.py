"""The guard reports where the trtllm_mha and trtllm_mla backends' prefill fails: FlashInfer's
trtllm-gen runner refuses the GPU after SGLang starts and loads the weights.

The limits are read from the wheels (tests/engine/test_trtllm_kernel_data.py); here each
path fails a GPU its start-up lets through and passes one its runner accepts, the finding
names flashinfer-python's version, file, function and line, the page's documented finding
on that cell is marked as failing there, and `--parity` refuses it.
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

MHA: dict[str, Any] = {"model_architecture": "LlamaForCausalLM", "attention_backend": "trtllm_mha"}
MLA: dict[str, Any] = {
    "model_architecture": "DeepseekV3ForCausalLM",
    "attention_arch": "mla",
    "attention_backend": "trtllm_mla",
}
MODELS = {KernelPath.TRTLLM_MHA: MHA, KernelPath.TRTLLM_MLA: MLA}


def _report(release: str, capability: tuple[int, int], **kwargs: Any) -> Report:
    config = {"platform": "cuda", "compute_capability": capability, **kwargs}
    return check(AttentionConfig(sglang_version=release, **config))


def _limit(release: str, path: KernelPath) -> KernelLimit:
    return next(lim for lim in RELEASES[release].kernels.limits if lim.path is path)


def _kernel_errors(report: Report) -> list[str]:
    return [f.rule for f in report.errors if is_kernel_finding(f)]


@pytest.mark.parametrize(
    ("release", "path", "capability"),
    [
        ("0.5.23", KernelPath.TRTLLM_MLA, (12, 0)),  # RTX PRO 6000, RTX 5090
        ("0.5.23", KernelPath.TRTLLM_MLA, (12, 1)),  # DGX Spark (GB10)
        ("0.5.23", KernelPath.TRTLLM_MLA, (11, 0)),  # Jetson Thor (CUDA 13)
        ("0.5.12", KernelPath.TRTLLM_MLA, (12, 0)),
        ("0.5.7", KernelPath.TRTLLM_MLA, (12, 1)),
        ("0.5.23", KernelPath.TRTLLM_MHA, (10, 1)),  # Jetson Thor (CUDA 12.8, 12.9)
        ("0.5.17", KernelPath.TRTLLM_MHA, (10, 7)),  # before flashinfer-python names sm107
    ],
)
def test_the_trtllm_prefill_fails_a_gpu_start_up_lets_through(
    release: str, path: KernelPath, capability: tuple[int, int]
) -> None:
    limit = _limit(release, path)
    assert not limit.accepts(capability)
    report = _report(release, capability, **MODELS[path])
    assert not report.refused_at_startup and report.sglang_fails
    assert "then fails in the first forward pass" in report.startup_summary
    errors = [f for f in report.errors if is_kernel_finding(f)]
    assert [f.rule for f in errors] == [path.rule]
    finding, kernel = errors[0], limit.kernel
    assert finding.enforced is Enforcement.WARMUP
    assert finding.raised_at == f"{kernel.file}:{kernel.line} ({kernel.function})"
    assert f"flashinfer-python {kernel.version}" in finding.message
    assert f"{limit.caller.file}:{limit.caller.line}" in finding.message
    assert f"sm{capability[0]}{capability[1]}" in finding.message
    # The page's own finding on the cell is the code's failure, not documented only.
    documented = [f for f in report.errors if f.enforced is Enforcement.DOCUMENTED]
    assert documented == []
    # Each suggested fix moves the launch off the kernel.
    assert report.suggestions
    for suggestion in report.suggestions:
        fields = {f.removeprefix("--").replace("-", "_"): v for f, v in suggestion.flags}
        fixed = _report(release, capability, **{**MODELS[path], **fields})
        assert _kernel_errors(fixed) == [], suggestion.summary


@pytest.mark.parametrize("path", sorted(MODELS, key=str))
@pytest.mark.parametrize("release", ["0.5.7", "0.5.12", "0.5.23"])
@pytest.mark.parametrize("capability", [(10, 0), (10, 3)])  # B200, B300
def test_the_trtllm_prefill_runs_where_the_runner_accepts_the_gpu(
    release: str, path: KernelPath, capability: tuple[int, int]
) -> None:
    assert _limit(release, path).accepts(capability)
    report = _report(release, capability, **MODELS[path])
    assert _kernel_errors(report) == [] and not report.sglang_fails


def test_trtllm_mha_sends_sm12x_prefill_to_fmha_v2_from_0_5_19() -> None:
    limit = _limit("0.5.23", KernelPath.TRTLLM_MHA)
    assert limit.elsewhere_majors == {9, 12} and not limit.accepts((12, 0))
    assert _kernel_errors(_report("0.5.23", (12, 0), **MHA)) == []
    assert _limit("0.5.18", KernelPath.TRTLLM_MHA).elsewhere_majors == frozenset()
    # From the flashinfer-python that names sm107, its runner takes it.
    assert _kernel_errors(_report("0.5.18", (10, 7), **MHA)) == []


def test_the_prefill_phase_alone_takes_the_path() -> None:
    split = {"prefill_attention_backend": "triton", "decode_attention_backend": "trtllm_mla"}
    report = _report("0.5.23", (12, 0), **{**MLA, **split})
    assert KernelPath.TRTLLM_MLA.rule not in _kernel_errors(report)
    mha_model = {**MLA, "attention_arch": "mha", "model_architecture": "LlamaForCausalLM"}
    assert KernelPath.TRTLLM_MLA.rule not in _kernel_errors(_report("0.5.23", (12, 0), **mha_model))


@pytest.mark.parametrize("gpu", ["RTX PRO 6000", "DGX Spark", "Jetson Thor"])
def test_compat_check_says_deepseek_on_trtllm_mla_fails_in_the_first_forward_pass(
    gpu: str,
) -> None:
    launch = ("--", "python3", "-m", "sglang.launch_server", "--attention-backend", "trtllm_mla")
    machine = ("--sglang-version", "0.5.23", "--gpu", gpu, "--model-architecture")
    machine += ("DeepseekV3ForCausalLM", "--attention-arch", "mla")
    said = compat_check(*machine, *launch)
    assert said.returncode == 1, said.stdout + said.stderr
    kernel = _limit("0.5.23", KernelPath.TRTLLM_MLA).kernel
    assert "starts, then fails in the first forward pass" in said.stdout
    assert f"[{KernelPath.TRTLLM_MLA.rule}]" in said.stdout
    assert f"flashinfer-python {kernel.version}, {kernel.file}:{kernel.line}" in said.stdout
    assert "documented only" not in said.stdout
    parity = compat_check(*machine, "--parity", *launch)
    assert parity.returncode == 1, parity.stdout + parity.stderr
    b300 = compat_check(
        "--sglang-version", "0.5.23", "--gpu", "B300", *machine[4:], "--parity", *launch
    )
    assert b300.returncode == 0, b300.stdout + b300.stderr


# DeepSeek-V3.2's sparse attention on the DSA backend, its decode kernel named.
DSA: dict[str, Any] = {
    "model_architecture": "DeepseekV32ForCausalLM",
    "attention_arch": "mla",
    "sparse_attention": True,
    "kv_cache_dtype": "fp8_e4m3",
}


@pytest.mark.parametrize(
    ("release", "capability", "fails"),
    [
        ("0.5.20", (12, 0), True),  # RTX PRO 6000 (sglang#40558)
        ("0.5.23", (12, 1), True),  # DGX Spark
        ("0.5.20", (9, 0), True),  # H200: the runner refuses Hopper too
        ("0.5.20", (10, 0), False),  # B200
        ("0.5.23", (10, 3), False),  # B300
    ],
)
def test_the_dsa_backends_trtllm_decode_fails_where_the_runner_refuses_the_gpu(
    release: str, capability: tuple[int, int], fails: bool
) -> None:
    report = _report(release, capability, dsa_decode_backend="trtllm", **DSA)
    kernel = [f for f in report.errors if is_kernel_finding(f)]
    if not fails:
        assert not kernel, [f.message for f in kernel]
        return
    assert [f.rule for f in kernel] == [KernelPath.DSA_TRTLLM.rule]
    finding = kernel[0]
    assert finding.enforced is Enforcement.WARMUP and finding.flags == ("--dsa-decode-backend",)
    limit = _limit(release, KernelPath.DSA_TRTLLM)
    assert f"{limit.caller.file}:{limit.caller.line}" in finding.message
    assert "flashinfer-python" in finding.message and "Unsupported architecture" in finding.message


def test_the_dsa_metadata_fails_before_the_decode_kernel() -> None:
    # Up to 0.5.16 on SM 12.0 the DSA backend's metadata (DeepGEMM's paged MQA schedule)
    # fails first: the first forward pass never reaches the decode kernel.
    report = _report("0.5.16", (12, 0), dsa_decode_backend="trtllm", **DSA)
    assert _kernel_errors(report) == [KernelPath.DSA_PAGED_MQA.rule]


def test_the_dsa_trtllm_decode_is_judged_only_where_the_launch_names_it() -> None:
    # SGLang's own choice of the DSA kernels is not replayed: an unnamed decode kernel, or
    # another one, never predicts this failure; nor does a model without sparse attention.
    for kwargs in ({}, {"dsa_decode_backend": "flashmla_kv"}):
        assert not _kernel_errors(_report("0.5.20", (12, 0), **DSA, **kwargs))
    dense = {**DSA, "sparse_attention": False, "model_architecture": "DeepseekV3ForCausalLM"}
    report = _report("0.5.20", (12, 0), dsa_decode_backend="trtllm", **dense)
    assert KernelPath.DSA_TRTLLM.rule not in _kernel_errors(report)
