"""The conformance harness really runs SGLang's start-up code, and stays contained."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conformance import grid as grid_module
from conformance import stubs, wheel
from conformance.availability import require_source
from conformance.compare import VERSION, model_inputs
from conformance.harness import Launch, RefusedError, open_runtime, run_many, run_startup
from conformance.models import MODELS

EAGLE_TOPK4 = (
    "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8",
)  # fmt: skip


@pytest.fixture(scope="module")
def source() -> Path:
    return require_source(VERSION)


def _in_sglang_source(source: Path, message: str) -> bool:
    """Whether `message` (or its first literal piece) is written in SGLang's server_args.py."""
    text = (source / "sglang/srt/server_args.py").read_text()
    return message in text or message[:40] in text


@pytest.mark.parametrize(
    ("gpu", "model", "argv", "exception", "message"),
    [
        ("B200", "Llama-3.1-8B", ["--attention-backend", "fa4"], "ValueError",
         "FA4 backend is only supported for prefill. "
         "Please use `--prefill-attention-backend fa4` instead."),
        ("MI300X", "Llama-3.1-8B", ["--kv-cache-dtype", "fp4_e2m1"], "RuntimeError",
         "KV4 is not tested on non-CUDA platforms."),
        ("H200", "DeepSeek-V3", ["--attention-backend", "trtllm_mla"], "ValueError",
         "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100)."),
    ],
)  # fmt: skip
def test_refusals_carry_sglangs_own_message(
    source: Path, gpu: str, model: str, argv: list[str], exception: str, message: str
) -> None:
    outcome = run_startup(VERSION, gpu, model, argv)
    assert outcome.refused
    assert outcome.error is not None
    assert outcome.error.startswith(f"{exception}: {message}")
    assert _in_sglang_source(source, message)


@pytest.mark.parametrize(
    ("gpu", "model", "argv", "prefill", "decode", "page", "topk"),
    [
        ("B200", "Llama-3.1-8B", [], "trtllm_mha", "trtllm_mha", 64, None),
        ("B200", "Llama-3.1-8B", list(EAGLE_TOPK4), "flashinfer", "flashinfer", 1, 4),
        ("B200", "Llama-3.1-8B", ["--speculative-algorithm", "EAGLE"],
         "flashinfer", "flashinfer", 1, 4),
        ("H200", "Llama-3.1-8B", [], "fa3", "fa3", 1, None),
        ("H200", "Mistral-7B-v0.3", [], "flashinfer", "flashinfer", 1, None),
        ("B200", "DeepSeek-V3", [], "trtllm_mla", "trtllm_mla", 64, None),
        ("B200", "DeepSeek-V2", [], "flashinfer", "flashinfer", 1, None),
        ("MI300X", "DeepSeek-V3", [], "aiter", "aiter", 1, None),
        ("CPU-AMX", "Llama-3.1-8B", [], "intel_amx", "intel_amx", 1, None),
        ("B200", "Llama-3.1-8B", ["--prefill-attention-backend", "flashinfer",
                                  "--decode-attention-backend", "triton"],
         "flashinfer", "triton", 64, None),
    ],
)  # fmt: skip
def test_resolution_is_sglangs(
    source: Path,
    gpu: str,
    model: str,
    argv: list[str],
    prefill: str,
    decode: str,
    page: int,
    topk: int | None,
) -> None:
    outcome = run_startup(VERSION, gpu, model, argv)
    assert not outcome.refused, outcome.error
    assert (outcome.prefill_backend, outcome.decode_backend) == (prefill, decode)
    assert (outcome.page_size, outcome.topk) == (page, topk)


