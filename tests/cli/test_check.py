"""`compat check` as an operator runs it: exit codes, findings, suggestions, launch commands.

The first section runs the acceptance commands of SGLang PR #14467 literally and pins its
baseline; every other test picks its backends from the live matrix, so it passes after
any single-cell change of `compat/matrix.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cells import FP4, fp4_accepted_on_b200, fp4_refused_on_b200

from compat import MATRIX, AttentionConfig, check
from compat.claim.columns import ColumnId
from compat.cli import COMMANDS
from compat.vocab.terms import Arch

B200 = ["--platform", "cuda", "--compute-capability", "10.0"]
BASELINE_HINT = (
    "if the matrix changed on purpose, update this acceptance test in tests/cli/test_check.py "
    "(and PR_FA4_PARTNERS / PR_SINGLE_BACKEND in tests/guard/test_rules.py) to the new baseline"
)


def compat(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


# == The PR #14467 baseline: the acceptance commands, run literally ======================
#
# These tests pin the PR's cases and are meant to fail when an FP4 cell changes, even on
# purpose; their messages say which baseline to record.


def test_fa4_with_trtllm_mha_decode_is_refused_with_a_verified_partner() -> None:
    result = compat(
        "check",
        "--attention-arch",
        "mha",
        *B200,
        "--prefill-attention-backend",
        "fa4",
        "--decode-attention-backend",
        "trtllm_mha",
        "--kv-cache-dtype",
        "fp4_e2m1",
    )
    assert result.returncode == 1, f"PR #14467 baseline: {result.stdout}; {BASELINE_HINT}"
    assert "kv4-fa4-decode-partner" in result.stdout
    assert "--decode-attention-backend triton" in result.stdout, (
        f"PR #14467 baseline: triton is the first MHA decode partner of fa4; {BASELINE_HINT}"
    )


def test_fa4_with_triton_decode_passes() -> None:
    result = compat(
        "check",
        "--attention-arch",
        "mha",
        *B200,
        "--prefill-attention-backend",
        "fa4",
        "--decode-attention-backend",
        "triton",
        "--kv-cache-dtype",
        "fp4_e2m1",
    )
    assert result.returncode == 0, (
        f"PR #14467 baseline: fa4 + triton with an FP4 cache passes; {result.stdout}; "
        f"{BASELINE_HINT}"
    )
    assert result.stdout.startswith("compatible")


def test_an_fp4_refusal_suggests_the_fp4_mla_backends() -> None:
    # flashmla was the example until `compat audit 0.5.7` found SGLang 0.5.7's own KV4 check
    # accepting it (a disputed ❌, a warning): take the first backend the FP4 cell refuses.
    backend = fp4_refused_on_b200(Arch.MLA)
    result = compat(
        "check",
        "--attention-arch",
        "mla",
        *B200,
        "--attention-backend",
        backend,
        "--kv-cache-dtype",
        "fp4_e2m1",
    )
    assert result.returncode == 1, (
        f"PR #14467 baseline: {backend} refuses an FP4 cache; {result.stdout}; {BASELINE_HINT}"
    )
    for backend in ("trtllm_mla", "cutlass_mla", "flashinfer"):
        assert f"--attention-backend {backend}" in result.stdout, (
            f"PR #14467 baseline: {backend} is suggested for FP4 MLA; {BASELINE_HINT}"
        )


def test_fp4_on_rocm_is_refused() -> None:
    result = compat(
        "check",
        "--attention-arch",
        "mha",
        "--platform",
        "rocm",
        "--attention-backend",
        "aiter",
        "--kv-cache-dtype",
        "fp4_e2m1",
    )
    assert result.returncode == 1, f"PR #14467 baseline: {result.stdout}; {BASELINE_HINT}"
    assert "kv4-requires-cuda" in result.stdout


# == Mechanisms: pass after any single-cell change ==============================================


def test_typo_gets_did_you_mean_and_exit_2() -> None:
    result = compat("check", "--attention-arch", "mha", *B200, "--attention-backend", "flashinferr")
    assert result.returncode == 2
    assert "did you mean flashinfer" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--page-size", "abc"], "--page-size"),
        (["--page-size", "0"], "positive"),
        (["--speculative-eagle-topk", "-1"], "positive"),
        (["--compute-capability", "hopper"], "hopper"),
        (["--attention-arch", "gqa"], "mha"),
        (["--kv-cache-dtype", "fp4"], "fp4_e2m1"),
    ],
)
def test_bad_values_exit_2(args: list[str], needle: str) -> None:
    base = {"--attention-arch": "mha"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    flat = [item for pair in base.items() for item in pair]
    result = compat("check", *flat, "--platform", "cuda")
    assert result.returncode == 2
    assert needle in result.stderr


def test_missing_architecture_is_explained() -> None:
    result = compat("check", *B200, "--attention-backend", "triton")
    assert result.returncode == 2
    assert "--attention-arch" in result.stderr and "--model-config" in result.stderr


def test_a_model_path_the_zoo_knows_is_judged_from_its_published_config() -> None:
    """An operator pastes `--model-path openai/gpt-oss-120b` with no local copy of its
    config: it is judged from the published config the package holds, and the report says
    so (#43); an unknown repository still needs the model's architecture."""
    launch = ["--", "python3", "-m", "sglang.launch_server", "--model-path"]
    known = compat("check", *B200, *launch, "OpenAI/gpt-oss-120b")
    assert known.returncode in (0, 1), known.stderr
    assert known.returncode == (0 if known.stdout.startswith("compatible") else 1)
    assert "model config: openai/gpt-oss-120b's published config.json" in known.stdout
    unknown = compat("check", *B200, *launch, "example-org/no-such-model")
    assert unknown.returncode == 2 and "--attention-arch" in unknown.stderr
    followed = compat("check", *B200, "--model", "gpt-oss-120b", *launch, "openai/gpt-oss-120b")
    assert followed.returncode in (0, 1) and "published config.json" in followed.stdout


def test_whole_launch_command_after_double_dash() -> None:
    backend = fp4_accepted_on_b200(Arch.MLA)[0]
    result = compat(
        "check",
        "--attention-arch",
        "mla",
        *B200,
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "X",
        "--tp",
        "8",
        "--attention-backend",
        backend,
        "--kv-cache-dtype=fp4_e2m1",
        "--trust-remote-code",
        "--mem-fraction-static",
        "0.8",
        "--enable-metrics",
    )
    assert result.returncode == 0, result.stdout
    assert f"backend {backend}" in result.stdout and "KV fp4_e2m1" in result.stdout
    # The flags the guard reads are not ignored; the others are listed.
    ignored = next(line for line in result.stdout.splitlines() if line.startswith("ignored"))
    assert "--mem-fraction-static 0.8" in ignored and "--enable-metrics" in ignored
    assert "--tp" not in ignored and "--trust-remote-code" not in ignored


def test_launch_command_conflicting_with_a_flag_is_invalid() -> None:
    result = compat(
        "check",
        "--attention-arch",
        "mla",
        *B200,
        "--attention-backend",
        "fa3",
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--attention-backend",
        "trtllm_mla",
    )
    assert result.returncode == 2
    assert "give it once" in result.stderr


def test_json_output_is_the_report() -> None:
    # An MLA backend the live matrix refuses an FP4 cache, on hardware where nothing else bars it.
    backend = fp4_refused_on_b200(Arch.MLA)
    result = compat(
        "check",
        "--attention-arch",
        "mla",
        *B200,
        "--attention-backend",
        backend,
        "--kv-cache-dtype",
        FP4,
        "--json",
    )
    assert result.returncode == 1
    data = json.loads(result.stdout)
    report = check(
        AttentionConfig(
            attention_arch="mla",
            attention_backend=backend,
            kv_cache_dtype=FP4,
            platform="cuda",
            compute_capability=(10, 0),
        )
    )
    expected = report.to_dict()
    assert {key: data[key] for key in expected} == expected
    assert data["ok"] is False
    (documented,) = [error for error in data["errors"] if error["rule"] == "fp4-kv"]
    assert documented["value"] == backend
    fp4_capable = set(MATRIX.supporting(Arch.MLA, ColumnId.FP4_KV))
    assert documented["allowed"] and set(documented["allowed"]) <= fp4_capable
    assert data["resolved"]["page_size"] == report.resolved.page_size
    # The backend suggestions (the guard keeps a few) are backends that accept FP4 here.
    backends = {s["flags"] for s in data["suggestions"] if "--attention-backend" in s["flags"]}
    assert backends
    assert backends <= {f"--attention-backend {b}" for b in fp4_accepted_on_b200(Arch.MLA)}


@pytest.mark.parametrize("spelling", ["10.0", "sm100", "100"])
def test_compute_capability_spellings(spelling: str) -> None:
    result = compat(
        "check",
        "--attention-arch",
        "mha",
        "--platform",
        "cuda",
        "--compute-capability",
        spelling,
        "--attention-backend",
        "trtllm_mha",
    )
    assert result.returncode == 0
    assert "sm100" in result.stdout


def test_platform_is_detected_when_not_given() -> None:
    result = compat("check", "--attention-arch", "mha", "--attention-backend", "torch_native")
    assert result.returncode == 0, result.stderr
    assert "(detected)" in result.stdout


def test_unknown_subcommand_suggests() -> None:
    result = compat("chek")
    assert result.returncode == 2
    assert "did you mean 'check'" in result.stderr or "did you mean check" in result.stderr


def test_a_command_line_builds_its_own_command_alone() -> None:
    """`compat check ...` imports and builds check's parser only, and reads no installed
    version; a line that names no command lists them all."""
    code = (
        "import sys; from compat.cli import main; "
        "code = main(['check', '--platform', 'cuda', '--attention-arch', 'mha']); "
        "print(code, sorted(m for m in sys.modules if m.startswith('compat.cli.')), "
        "'importlib.metadata' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "0 ['compat.cli.check'] False"
    listed = compat("--help").stdout
    assert all(f"    {name} " in listed for name in COMMANDS), listed


# == The speculative draft model's config ========================================================

_KIMI_EAGLE3 = (
    *("--sglang-version", "0.5.10", "--gpu", "GB300"),
    *("--model-architecture", "KimiK25ForConditionalGeneration"),
    *("--", "python3", "-m", "sglang.launch_server", "--tp", "4", "--trust-remote-code"),
    *("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3"),
    *("--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
    *("--speculative-draft-model-path", "org/a-draft-not-on-this-machine"),
)


def test_the_draft_model_config_decides_the_draft_build(tmp_path: Path) -> None:
    # An MHA EAGLE3 draft of an MLA target on Blackwell inherits trtllm_mla, which refuses
    # it: the draft's own config says so; without it the draft is taken to be the target's.
    draft = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama"}
    (tmp_path / "config.json").write_text(json.dumps(draft), encoding="utf-8")
    told = compat("check", "--draft-model-config", str(tmp_path), *_KIMI_EAGLE3)
    assert told.returncode == 1, told.stdout
    assert "[build-needs-mla]" in told.stdout and "for the draft model" in told.stdout
    assert (
        f"draft model config: {tmp_path / 'config.json'}: LlamaForCausalLMEagle3, " in told.stdout
    )
    assert "draft_attention_arch=mha (--verbose says why)" in told.stdout
    verbose = compat("check", "--verbose", "--draft-model-config", str(tmp_path), *_KIMI_EAGLE3)
    assert "draft_attention_arch=mha (no MLA fields" in verbose.stdout
    # Unread, the draft is one of 0.5.10's EAGLE3 draft classes, all MHA: the same build.
    untold = compat("check", *_KIMI_EAGLE3)
    assert untold.returncode == 1, untold.stdout
    assert "[build-needs-mla]" in untold.stdout and "--draft-model-config PATH" in untold.stdout
    assert "draft model config: every EAGLE3 draft class SGLang 0.5.10 registers" in untold.stdout
    assert "was not read): LlamaForCausalLMEagle3, draft_attention_arch=mha" in untold.stdout
    shown = json.loads(compat("check", "--json", *_KIMI_EAGLE3).stdout)["draft_model_config"]
    assert shown["draft_attention_arch"] == "mha" and "0.5.10" in shown["source"]
    assert compat("check", "--draft-attention-arch", "mla", *_KIMI_EAGLE3).returncode == 0
    # 0.5.12 registers an MLA EAGLE3 draft class too: the draft is taken to be the target's.
    later_release = ("0.5.12" if word == "0.5.10" else word for word in _KIMI_EAGLE3)
    later = json.loads(compat("check", "--json", *later_release).stdout)
    assert "draft_model_config" not in later
    (note,) = [n for n in later["launch_notes"] if "a-draft-not-on-this-machine" in n]
    assert "assumed to be the target's" in note and "Eagle3DeepseekV2ForCausalLM" in note


@pytest.mark.parametrize("kind", ["not json", "a loop of links", "a directory without it"])
def test_a_draft_model_config_that_cannot_be_read_is_exit_2(tmp_path: Path, kind: str) -> None:
    given = tmp_path / "config.json"
    if kind == "not json":
        given.write_text("{not json", encoding="utf-8")
    elif kind == "a loop of links":
        given.symlink_to(tmp_path / "other.json")
        (tmp_path / "other.json").symlink_to(given)
    else:
        given = tmp_path / "empty"
        given.mkdir()
    result = compat("check", "--draft-model-config", str(given), *_KIMI_EAGLE3)
    assert result.returncode == 2, result.stdout
    assert f"--draft-model-config: {given}" in result.stderr


def _glm_flash_mtp(
    release: str, *extra: str, algorithm: str = "NEXTN"
) -> subprocess.CompletedProcess[str]:
    return compat(
        *("check", "--sglang-version", release, "--gpu", "B200", *extra),
        *("--model-architecture", "Glm4MoeLiteForCausalLM"),
        *("--", "python3", "-m", "sglang.launch_server", "--speculative-algorithm", algorithm),
        *("--attention-backend", "trtllm_mla"),
    )


def test_the_renamed_draft_of_the_target_checkpoint_decides_the_draft_build() -> None:
    # GLM-4.7-Flash's MTP draft: 0.5.10 renames it to Glm4MoeForCausalLMNextN, which it runs
    # as MHA, so the inherited trtllm_mla refuses it; 0.5.13 runs its renamed draft as MLA.
    before = _glm_flash_mtp("0.5.10")
    assert before.returncode == 1, before.stdout
    assert "[build-needs-mla]" in before.stdout and "for the draft model" in before.stdout
    assert "renamed by SGLang 0.5.10 (configs/model_config.py:305, " in before.stdout
    assert "Glm4MoeForCausalLMNextN, draft_attention_arch=mha" in before.stdout
    after = _glm_flash_mtp("0.5.13")
    assert after.returncode == 0, after.stdout
    assert "Glm4MoeLiteForCausalLMNextN, draft_attention_arch=mla" in after.stdout
    stated = _glm_flash_mtp("0.5.10", "--draft-attention-arch", "mla")
    assert stated.returncode == 0, stated.stdout
    assert "--draft-attention-arch mla is used" in stated.stdout


def test_the_draft_rename_reads_the_algorithm_as_the_release_does() -> None:
    # From 0.5.12 SGLang upper-cases the algorithm: `nextn` builds the same renamed draft
    # (MHA in 0.5.12, so trtllm_mla refuses it; MLA in 0.5.13).
    lower = _glm_flash_mtp("0.5.12", algorithm="nextn")
    assert lower.returncode == 1, lower.stdout
    assert "Glm4MoeForCausalLMNextN, draft_attention_arch=mha" in lower.stdout
    assert "[build-needs-mla]" in lower.stdout
    later = _glm_flash_mtp("0.5.13", algorithm="nextn")
    assert later.returncode == 0, later.stdout
    assert "Glm4MoeLiteForCausalLMNextN, draft_attention_arch=mla" in later.stdout
