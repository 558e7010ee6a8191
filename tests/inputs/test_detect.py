"""Platform detection with the real CPU torch; device queries monkeypatched for GPU cases."""

from __future__ import annotations

import logging
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from cells import fp4_accepted_on_b200

from compat import IncompatibleConfigError, KvDtype, Platform, enforce
from compat.claim.baseline import MATRIX
from compat.guard.extra_findings import dtype_support
from compat.inputs.detect import (
    DetectedPlatform,
    PlatformDetectionError,
    detect_platform,
    torch_dtype,
    version_tuple,
)
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch


@pytest.fixture(name="torch", autouse=True, scope="module")
def real_torch() -> Any:
    """The real torch, imported when this module's first test runs, not at collection, where
    every worker of the suite would pay its two seconds of import."""
    return pytest.importorskip("torch", reason="the torch extra installs it; .ci/run always does")


def test_real_cpu_torch_is_detected_as_cpu(torch: Any) -> None:
    if torch.cuda.is_available():
        pytest.fail("these tests expect the CPU build of torch")
    detected = detect_platform()
    assert detected.platform is Platform.CPU
    assert detected.compute_capability is None
    assert detected.torch_version == version_tuple(torch.__version__)


def fake_gpu(
    monkeypatch: pytest.MonkeyPatch,
    torch: Any,
    *,
    hip: str | None,
    cuda: str | None,
    capability: tuple[int, int],
    name: str,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: name)
    monkeypatch.setattr(torch.version, "hip", hip)
    monkeypatch.setattr(torch.version, "cuda", cuda)


def test_cuda_device_gives_capability_and_cuda_version(
    monkeypatch: pytest.MonkeyPatch, torch: Any
) -> None:
    fake_gpu(monkeypatch, torch, hip=None, cuda="12.8", capability=(10, 0), name="NVIDIA B200")
    detected = detect_platform()
    assert detected == DetectedPlatform(
        Platform.CUDA,
        ComputeCapability(10, 0),
        (12, 8),
        version_tuple(torch.__version__),
        "NVIDIA B200",
    )


def test_rocm_build_is_rocm_without_a_cuda_capability(
    monkeypatch: pytest.MonkeyPatch, torch: Any
) -> None:
    fake_gpu(monkeypatch, torch, hip="6.2.41133", cuda=None, capability=(9, 4), name="AMD MI300X")
    detected = detect_platform()
    assert detected.platform is Platform.ROCM
    assert detected.compute_capability is None


def test_xpu_is_detected(monkeypatch: pytest.MonkeyPatch, torch: Any) -> None:
    monkeypatch.setattr(torch, "xpu", SimpleNamespace(is_available=lambda: True), raising=False)
    assert detect_platform().platform is Platform.XPU


def test_missing_torch_asks_for_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(PlatformDetectionError, match="--platform"):
        detect_platform()


@pytest.mark.parametrize(
    ("dtype", "attribute"),
    [
        (KvDtype.FP4_E2M1, "float4_e2m1fn_x2"),
        (KvDtype.FP8_E4M3, "float8_e4m3fn"),
        (KvDtype.FP8_E5M2, "float8_e5m2"),
        (KvDtype.BF16, "bfloat16"),
    ],
)
def test_kv_dtypes_map_to_torch_dtypes(dtype: KvDtype, attribute: str, torch: Any) -> None:
    assert torch_dtype(dtype) is getattr(torch, attribute)
    assert torch_dtype(KvDtype.AUTO) is None


def test_a_torch_without_the_dtype_is_reported(monkeypatch: pytest.MonkeyPatch, torch: Any) -> None:
    monkeypatch.delattr(torch, "float4_e2m1fn_x2")
    detected = DetectedPlatform(Platform.CUDA, ComputeCapability(10, 0), (12, 8), (2, 13), None)
    (finding,) = dtype_support(KvDtype.FP4_E2M1, detected)
    assert "float4_e2m1fn_x2" in finding.message
    with pytest.raises(PlatformDetectionError, match="float4_e2m1fn_x2"):
        torch_dtype(KvDtype.FP4_E2M1)


def test_old_torch_is_refused_for_fp4() -> None:
    detected = DetectedPlatform(Platform.CUDA, ComputeCapability(10, 0), (12, 8), (2, 7), None)
    findings = dtype_support(KvDtype.FP4_E2M1, detected)
    assert any("PyTorch 2.8" in f.message for f in findings)
    assert (
        dtype_support(
            KvDtype.FP4_E2M1,
            DetectedPlatform(Platform.CUDA, ComputeCapability(10, 0), (12, 8), (2, 8), None),
        )
        == ()
    )


# -- enforce(): the engine-side entry point -------------------------------------------------


def server_args(**overrides: Any) -> SimpleNamespace:
    fields: dict[str, Any] = {
        "attention_backend": None,
        "prefill_attention_backend": None,
        "decode_attention_backend": None,
        "kv_cache_dtype": "auto",
        "page_size": None,
        "speculative_algorithm": None,
        "speculative_eagle_topk": None,
        "speculative_attention_mode": "prefill",
        "model_path": "unused",
        "tp_size": 8,
    }
    return SimpleNamespace(**{**fields, **overrides})


def test_enforce_raises_with_every_error(monkeypatch: pytest.MonkeyPatch, torch: Any) -> None:
    fake_gpu(monkeypatch, torch, hip=None, cuda="12.8", capability=(10, 0), name="NVIDIA B200")
    args = server_args(
        prefill_attention_backend="fa4",
        decode_attention_backend="trtllm_mha",
        kv_cache_dtype="fp4_e2m1",
    )
    with pytest.raises(IncompatibleConfigError) as caught:
        enforce(args, attention_arch="mha")
    assert isinstance(caught.value, ValueError)
    assert "kv4-fa4-decode-partner" in str(caught.value)
    # The first MHA decode partner the live matrix derives for fa4.
    (rule,) = MATRIX.pairing_rules
    partner = MATRIX.decode_partners(rule, Arch.MHA)[0]
    assert f"--decode-attention-backend {partner}" in str(caught.value)
    assert caught.value.report.resolved.compute_capability == ComputeCapability(10, 0)


def test_enforce_logs_warnings_and_returns_the_report(caplog: pytest.LogCaptureFixture) -> None:
    # Two MHA backends that each accept an FP4 cache on a B200 in the live matrix.
    prefill, decode = fp4_accepted_on_b200(Arch.MHA)[:2]
    args = server_args(
        prefill_attention_backend=prefill,
        decode_attention_backend=decode,
        kv_cache_dtype="fp4_e2m1",
    )
    with caplog.at_level(logging.INFO, logger="compat"):
        report = enforce(args, attention_arch="mha", platform="cuda", compute_capability=(10, 0))
    assert report.ok
    assert any(
        "kv4-hybrid-pair" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
    )


def test_enforce_detects_the_cpu_when_no_platform_is_given() -> None:
    report = enforce(server_args(attention_backend="torch_native"), attention_arch="mha")
    assert report.resolved.platform is Platform.CPU


def test_import_compat_does_not_import_heavy_modules() -> None:
    code = (
        "import sys, compat; heavy = [m for m in ('torch', 'jinja2', 'mkdocs') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
