"""The guard reports where speculative decoding's first verify pass fails in the target's
attention backend, after the weights load.

The engine replays each release's verify gaps (`compat.engine.verify`, read from the wheels
and run there: tests/engine/test_verify_data.py) after the backend build and the kernels;
the guard words the failure as an error enforced at the warm-up, naming each link of the
chain, and `--parity` refuses it. The case is SGLang's own report sglang#36352 (0.5.18,
`--speculative-algorithm NGRAM --attention-backend torch_native`: the warm-up's verify
raises AttributeError in torch_native_backend.py); the EAGLE family's workers verify the
same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_cli import compat_check

from compat import MATRIX, AttentionConfig, check
from compat.cli.explain import explain_lines
from compat.engine.verify import VERIFY_RULE
from compat.guard.report import Enforcement, Report
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES

LLAMA: dict[str, Any] = {"model_architecture": "LlamaForCausalLM"}
ON_A100: dict[str, Any] = {"platform": "cuda", "compute_capability": (8, 0)}


def _report(release: str, **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **ON_A100, **LLAMA, **kwargs))


def _verify_errors(report: Report) -> list[str]:
    return [f.backend or "" for f in report.errors if f.rule == VERIFY_RULE]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_ngram_on_torch_native_starts_then_fails_its_first_verify(release: str) -> None:
    ngram = RELEASES[release].ngram
    report = _report(release, attention_backend="torch_native", speculative_algorithm=ngram)
    assert report.startup_reasons == ()  # SGLang starts it: no release refuses it
    [failure] = [f for f in report.errors if f.rule == VERIFY_RULE]
    assert failure.enforced is Enforcement.WARMUP and failure.backend == "torch_native"
    gap = RELEASES[release].verify.gaps[0]
    assert f"{gap.reads.file}:{gap.reads.line}" in failure.message
    assert failure.raised_at is not None and failure.raised_at.startswith(gap.reads.file)
    assert "then fails in the first forward pass" in report.startup_summary


def test_the_pages_speculative_cell_is_enforced_where_the_verify_fails() -> None:
    """The page's ❌ for speculative decoding on torch_native is SGLang's failure too where
    the verify runs on it (enforced at the warm-up); where torch_native only decodes and
    the verify runs on the prefill backend, the engine predicts nothing there, and the
    page's word stays its own."""
    ngram = _report("0.5.23", attention_backend="torch_native", speculative_algorithm="NGRAM")
    decode_only = _report(
        "0.5.23",
        prefill_attention_backend="triton",
        decode_attention_backend="torch_native",
        speculative_algorithm="NGRAM",
    )
    for report, enforced in ((ngram, Enforcement.WARMUP), (decode_only, Enforcement.DOCUMENTED)):
        spec = [f for f in report.errors if f.rule.startswith("spec-topk")]
        assert spec and {f.enforced for f in spec} == {enforced}, report.errors


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_eagle_family_fails_its_verify_where_its_draft_builds_elsewhere(release: str) -> None:
    """EAGLE3 on torch_native: the draft inherits it and its build fails first (the draft
    factory has no torch_native variant); with the draft on triton, the build passes and
    the target's verify fails, at the EAGLE workers' own switch to TARGET_VERIFY."""
    eagle3 = {"attention_backend": "torch_native", "speculative_algorithm": "EAGLE3"}
    inherited = _report(release, **eagle3, draft_attention_arch="mha")
    assert _verify_errors(inherited) == []
    assert any(f.enforced is Enforcement.BACKEND_BUILD for f in inherited.errors)
    moved = _report(
        release, **eagle3, speculative_draft_attention_backend="triton", draft_attention_arch="mha"
    )
    [failure] = [f for f in moved.errors if f.rule == VERIFY_RULE]
    gap = next(g for g in RELEASES[release].verify.gaps if g.algorithm == "EAGLE3")
    assert f"{gap.verify.file}:{gap.verify.line}" in failure.message
    assert "EAGLE3 verify pass" in failure.message


