"""The start-up prediction as an operator meets it: releases, the two verdicts, parity.

The conformance suite proves the replay against SGLang's own code over its grid; these
tests pin the user-facing contract around it: which release is predicted and why, how the
two verdicts are kept apart, and what the exit code means under each policy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import compat.inputs.release_choice
from compat import AttentionConfig, InvalidConfigError, check
from compat.guard.report import Enforcement
from compat.inputs.config import VERSION_VARIABLE
from compat.releases import NEWEST, RELEASES, release_rules

B200 = ["--platform", "cuda", "--compute-capability", "10.0"]
H200 = ["--platform", "cuda", "--compute-capability", "9.0"]
SPEC_TOPK_4 = [
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-steps",
    "3",
    "--speculative-num-draft-tokens",
    "8",
]


def compat_cli(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = compat_cli("check", "--json", *args)
    return result.returncode, json.loads(result.stdout)


# -- which release --------------------------------------------------------------------------


def test_post_releases_share_their_release_rules() -> None:
    assert release_rules("0.5.7.post1") is release_rules("0.5.7") is RELEASES["0.5.7"]


def test_an_unknown_release_names_the_known_ones() -> None:
    with pytest.raises(InvalidConfigError) as caught:
        AttentionConfig(attention_arch="mha", sglang_version="0.4.0")
    text = str(caught.value)
    assert "--sglang-version" in text and "0.4.0" in text
    assert all(release in text for release in RELEASES)


def test_the_cli_refuses_an_unknown_release_with_exit_2() -> None:
    result = compat_cli("check", "--attention-arch", "mha", *B200, "--sglang-version", "9.9.9")
    assert result.returncode == 2
    assert "9.9.9" in result.stderr and NEWEST in result.stderr


def test_without_a_version_the_installed_release_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VERSION_VARIABLE)
    monkeypatch.setattr(
        compat.inputs.release_choice, "installed_sglang_version", lambda: "0.5.7.post1"
    )
    report = check(AttentionConfig(attention_arch="mha", platform="cpu"))
    assert (report.sglang_version, report.version_source) == ("0.5.7", "installed")
    assert "(installed)" in report.startup_summary


def test_an_installed_release_that_is_not_modelled_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(VERSION_VARIABLE)
    monkeypatch.setattr(compat.inputs.release_choice, "installed_sglang_version", lambda: "0.4.0")
    with pytest.raises(InvalidConfigError, match=r"0\.4\.0"):
        AttentionConfig(attention_arch="mha", platform="cpu")


def test_without_sglang_installed_the_newest_modelled_release_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(VERSION_VARIABLE)
    monkeypatch.setattr(compat.inputs.release_choice, "installed_sglang_version", lambda: None)
    report = check(AttentionConfig(attention_arch="mha", platform="cpu"))
    assert (report.sglang_version, report.version_source) == (NEWEST, "newest modelled")


def test_the_environment_names_the_release_when_no_version_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(VERSION_VARIABLE, "0.5.16")
    report = check(AttentionConfig(attention_arch="mha", platform="cpu"))
    assert (report.sglang_version, report.version_source) == ("0.5.16", VERSION_VARIABLE)
    given = check(AttentionConfig(attention_arch="mha", platform="cpu", sglang_version="0.5.7"))
    assert given.sglang_version == "0.5.7"


# -- the two verdicts ----------------------------------------------------------------------


def test_sm100_mha_with_eagle_topk_4_starts_on_flashinfer() -> None:
    code, report = cli_json(
        "--sglang-version", "0.5.7", "--attention-arch", "mha", *B200, *SPEC_TOPK_4
    )
    assert code == 0
    assert report["refused_at_startup"] is False
    resolved = report["resolved"]
    assert resolved["prefill_attention_backend"] == resolved["decode_attention_backend"]
    assert resolved["prefill_attention_backend"] == "flashinfer"


def test_topk_without_num_steps_is_refused_by_sglang_itself() -> None:
    """SGLang 0.5.7 asserts that topk comes with --speculative-num-steps (or none of them)."""
    code, report = cli_json(
        "--sglang-version", "0.5.7", "--attention-arch", "mha", *B200,
        "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4",
    )  # fmt: skip
    assert code == 1 and report["refused_at_startup"] is True
    assert [e["rule"] for e in report["errors"]] == ["startup-spec-params"]
    assert report["errors"][0]["enforced"] == "startup"


def test_a_kv4_hybrid_pair_starts_with_sglangs_warning_and_the_page_judges_each_phase() -> None:
    args = (
        "--sglang-version", "0.5.7", "--attention-arch", "mha", *H200,
        "--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "triton",
        "--kv-cache-dtype", "fp4_e2m1",
    )  # fmt: skip
    code, report = cli_json(*args)
    assert report["refused_at_startup"] is False
    startup_warnings = [w for w in report["warnings"] if w["enforced"] == "startup"]
    # One fact, one finding: the page's rule, enforced at start-up, naming both sources.
    (warning,) = startup_warnings
    assert warning["rule"] == "kv4-hybrid-pair"
    assert "SGLang's start-up code and the page both state it" in warning["message"]
    (error,) = report["errors"]
    assert (error["rule"], error["backend"], error["phases"]) == (
        "fp4-kv",
        "flashinfer",
        ["prefill"],
    )
    assert error["enforced"] == "documented"
    assert code == 1, "the default policy refuses what the page documents as unsupported"
    assert compat_cli("check", "--parity", *args).returncode == 0
    text = compat_cli("check", *args).stdout
    assert "starts; the page documents 1 problem that SGLang does not check at start-up" in text


def test_a_documented_only_problem_exits_1_by_default_and_0_under_parity() -> None:
    # The page documents flashmla for MLA models only; 0.5.7's code builds it for MHA ones.
    # (torch_native under EAGLE, the page's other ❌, fails in the draft's build.)
    args = ("--sglang-version", "0.5.7", "--attention-arch", "mha", *H200,
            "--attention-backend", "flashmla")  # fmt: skip
    code, report = cli_json(*args)
    assert (code, report["ok"], report["refused_at_startup"]) == (1, False, False)
    assert {e["enforced"] for e in report["errors"]} == {"documented"}
    assert compat_cli("check", "--parity", *args).returncode == 0


def test_refused_at_startup_implies_not_ok() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(10, 0),
                        attention_backend="fa4", sglang_version="0.5.7")
    )  # fmt: skip
    assert report.refused_at_startup and not report.ok
    assert "fa4-prefill-only" in {f.rule for f in report.errors}


def test_a_page_rule_that_sglang_applies_is_marked_as_enforced_at_startup() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(10, 0),
                        prefill_attention_backend="fa4", decode_attention_backend="trtllm_mha",
                        kv_cache_dtype="fp4_e2m1", sglang_version="0.5.7")
    )  # fmt: skip
    # One finding for the fact: the page's rule id, SGLang's words and verdict.
    (found,) = [f for f in report.errors if f.rule.endswith("kv4-fa4-decode-partner")]
    assert found.rule == "kv4-fa4-decode-partner"
    assert found.enforced is Enforcement.STARTUP
    assert found.message.startswith("SGLang 0.5.7 refuses to start")
    assert found.message.endswith("SGLang's start-up code and the page both state it")


def test_a_failure_at_backend_construction_is_labelled_so() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(10, 0),
                        attention_backend="trtllm_mla", sglang_version="0.5.7")
    )  # fmt: skip
    assert not report.refused_at_startup
    (refused,) = [f for f in report.errors if f.rule == "arch-refused"]
    assert refused.enforced is Enforcement.BACKEND_BUILD
    assert "fails building the backend" in report.startup_summary


def test_flashmla_fp4_is_accepted_by_sglangs_code_and_its_documented_no_is_disputed() -> None:
    """0.5.7's page says ❌, its own KV4 check accepts flashmla: the code decides, so the
    page's finding is a warning naming that check (`compat audit 0.5.7`)."""
    report = check(
        AttentionConfig(attention_arch="mla", platform="cuda", compute_capability=(10, 0),
                        attention_backend="flashmla", kv_cache_dtype="fp4_e2m1",
                        sglang_version="0.5.7")
    )  # fmt: skip
    assert not report.refused_at_startup and report.ok
    (warned,) = [f for f in report.warnings if f.rule == "fp4-kv"]
    assert "Disputed: the page says ❌" in warned.message
    assert "_handle_kv4_compatibility" in warned.message