def test_kv4_hybrid_warning_is_captured(source: Path) -> None:
    argv = ["--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "triton"]
    outcome = run_startup(VERSION, "H200", "Llama-3.1-8B", [*argv, "--kv-cache-dtype", "fp4_e2m1"])
    assert not outcome.refused
    assert any(
        "Using KV4 with PREFILL = flashinfer and DECODE = triton" in w for w in outcome.warnings
    )


def test_argparse_rejection_is_a_refusal(source: Path) -> None:
    outcome = run_startup(VERSION, "H200", "Llama-3.1-8B", ["--attention-backend", "flashinfo"])
    assert outcome.refused
    assert outcome.error is not None and "invalid choice: 'flashinfo'" in outcome.error


def test_the_code_that_runs_is_the_wheels(source: Path) -> None:
    with open_runtime(VERSION, "B200") as runtime:
        for cls in (runtime.ServerArgs,):
            assert Path(inspect.getsourcefile(cls) or "").is_relative_to(source)
        server_args = runtime.server_args("Llama-3.1-8B", [])
        assert server_args.attention_backend == "trtllm_mha"  # filled by __post_init__
        assert server_args.get_attention_backends() == ("trtllm_mha", "trtllm_mha")
        with pytest.raises(RefusedError, match="FA4 backend is only supported for prefill"):
            runtime.server_args("Llama-3.1-8B", ["--attention-backend", "fa4"])


def test_sglang_agrees_with_the_model_inputs_the_comparison_states(source: Path) -> None:
    with open_runtime(VERSION, "H200") as runtime:
        for model in MODELS:
            server_args = runtime.server_args(model, [])
            stated = model_inputs(model)
            assert server_args.use_mla_backend() == (stated["attention_arch"] == "mla"), model
            config = server_args.get_model_config()
            assert config.get_num_kv_heads(1) == stated["kv_heads"], model
            assert config.hf_config.architectures[0] == stated["model_architecture"], model


def test_nothing_leaks_out_of_the_runtime(source: Path) -> None:
    before_torch = sys.modules.get("torch")
    environ = dict(os.environ)
    run_startup(VERSION, "CPU-AMX", "Llama-3.1-8B", [])
    assert sys.modules.get("torch") is before_torch
    assert not [name for name in sys.modules if name.split(".")[0] == "sglang"]
    assert dict(os.environ) == environ


def test_worker_processes_match_in_process_runs(source: Path) -> None:
    launches = [
        Launch("B200", "Llama-3.1-8B", ()),
        Launch("MI300X", "DeepSeek-V3", ("--kv-cache-dtype", "fp4_e2m1")),
        Launch("H200", "DeepSeek-V2", ("--attention-backend", "flashmla")),
    ]
    expected = [run_startup(VERSION, run.gpu, run.model, run.argv) for run in launches]
    assert run_many(VERSION, launches, workers=2) == expected


def test_a_stub_used_by_sglang_fails_loudly() -> None:
    module = stubs.placeholder_module("numpy")
    instance = module.ndarray()
    with pytest.raises(stubs.StubUsedError, match=r"numpy\.ndarray\.shape"):
        _ = instance.shape


def test_a_launch_that_reaches_a_stub_is_a_harness_error(source: Path) -> None:
    with open_runtime(VERSION, "H200") as runtime:
        # --speculative-moe-runner-backend makes post-init construct MoeRunnerBackend, which
        # lives in a module the harness stubs: the launch must not count as SGLang's answer.
        argv = ["--speculative-algorithm", "EAGLE", "--speculative-moe-runner-backend", "triton"]
        with pytest.raises(stubs.StubUsedError, match="MoeRunnerBackend"):
            runtime.outcome("DeepSeek-V3", argv)


def test_grid_spans_the_dimensions(source: Path) -> None:
    launches = grid_module.grid(VERSION)
    assert len(launches) >= 15_000
    flat = [" ".join(launch.argv) for launch in launches]
    for backend in grid_module.backends(VERSION):
        assert any(f"--attention-backend {backend}" in argv for argv in flat), backend
        assert any(
            f"--prefill-attention-backend fa4 --decode-attention-backend {backend}" in argv
            for argv in flat
        ), backend
    for kv in grid_module.kv_dtypes(VERSION)[1:]:
        assert any(f"--kv-cache-dtype {kv}" in argv for argv in flat), kv
    assert {launch.gpu for launch in launches} >= {"H200", "B200", "MI300X", "CPU-AMX"}
    assert any("--speculative-attention-mode decode" in argv for argv in flat)
    assert len(set(launches)) == len(launches)


def test_a_cached_wheel_is_not_downloaded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sglang-9.9.9-py3-none-any.whl").write_bytes(b"")
    monkeypatch.setenv("COMPAT_SGLANG_WHEELS", str(tmp_path))

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip was called although the wheel is cached")

    monkeypatch.setattr(subprocess, "run", no_download)
    assert wheel.wheel_path("9.9.9") == tmp_path / "sglang-9.9.9-py3-none-any.whl"


def test_a_failed_download_says_what_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPAT_SGLANG_WHEELS", str(tmp_path))
    calls: list[list[str]] = []

    def failing_pip(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(subprocess, "run", failing_pip)
    with pytest.raises(wheel.WheelUnavailableError, match=r"sglang==9\.9\.9.*No matching"):
        wheel.wheel_path("9.9.9")
    assert calls and "--no-deps" in calls[0] and "sglang==9.9.9" in calls[0]