def test_the_verify_runs_on_the_prefill_backend_unless_the_mode_says_decode() -> None:
    release, ngram = "0.5.23", RELEASES["0.5.23"].ngram
    split = {"prefill_attention_backend": "torch_native", "decode_attention_backend": "triton"}
    assert _verify_errors(_report(release, speculative_algorithm=ngram, **split)) == [
        "torch_native"
    ]
    decode = {"speculative_attention_mode": "decode", "speculative_algorithm": ngram}
    assert _verify_errors(_report(release, **split, **decode)) == []
    swapped = {"prefill_attention_backend": "triton", "decode_attention_backend": "torch_native"}
    assert _verify_errors(_report(release, **swapped, speculative_algorithm=ngram)) == []
    assert _verify_errors(_report(release, **swapped, **decode)) == ["torch_native"]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ({"attention_backend": "torch_native"}, ("--attention-backend",)),
        (
            {"prefill_attention_backend": "torch_native", "decode_attention_backend": "triton"},
            ("--prefill-attention-backend", "--speculative-attention-mode"),
        ),
        (
            {"attention_backend": "torch_native", "decode_attention_backend": "triton"},
            ("--attention-backend", "--speculative-attention-mode"),
        ),
        (
            {
                "prefill_attention_backend": "triton",
                "decode_attention_backend": "torch_native",
                "speculative_attention_mode": "decode",
            },
            ("--decode-attention-backend", "--speculative-attention-mode"),
        ),
    ],
)
def test_the_finding_names_the_flag_that_chose_the_verifying_backend(
    flags: dict[str, str], named: tuple[str, ...]
) -> None:
    report = _report("0.5.23", speculative_algorithm="NGRAM", **flags)
    [failure] = [f for f in report.errors if f.rule == VERIFY_RULE]
    assert failure.flags == (*named, "--speculative-algorithm")


def test_nothing_is_predicted_without_ngram_or_off_torch_native() -> None:
    assert _verify_errors(_report("0.5.23", attention_backend="torch_native")) == []
    ngram = RELEASES["0.5.23"].ngram
    triton = _report("0.5.23", attention_backend="triton", speculative_algorithm=ngram)
    assert _verify_errors(triton) == []


def test_parity_refuses_it_and_its_fixes_pass() -> None:
    launch = ("--", "python3", "-m", "sglang.launch_server", "--attention-backend", "torch_native")
    launch += ("--speculative-algorithm", "NGRAM")
    machine = ("--gpu", "A100", "--sglang-version", "0.5.18", "--model-architecture")
    machine += ("LlamaForCausalLM", "--parity")
    fails = compat_check(*machine, *launch)
    assert fails.returncode == 1, fails.stdout + fails.stderr
    assert "what SGLang 0.5.18 does in the first forward pass:" in fails.stdout
    assert f"[{VERIFY_RULE}]" in fails.stdout
    report = _report("0.5.18", attention_backend="torch_native", speculative_algorithm="NGRAM")
    assert report.suggestions
    launched = {"attention_backend": "torch_native", "speculative_algorithm": "NGRAM"}
    for suggestion in report.suggestions:
        fields = {_field(flag): value for flag, value in suggestion.flags}
        dropped = {_field(flag) for flag in suggestion.removes}
        kept = {name: value for name, value in launched.items() if name not in dropped}
        assert _verify_errors(_report("0.5.18", **(kept | fields))) == [], suggestion.summary


def _field(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def test_explain_names_the_gap_of_the_backend_and_of_no_other() -> None:
    gap = RELEASES[NEWEST].verify.gaps[0]
    said = "\n".join(explain_lines(MATRIX, "torch_native"))
    assert "When speculative decoding verifies on it" in said
    assert f"{gap.reads.file}:{gap.reads.line}" in said
    assert "verifies on it" not in "\n".join(explain_lines(MATRIX, "triton"))


# -- flashinfer's sliding-window path (0.5.7 to 0.5.13) ----------------------------------
GEMMA3: dict[str, Any] = {
    "model_architecture": "Gemma3ForConditionalGeneration",
    "sliding_window": True,
    "multimodal": True,
}
ON_H100: dict[str, Any] = {"platform": "cuda", "compute_capability": (9, 0)}


def _gemma(release: str, **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **ON_H100, **GEMMA3, **kwargs))


