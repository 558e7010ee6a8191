"""The launch's environment: validated per release, read by `compat check --env`, `compat
launch`, `enforce()`, and replayed where start-up reads it; unset ones are said assumed."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from compat import AttentionConfig, InvalidConfigError, check, enforce
from compat.engine.env_data import ENV_READS
from compat.engine.environment import AITER_KV_CACHE_LAYOUT, modelled, where
from compat.engine.preshuffle import AOT_GLUON, DSA_DISABLE, USE_AITER

LAYOUT = AITER_KV_CACHE_LAYOUT
ROCM = {"platform": "rocm", "attention_arch": "mha", "model_architecture": "LlamaForCausalLM"}
# The first and last release whose start-up reads the layout, from the data.
READING = [release for release, reads in ENV_READS.items() if LAYOUT in modelled(release)]


def _page(release: str, **fields: object) -> int:
    return check(AttentionConfig(sglang_version=release, **ROCM, **fields)).resolved.page_size


@pytest.mark.parametrize("release", [READING[0], READING[-1]])
def test_the_layout_makes_64_the_rocm_default_page_size(release: str) -> None:
    assert _page(release) == 1
    assert _page(release, environment=((LAYOUT, "Vectorized_5D"),)) == 64  # SGLang lowers it
    assert _page(release, environment=((LAYOUT, "nhd"),)) == 1
    assert _page(release, environment=((LAYOUT, "vectorized_5d"),), page_size=16) == 16


def test_a_cuda_machine_ignores_the_layout() -> None:
    config = AttentionConfig(
        sglang_version=READING[-1],
        compute_capability=(9, 0),
        environment=((LAYOUT, "vectorized_5d"),),
    )
    assert check(config).resolved.page_size == 1


def test_where_names_the_line_that_reads_it() -> None:
    read = where(READING[-1], LAYOUT)
    assert read.name == LAYOUT and read.file.startswith("sglang/srt/") and read.line > 0


def test_a_release_that_does_not_read_it_refuses_the_name_naming_the_valid_ones() -> None:
    older = next(release for release in ENV_READS if not modelled(release))
    with pytest.raises(InvalidConfigError) as raised:
        AttentionConfig(sglang_version=older, **ROCM, environment=((LAYOUT, "vectorized_5d"),))
    assert LAYOUT in str(raised.value) and older in str(raised.value)
    assert f"read by sglang {READING[0]} to {READING[-1]}" in str(raised.value)
    with pytest.raises(InvalidConfigError) as raised:
        AttentionConfig(sglang_version=READING[-1], **ROCM, environment=(("SGLANG_TYPO", "1"),))
    assert "SGLANG_TYPO" in str(raised.value) and LAYOUT in str(raised.value)


@pytest.mark.parametrize(
    "environment", [((LAYOUT, 1),), (("only-a-name",),), "SGLANG=1", ((LAYOUT, "a"), (LAYOUT, "b"))]
)
def test_malformed_environments_are_clear_errors(environment: object) -> None:
    with pytest.raises(InvalidConfigError, match="--env"):
        AttentionConfig(sglang_version=READING[-1], **ROCM, environment=environment)  # type: ignore[arg-type]


def test_the_report_says_which_variables_it_assumed_unset() -> None:
    report = check(AttentionConfig(sglang_version=READING[-1], **ROCM))
    # The preshuffle check's variables too (DSA's page size, 0.5.12+): SGLANG_USE_AITER as
    # the official ROCm image sets it, the others unset (tests/guard/test_dsa_rocm_page.py).
    unset = (AOT_GLUON, LAYOUT, DSA_DISABLE)
    assert report.assumed_unset == unset and report.environment == {}
    assert report.assumed_image == {USE_AITER: "1"}
    assert report.to_dict()["environment"] == {
        "set": {}, "assumed_unset": list(unset), "assumed_image": {USE_AITER: "1"},
    }  # fmt: skip
    given = check(AttentionConfig(sglang_version=READING[-1], **ROCM,
                                  environment=((LAYOUT, "nhd"),)))  # fmt: skip
    assert given.assumed_unset == (AOT_GLUON, DSA_DISABLE) and given.environment == {LAYOUT: "nhd"}
    # SGLang reads the layout behind `is_hip()`: on CUDA it could not change the answer.
    cuda = check(AttentionConfig(sglang_version=READING[-1], compute_capability=(9, 0)))
    assert cuda.assumed_unset == ()


def _compat(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert "Traceback" not in result.stdout + result.stderr
    return result


MACHINE = ("--sglang-version", READING[-1], "--gpu", "MI300X")
COMMAND = (
    "--",
    "python3",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "meta-llama/Llama-3.1-8B-Instruct",
)


def test_compat_check_reads_env_assignments() -> None:
    plain = _compat("check", *MACHINE, *COMMAND)
    assert "page size 1" in plain.stdout and "assumed unset" in plain.stdout
    given = _compat("check", *MACHINE, "--env", f"{LAYOUT}=vectorized_5d", *COMMAND)
    assert "page size 64" in given.stdout and f"set {LAYOUT}=vectorized_5d" in given.stdout
    bad = _compat("check", *MACHINE, "--env", "NO_EQUALS_SIGN", *COMMAND)
    assert bad.returncode == 2 and "NO_EQUALS_SIGN" in bad.stderr and "NAME=VALUE" in bad.stderr


def test_compat_launch_reads_the_environment_it_runs_the_command_in() -> None:
    dry = ("launch", "--dry-run", *MACHINE)
    inherited = _compat(*dry, *COMMAND, env={LAYOUT: "vectorized_5d"})
    assert "page size 64" in inherited.stdout, inherited.stdout + inherited.stderr
    prefixed = _compat(*dry, "--", f"{LAYOUT}=vectorized_5d", *COMMAND[1:])
    assert "page size 64" in prefixed.stdout, prefixed.stdout + prefixed.stderr
    bare = _compat(*dry, *COMMAND, env={"SGLANG_UNRELATED": "1"})
    assert "page size 1" in bare.stdout


def test_enforce_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    args = SimpleNamespace(attention_backend=None, page_size=None, kv_cache_dtype="auto")
    kwargs = {"platform": "rocm", "attention_arch": "mha", "sglang_version": READING[-1]}
    monkeypatch.delenv(LAYOUT, raising=False)
    assert enforce(args, log=False, **kwargs).resolved.page_size == 1
    monkeypatch.setenv(LAYOUT, "vectorized_5d")
    assert enforce(args, log=False, **kwargs).resolved.page_size == 64
