"""The CUDA version is an input (`--cuda-version`): a start-up check that reads it says what
was assumed when the launch does not give it, and a given one decides."""

from __future__ import annotations

import pytest
from refusals import cli

from compat.engine.launch import ASSUMED_CUDA

# SGLang issue 35080's grid: a hybrid GDN model on B300 with FlashInfer's linear-attention
# kernels; 0.5.18 refuses FlashInfer's GDN prefill on SM100+ below CUDA 13.
LAUNCH = (
    "--sglang-version", "0.5.18", "--gpu", "B300",
    "--model-architecture", "Qwen3_5MoeForConditionalGeneration",
)  # fmt: skip
COMMAND = (
    "--", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-35B-A3B",
    "--attention-backend", "triton", "--linear-attn-backend", "flashinfer",
    "--mamba-ssm-dtype", "bfloat16",
)  # fmt: skip


def test_an_unknown_cuda_is_the_assumed_one_and_the_answer_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["check", *LAUNCH, *COMMAND], capsys)
    assert code == 1
    assumed = ".".join(map(str, ASSUMED_CUDA))
    assert "[startup-linear-prefill-flashinfer]" in out
    assert f"CUDA not given: taken as {assumed} (--cuda-version)" in out


@pytest.mark.parametrize(("cuda", "code"), [("13.0", 0), ("13", 0), ("12.8", 1)])
def test_a_given_cuda_decides(capsys: pytest.CaptureFixture[str], cuda: str, code: int) -> None:
    got, out, _ = cli(["check", *LAUNCH, "--cuda-version", cuda, *COMMAND], capsys)
    assert got == code, out
    assert "CUDA not given" not in out
    assert ("[startup-linear-prefill-flashinfer]" in out) is (code == 1)


@pytest.mark.parametrize("bad", ["thirteen", "13.0.1", "0.9", "-1", ""])
def test_a_value_that_is_no_cuda_version_is_exit_2_naming_it(
    capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    code, out, err = cli(["check", *LAUNCH, "--cuda-version", bad, *COMMAND], capsys)
    assert code == 2
    assert f"--cuda-version: {bad!r} is not a CUDA version" in err
    assert "Traceback" not in out + err