@pytest.mark.parametrize("release", RELEASE_NAMES)
@pytest.mark.parametrize("algorithm", ["EAGLE", "NGRAM"])
def test_a_windowed_target_on_flashinfer_fails_its_verify_up_to_the_release_that_asks(
    release: str, algorithm: str
) -> None:
    """sglang#22679 and #8186: EAGLE on Gemma 2/3 with flashinfer dies at the target's
    capture in TARGET_VERIFY mode; 0.5.14's updater asks whether the lengths are None."""
    name = RELEASES[release].ngram if algorithm == "NGRAM" else algorithm
    report = _gemma(release, attention_backend="flashinfer", speculative_algorithm=name)
    assert report.startup_reasons == ()  # SGLang starts it
    gaps = RELEASES[release].verify.window_gaps
    if not gaps:
        assert _verify_errors(report) == [], release
        return
    [failure] = [f for f in report.errors if f.rule == VERIFY_RULE]
    assert failure.enforced is Enforcement.WARMUP and failure.backend == "flashinfer"
    reads = gaps[0].reads
    assert failure.raised_at == f"{reads.file}:{reads.line} ({reads.function})"
    assert "TypeError" in failure.message and "CUDA-graph capture" in failure.message


def test_the_window_gap_needs_a_windowed_model_of_a_class_that_reads_it() -> None:
    eagle = {"attention_backend": "flashinfer", "speculative_algorithm": "EAGLE"}
    assert _verify_errors(_gemma("0.5.12", **eagle)) == ["flashinfer"]
    # The same class with no window in its config: the runner's window is None.
    no_window = AttentionConfig(
        sglang_version="0.5.12", **ON_H100, **(GEMMA3 | {"sliding_window": False}), **eagle
    )
    assert _verify_errors(check(no_window)) == []
    # A window in the config of a class that does not define the method (Mistral's).
    mistral = GEMMA3 | {"model_architecture": "MistralForCausalLM", "multimodal": False}
    mistral_config = AttentionConfig(sglang_version="0.5.12", **ON_H100, **mistral, **eagle)
    assert _verify_errors(check(mistral_config)) == []
    # Off flashinfer, or with the verify on another backend, nothing.
    assert _verify_errors(_gemma("0.5.12", attention_backend="triton",
                                 speculative_algorithm="EAGLE")) == []  # fmt: skip
    split = {"prefill_attention_backend": "fa3", "decode_attention_backend": "flashinfer"}
    assert _verify_errors(_gemma("0.5.12", **split, speculative_algorithm="EAGLE")) == []


def test_a_hybrid_sliding_window_target_meets_the_window_gap_through_its_config() -> None:
    """MiMo-V2-Flash defines no window method: the runner reads the config's window, because
    the release's ModelConfig runs it as a hybrid sliding-window model; with the hybrid pool
    off (or the hierarchical cache, which turns it off for MiMo-V2) it has none."""
    mimo = {"model_architecture": "MiMoV2FlashForCausalLM", "sliding_window": True}
    eagle = {"attention_backend": "flashinfer", "speculative_algorithm": "EAGLE", "tp_size": 4}
    gaps = RELEASES["0.5.11"].verify.window_gaps
    assert "MiMoV2FlashForCausalLM" in gaps[0].hybrid
    assert "MiMoV2FlashForCausalLM" not in gaps[0].architectures

    def errors(**more: Any) -> list[str]:
        config = AttentionConfig(sglang_version="0.5.11", **ON_H100, **(mimo | eagle | more))
        return _verify_errors(check(config))

    assert errors() == ["flashinfer"]
    assert errors(disable_hybrid_swa_memory=True) == []
    assert errors(enable_hierarchical_cache=True) == []
    assert errors(sliding_window=False) == []
