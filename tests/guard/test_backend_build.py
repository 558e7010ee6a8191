"""The guard reports where SGLang fails building the backends, after start-up.

The engine predicts each release's attention-registry checks (`compat.engine.build`, proved
against the releases' own registries by tests/engine/test_conformance_build.py); the guard
words the failure as an error enforced at the backend build, naming the registry line, and
`--parity` refuses it as it refuses a start-up refusal.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.engine.verify import VERIFY_RULE
from compat.guard.build_words import is_build_finding
from compat.guard.report import Enforcement, Report
from compat.releases import RELEASES

B200: dict[str, Any] = {"platform": "cuda", "compute_capability": (10, 0)}
RTX_PRO_6000: dict[str, Any] = {"platform": "cuda", "compute_capability": (12, 0)}
LLAMA: dict[str, Any] = {"model_architecture": "LlamaForCausalLM", "attention_arch": "mha"}
QWEN3_NEXT: dict[str, Any] = {
    "model_architecture": "Qwen3NextForCausalLM",
    "attention_arch": "mha",
    "model_type": "qwen3_next",
}
DEEPSEEK: dict[str, Any] = {"model_architecture": "DeepseekV3ForCausalLM", "attention_arch": "mla"}


def _report(release: str, **kwargs: Any) -> Report:
    return check(AttentionConfig(sglang_version=release, **kwargs))


def _build_errors(report: Report) -> list[str]:
    """SGLang's own backend-build failures (not the page's findings retagged as such)."""
    return [f.rule for f in report.errors if is_build_finding(f)]


@pytest.mark.parametrize(("release", "line"), [("0.5.7", 132), ("0.5.16", 201), ("0.5.23", 243)])
def test_fa3_on_a_b200_fails_at_the_releases_own_line(release: str, line: int) -> None:
    report = _report(release, attention_backend="fa3", **B200, **LLAMA)
    build = [f for f in report.errors if f.rule == "build-gpu"]
    assert len(build) == 1 and build[0].enforced is Enforcement.BACKEND_BUILD
    assert f"attention_registry.py:{line}" in build[0].message
    assert "create_flashattention_v3_backend" in build[0].message
    assert report.sglang_fails and not report.refused_at_startup


def test_a_launch_sglang_refuses_at_startup_has_no_build_finding() -> None:
    # torch_native refuses EAGLE topk > 1 with paged KV at start-up: nothing is built.
    report = _report(
        "0.5.23",
        attention_backend="torch_native",
        page_size=64,
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=4,
        speculative_num_steps=3,
        speculative_num_draft_tokens=4,
        **B200,
        **LLAMA,
    )
    assert report.refused_at_startup and not _build_errors(report)


def test_hybrid_gdn_allow_lists_follow_the_release_and_the_gpu_class() -> None:
    # 0.5.23: fa4 is allowed on SM100-class Blackwell, not on SM120-class parts.
    assert not _build_errors(_report("0.5.23", attention_backend="fa4", **B200, **QWEN3_NEXT))
    sm120 = _report("0.5.23", attention_backend="fa4", **RTX_PRO_6000, **QWEN3_NEXT)
    assert _build_errors(sm120) == ["build-hybrid-gdn-blackwell"]
    # 0.5.9 allowed only triton and trtllm_mha on any Blackwell part.
    old = _report("0.5.9", attention_backend="fa4", **B200, **QWEN3_NEXT)
    assert _build_errors(old) == ["build-hybrid-gdn-blackwell"]
    assert "attention_registry.py:205" in old.errors[0].message
    # Not a hybrid GDN model: the wrapper checks nothing.
    assert not _build_errors(_report("0.5.23", attention_backend="fa4", **RTX_PRO_6000, **LLAMA))


def test_hpc_ops_refuses_speculative_decoding_when_it_builds() -> None:
    spec = {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1}
    spec |= {"speculative_num_steps": 3, "speculative_num_draft_tokens": 4}
    h100 = {"platform": "cuda", "compute_capability": (9, 0)}
    for release in ("0.5.17", "0.5.23"):
        report = _report(release, attention_backend="hpc_ops", **h100, **LLAMA, **spec)
        assert not report.refused_at_startup
        assert _build_errors(report) == ["build-no-speculative"]
    assert not _build_errors(_report("0.5.23", attention_backend="hpc_ops", **h100, **LLAMA))


def test_llada2_cfg_flashinfer_is_built_for_mha_models_only() -> None:
    # The factory refuses MLA models; any non-MLA model gets FlashInfer with LLaDA2's masks,
    # which only a LLaDA-Image conditioning pass turns on.
    mla = _report("0.5.23", attention_backend="llada2_cfg_flashinfer", **B200, **DEEPSEEK)
    assert "build-needs-mha" in _build_errors(mla)
    assert not _build_errors(
        _report("0.5.23", attention_backend="llada2_cfg_flashinfer", **B200, **LLAMA)
    )


def test_every_release_has_its_registry_checks() -> None:
    for release, rules in RELEASES.items():
        assert rules.build.hybrid_gdn is not None, release
        backends = {check.backend for check in rules.build.checks}
        assert backends <= rules.backend_set | {"nsa"}, release  # checks name known backends


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, text=True, check=False
    )


def test_parity_refuses_a_backend_build_failure_and_passes_a_page_only_problem() -> None:
    machine = ("--gpu", "B200", "--model-architecture", "LlamaForCausalLM", "--sglang-version")
    machine += ("0.5.23",)
    fails = _cli("check", *machine, "--attention-backend", "fa3", "--parity")
    assert fails.returncode == 1, fails.stderr
    assert "what SGLang 0.5.23 does building the backend:" in fails.stdout
    assert "[build-gpu]" in fails.stdout
    # The page documents flashmla for MLA models only; 0.5.23's code builds it for Llama.
    passes = _cli("check", *machine, "--attention-backend", "flashmla", "--parity")
    assert passes.returncode == 0, passes.stdout + passes.stderr
    assert "[arch-refused]" in passes.stdout


def test_parity_refuses_a_draft_model_whose_backend_has_no_draft_variant() -> None:
    # torch_native passes the registry, but the EAGLE worker's draft factory has no draft
    # variant of it: the page's topk-1 cell is SGLang's own failure, after the weights load.
    machine = ("--gpu", "B200", "--model-architecture", "LlamaForCausalLM", "--sglang-version")
    spec = ("--attention-backend", "torch_native", "--speculative-algorithm", "EAGLE")
    spec += ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3")
    spec += ("--speculative-num-draft-tokens", "4", "--parity")
    fails = _cli("check", *machine, "0.5.23", *spec)
    assert fails.returncode == 1, fails.stdout + fails.stderr
    assert "[build-no-draft-variant]" in fails.stdout
    assert "the draft model" in fails.stdout
    assert "speculative/draft_utils.py:64, _create_backend" in fails.stdout


@pytest.mark.parametrize("release", ["0.5.7", "0.5.16", "0.5.23"])
def test_an_mla_target_on_trtllm_mla_builds_its_draft(release: str) -> None:
    # trtllm_mla has a draft variant in every release, for MLA models only.
    spec = {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1}
    spec |= {"speculative_num_steps": 3, "speculative_num_draft_tokens": 4}
    report = _report(release, attention_backend="trtllm_mla", **spec, **B200, **DEEPSEEK)
    assert not _build_errors(report), report.errors
    no_variant = _report(release, attention_backend="flex_attention", **B200, **LLAMA)
    assert not _build_errors(no_variant)  # without speculation, no draft is built


def test_explain_lists_what_the_registry_requires() -> None:
    result = _cli("explain", "hpc_ops")
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("When SGLang builds it")[1].split("\n\n")[0]
    assert "non-MLA (MHA) models only" in section
    assert "no speculative decoding" in section
    assert "attention_registry.py:295, create_hpc_ops_backend" in section
    # Nor has it a draft variant in the draft factory's map.
    assert "no draft variant" in section and "draft_utils.py:64, _create_backend" in section
    triton = _cli("explain", "triton").stdout.split("When SGLang builds it")[1]
    assert "no draft variant" not in triton.split("\n\n")[0]


def test_the_catalog_tells_thor_and_the_rocm_architectures_apart() -> None:
    from compat.inputs.gpus import gpu_named
    from compat.vocab.hardware import ComputeCapability, RocmArch

    thor = gpu_named("Jetson Thor")
    assert thor.capability == ComputeCapability(11, 0)
    assert {gpu_named(n).rocm_arch for n in ("MI300X", "MI325X")} == {RocmArch.GFX942}
    assert {gpu_named(n).rocm_arch for n in ("MI350X", "MI355X")} == {RocmArch.GFX950}
    # fa3's factory asserts sm8x/sm9x: Thor (sm110) fails; torch on ROCm reports gfx9 as 9.x.
    on_thor = _report("0.5.23", attention_backend="fa3", platform="cuda",
                      compute_capability=(11, 0), **LLAMA)  # fmt: skip
    assert _build_errors(on_thor) == ["build-gpu"]
    on_rocm = _report("0.5.23", attention_backend="fa3", platform="rocm", **LLAMA)
    assert not _build_errors(on_rocm)


def test_the_minicpm_sparse_backends_are_built_for_minicpm_only() -> None:
    # MiniCPMSparseBackend's constructor refuses any config but MiniCPM's hybrid one.
    llama = _report("0.5.23", attention_backend="minicpm_flashattn", **B200, **LLAMA)
    assert _build_errors(llama) == ["build-model-family"]
    message = next(f.message for f in llama.errors if f.rule == "build-model-family")
    assert "minicpm/backend.py:165" in message and "MiniCPMSparseBackend.__init__" in message
    minicpm = {"model_architecture": "MiniCPMSALAForCausalLM", "attention_arch": "mha"}
    sala = _report("0.5.23", attention_backend="minicpm_flashinfer", model_type="minicpm_sala",
                   **B200, **minicpm)  # fmt: skip
    assert "build-model-family" not in _build_errors(sala)


def test_hpc_ops_is_built_on_sm90_only() -> None:
    h100 = {"platform": "cuda", "compute_capability": (9, 0)}
    assert not _build_errors(_report("0.5.23", attention_backend="hpc_ops", **h100, **LLAMA))
    on_b200 = _report("0.5.23", attention_backend="hpc_ops", **B200, **LLAMA)
    assert _build_errors(on_b200) == ["build-gpu"]
    assert "hpc_ops_backend.py:140" in on_b200.errors[0].message


SPEC: dict[str, Any] = {
    "speculative_algorithm": "EAGLE",
    "speculative_eagle_topk": 1,
    "speculative_num_steps": 3,
    "speculative_num_draft_tokens": 4,
}


def test_a_draft_backend_of_its_own_is_built_instead_of_the_target_one() -> None:
    # torch_native has no draft variant: inherited, the draft fails; on triton it builds.
    inherits = _report("0.5.23", attention_backend="torch_native", **SPEC, **B200, **LLAMA)
    assert _build_errors(inherits) == ["build-no-draft-variant"]
    assert "inherits the target's torch_native" in inherits.errors[0].message
    own = _report("0.5.23", attention_backend="torch_native", **SPEC, **B200, **LLAMA,
                  speculative_draft_attention_backend="triton")  # fmt: skip
    assert not _build_errors(own)
    # Built, the target's first verify then fails on torch_native (tests/guard/test_verify_pass.py).
    assert VERIFY_RULE in {f.rule for f in own.errors}
    assert {f.enforced for f in own.errors} <= {Enforcement.WARMUP, Enforcement.DOCUMENTED}


def test_a_draft_flag_without_a_draft_variant_fails_naming_the_flag() -> None:
    # The flag is free text in every release: start-up takes torch_native, the draft's
    # runner builds it, and the factory has no draft variant of it (draft_utils.py:35).
    report = _report("0.5.7", attention_backend="triton", **SPEC, **B200, **LLAMA,
                     speculative_draft_attention_backend="torch_native")  # fmt: skip
    assert _build_errors(report) == ["build-no-draft-variant"]
    finding = report.errors[0]
    assert finding.flags[0] == "--speculative-draft-attention-backend"
    assert "runs on torch_native (--speculative-draft-attention-backend)" in finding.message
    assert "speculative/draft_utils.py:35" in finding.message
    # The first fix drops the flag: the draft inherits the target's triton, checked to pass.
    first = report.suggestions[0]
    assert first.flags == () and first.removes == ("--speculative-draft-attention-backend",)


QWEN4_EXP: dict[str, Any] = {
    "model_architecture": "Qwen4ExpForConditionalGeneration",
    "attention_arch": "mha",
}
H200: dict[str, Any] = {"platform": "cuda", "compute_capability": (9, 0)}


@pytest.mark.parametrize("draft", [None, "qsa", "torch_native"])
def test_a_qsa_model_drafts_on_qsa_whatever_the_backend_and_no_other_model_does(
    draft: str | None,
) -> None:
    # 0.5.20+: the EAGLE worker hands the factory the draft config's QSA profile, and the
    # factory builds QSA's own draft backends ahead of its maps; any other model looks the
    # backend up in the map, which has no qsa (draft_utils.py:64, _create_backend).
    flags = {**SPEC, **H200, **QWEN4_EXP, "attention_backend": "qsa",
             "speculative_draft_attention_backend": draft}  # fmt: skip
    assert not _build_errors(_report("0.5.23", qsa_profile=True, **flags))
    other = _report("0.5.23", **flags)
    assert _build_errors(other) == ["build-no-draft-variant"]
    assert other.errors[0].raised_at == "sglang/srt/speculative/draft_utils.py:64 (_create_backend)"
    # Before 0.5.20 the factory reads no profile: torch_native has no draft variant there.
    if draft == "torch_native":
        older = {**flags, "attention_backend": "triton"}
        assert _build_errors(_report("0.5.19", qsa_profile=True, **older)) == [
            "build-no-draft-variant"
        ]


def test_explain_names_the_qsa_draft_path_beside_a_missing_draft_variant() -> None:
    section = _cli("explain", "qsa").stdout.split("When SGLang builds it")[1].split("\n\n")[0]
    assert "no draft variant" in section
    assert "unless the draft model has a QSA (Qwen sparse attention) indexer profile" in section
    assert "draft_utils.py:89" in section


def test_an_mha_draft_of_an_mla_target_fails_in_its_own_runner_on_trtllm_mla() -> None:
    # An EAGLE3 draft is a Llama (MHA) model: the draft's runner builds the target's
    # trtllm_mla for it, and the registry refuses a model without MLA (line 59 in 0.5.11).
    eagle3 = {**SPEC, "speculative_algorithm": "EAGLE3"}
    same = _report("0.5.11", attention_backend="trtllm_mla", **eagle3, **B200, **DEEPSEEK)
    assert not _build_errors(same)
    report = _report("0.5.11", attention_backend="trtllm_mla", **eagle3, **B200, **DEEPSEEK,
                     draft_attention_arch="mha")  # fmt: skip
    assert _build_errors(report) == ["build-needs-mla"]
    message = report.errors[0].message
    assert "for the draft model" in message and "attention_registry.py:59" in message
    # The first fix keeps the target's backend and gives the draft one of its own; the
    # guard checked it passes.
    first = report.suggestions[0]
    assert first.flags[0][0] == "--speculative-draft-attention-backend"
    fixed = _report("0.5.11", attention_backend="trtllm_mla", **eagle3, **B200, **DEEPSEEK,
                    draft_attention_arch="mha",
                    speculative_draft_attention_backend=first.flags[0][1])  # fmt: skip
    assert not fixed.sglang_fails


def test_a_deprecated_name_for_the_draft_is_renamed_as_start_up_renames_it() -> None:
    # `_handle_deprecated_args` renames `compressed` to dsv4 for the draft's flag too; dsv4
    # has a draft variant (0.5.12's map), so the draft's factory does not refuse it.
    report = _report("0.5.12", attention_backend="triton", **SPEC, **B200, **LLAMA,
                     speculative_draft_attention_backend="compressed")  # fmt: skip
    assert "build-no-draft-variant" not in _build_errors(report)


def test_a_draft_attention_arch_outside_the_choices_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"--draft-attention-arch.*valid choices: mha, mla"):
        AttentionConfig(draft_attention_arch="gqa")


def test_the_native_nvfp4_cache_runs_the_draft_on_trtllm_mha() -> None:
    # 0.5.21's `_handle_kv4_compatibility`: on SM100 with trtllm_mha and an NVFP4 cache, a
    # draft model runs on trtllm_mha; another draft backend is refused at start-up.
    nvfp4 = {"attention_backend": "trtllm_mha", "kv_cache_dtype": "nvfp4", **SPEC, **B200}
    unset = _report("0.5.21", **nvfp4, **LLAMA)
    assert "startup-nvfp4-draft-backend" in {f.rule for f in unset.infos}
    assert not unset.sglang_fails
    other = _report("0.5.21", **nvfp4, **LLAMA, speculative_draft_attention_backend="triton")
    assert other.refused_at_startup
    assert "startup-nvfp4-draft-backend" in {f.rule for f in other.errors}
    # 0.5.20 has no such rule: the draft builds on triton.
    assert not _report("0.5.20", **nvfp4, **LLAMA,
                       speculative_draft_attention_backend="triton").refused_at_startup  # fmt: skip


def test_an_mha_eagle3_draft_of_kimi_on_h20_builds_on_the_target_backend() -> None:
    # sglang#25673 (0.5.11, H20): Kimi-K2.6 with its plain (MHA) EAGLE3 draft came up. The
    # draft runner builds the target's backend for an MHA model; forcing trtllm_mla onto
    # that draft is refused by the registry, for the draft model.
    kimi = {"model_architecture": "KimiK25ForConditionalGeneration", "attention_arch": "mla",
            "trust_remote_code": True, "tp_size": 8, "draft_attention_arch": "mha"}  # fmt: skip
    h20 = {"platform": "cuda", "compute_capability": (9, 0)}
    report = _report("0.5.11", **SPEC, **h20, **kimi)
    assert not report.sglang_fails, [f.message for f in report.errors]
    forced = _report("0.5.11", **SPEC, **h20, **kimi,
                     speculative_draft_attention_backend="trtllm_mla")  # fmt: skip
    assert _build_errors(forced) == ["build-needs-mla"]
    assert "runs on trtllm_mla (--speculative-draft-attention-backend)" in forced.errors[0].message