@pytest.mark.parametrize(("mode", "refused_phases"), [("prefill", ["prefill"]), ("decode", [])])
def test_the_speculative_attention_mode_picks_the_phase_that_verifies(
    mode: str, refused_phases: list[str]
) -> None:
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(10, 0),
                        prefill_attention_backend="fa4", decode_attention_backend="triton",
                        speculative_algorithm="EAGLE", speculative_eagle_topk=1,
                        speculative_num_steps=3, speculative_num_draft_tokens=4,
                        speculative_attention_mode=mode, sglang_version="0.5.7")
    )  # fmt: skip
    spec = [f for f in report.errors if f.rule == "spec-topk-1"]
    assert [p.value for f in spec for p in f.phases] == refused_phases


def test_an_unnamed_model_is_assumed_and_said_so() -> None:
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(9, 0))
    )
    assumed = [f for f in report.infos if f.rule == "model-architecture-assumed"]
    assert assumed and assumed[0].value == RELEASES[NEWEST].assumed_architecture(compat.Arch.MHA)
    named = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(9, 0),
                        model_architecture="MistralForCausalLM")
    )  # fmt: skip
    assert "model-architecture-assumed" not in named.rules
    assert named.resolved.prefill_backend == "flashinfer"  # not an FA3-default architecture


def test_an_installed_sglang_is_read_from_its_metadata(tmp_path: Path) -> None:
    """What `pip install --no-deps sglang==0.5.23` leaves for importlib.metadata to find."""
    info = tmp_path / "sglang-0.5.23.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.23\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != VERSION_VARIABLE}
    env["PYTHONPATH"] = str(tmp_path)
    args = ["check", "--attention-arch", "mha", *B200, "--kv-cache-dtype", "nvfp4"]
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SGLang 0.5.23 (installed)" in result.stdout
    assert "backend trtllm_mha" in result.stdout  # nvfp4's own choice on SM100


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.7", ("--attention-backend", "--prefill-attention-backend",
                   "--decode-attention-backend", "--compute-capability")),
        ("0.5.23", ("the prefill phase", "the decode phase", "--compute-capability")),
    ],
)  # fmt: skip
def test_a_gpu_refusal_names_its_flags_in_a_fixed_order(
    release: str, flags: tuple[str, ...]
) -> None:
    """The gate's fields are a set of identity-hashed members; the finding lists them in
    their declaration order, so that a change of import order cannot reorder its flags."""
    report = check(
        AttentionConfig(attention_arch="mha", platform="cuda", compute_capability=(8, 0),
                        attention_backend="trtllm_mha", sglang_version=release)
    )  # fmt: skip
    (refusal,) = [f for f in report.errors if f.rule == "startup-compute-capability"]
    assert refusal.flags == flags
