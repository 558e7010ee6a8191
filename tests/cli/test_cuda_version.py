"""The CUDA version is an input (`--cuda-version`): unset, it is the CUDA of the release's
official image; a start-up check that reads it says what was assumed, and a given one
decides."""

from __future__ import annotations

import json

import msgspec
import pytest
from refusals import cli

from compat.engine.startup.replay import replay
from compat.engine.startup.sub_backends import SubBackendRefused
from compat.engine.sub_backends import SubRefusal
from compat.guard.startup_words import said
from compat.inputs.config import AttentionConfig
from compat.inputs.validation import parse
from compat.releases import RELEASE_NAMES, RELEASES

# SGLang issue 35080's grid: a hybrid GDN model on B300 with FlashInfer's linear-attention
# kernels; 0.5.18 refuses FlashInfer's GDN prefill on SM100+ below CUDA 13.
RELEASE = "0.5.18"
LAUNCH = (
    "--sglang-version", RELEASE, "--gpu", "B300",
    "--model-architecture", "Qwen3_5MoeForConditionalGeneration",
)  # fmt: skip
COMMAND = (
    "--", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-35B-A3B",
    "--attention-backend", "triton", "--linear-attn-backend", "flashinfer",
    "--mamba-ssm-dtype", "bfloat16",
)  # fmt: skip
PREFILL_RULE = "[startup-linear-prefill-flashinfer]"


def test_an_unknown_cuda_is_the_release_images_and_decides_as_it_would(
    capsys: pytest.CaptureFixture[str],
) -> None:
    image = RELEASES[RELEASE].image_cuda.version
    code, out, _ = cli(["check", *LAUNCH, *COMMAND], capsys)
    assert code == (1 if image < (13, 0) else 0), out
    assert (PREFILL_RULE in out) is (image < (13, 0))


@pytest.mark.parametrize("release", [RELEASE_NAMES[0], RELEASE_NAMES[-1]])
def test_the_answer_says_which_cuda_it_took(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    image = RELEASES[release].image_cuda.label
    launch = ["check", "--sglang-version", release, "--gpu", "H100", "--attention-arch", "mha"]
    code, out, _ = cli(launch, capsys)
    assert code == 0, out
    assert (
        f"CUDA not given: taken as {image}, the CUDA of SGLang {release}'s official image "
        "(--cuda-version)" in out
    )
    code, out, _ = cli([*launch, "--json"], capsys)
    assert json.loads(out)["assumed_cuda"] == image
    code, out, _ = cli([*launch, "--cuda-version", "12.8", "--json"], capsys)
    assert json.loads(out)["assumed_cuda"] is None
    code, out, _ = cli([*launch, "--cuda-version", "12.8"], capsys)
    assert "CUDA not given" not in out


def test_no_cuda_is_assumed_off_cuda(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["check", "--gpu", "MI300X", "--attention-arch", "mha"], capsys)
    assert code == 0, out
    assert "CUDA not given" not in out


def _refusal(image_cuda: tuple[int, int], cuda: tuple[int, int] | None) -> SubBackendRefused:
    config = AttentionConfig(
        sglang_version=RELEASE, platform="cuda", attention_arch="mha",
        compute_capability=(10, 3), cuda_version=cuda,
        model_architecture="Qwen3_5MoeForConditionalGeneration",
        attention_backend="triton", linear_attn_backend="flashinfer",
        mamba_ssm_dtype="bfloat16",
    )  # fmt: skip
    # The release with another image: what a release whose image is CUDA 12 replays.
    launch = msgspec.structs.replace(parse(config), image_cuda=image_cuda)
    refused = [
        event
        for event in replay(launch, RELEASES[RELEASE]).events
        if isinstance(event, SubBackendRefused)
        and event.check is SubRefusal.LINEAR_PREFILL_FLASHINFER
    ]
    assert len(refused) == 1, refused
    return refused[0]


def test_the_assumed_cuda_is_the_images_and_the_finding_says_which() -> None:
    event = _refusal((12, 8), None)
    assert event.cuda_assumed == (12, 8)
    assert "CUDA not given: taken as 12.8, the CUDA of this release's official image " in said(
        event
    )


def test_a_given_cuda_is_not_said_to_be_assumed() -> None:
    event = _refusal((13, 0), (12, 9))
    assert event.cuda_assumed is None
    assert "CUDA not given" not in said(event)


@pytest.mark.parametrize(("cuda", "code"), [("13.0", 0), ("13", 0), ("12.9", 1), ("12.8", 1)])
def test_a_given_cuda_decides(capsys: pytest.CaptureFixture[str], cuda: str, code: int) -> None:
    got, out, _ = cli(["check", *LAUNCH, "--cuda-version", cuda, *COMMAND], capsys)
    assert got == code, out
    assert "CUDA not given" not in out
    assert (PREFILL_RULE in out) is (code == 1)


@pytest.mark.parametrize("bad", ["thirteen", "13.0.1", "0.9", "-1", ""])
def test_a_value_that_is_no_cuda_version_is_exit_2_naming_it(
    capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    code, out, err = cli(["check", *LAUNCH, "--cuda-version", bad, *COMMAND], capsys)
    assert code == 2
    assert f"--cuda-version: {bad!r} is not a CUDA version" in err
    assert "Traceback" not in out + err
