"""Hostile input on the command line and through the API: one test per failure once reported.

Every input failure must end with exit 2 and one line on stderr (never a traceback, never
exit 1, which means "incompatible"); an unexpected error is exit 3 with a bug-report hint;
the API raises what the README's error contract says.
"""

from __future__ import annotations

import argparse
import builtins
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cells import fp4_refused_on_b200
from refusals import MHA, ROOT, cli, refused, run_module

import compat
from compat import (
    AttentionConfig,
    IncompatibleConfigError,
    InvalidConfigError,
    ModelConfigError,
    PlatformDetectionError,
    check,
    enforce,
)
from compat.inputs.bounded_json import MAX_BYTES, MAX_NESTING
from compat.inputs.model_config import load_model_facts
from compat.vocab.terms import Arch

LAUNCH = ("python3", "-m", "sglang.launch_server")

# -- input that once crashed with a traceback and exit 1 ---------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}", f"deeper than {MAX_NESTING} levels"),
        ('{"a": ' + "[" * 200 + "]" * 200 + "}", f"deeper than {MAX_NESTING} levels"),
        ('{"kv_lora_rank": ' + "9" * 5000 + "}", "5000 digits"),
        ('{"model_type": "\\ud800"}', "lone surrogate"),
        ('{"\\udc00": 1}', "lone surrogate"),
    ],
    ids=["nested-10000", "nested-200", "integer-5000-digits", "lone-surrogate", "surrogate-key"],
)
def test_a_hostile_config_json_is_exit_2_with_one_line(
    text: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    refused([*MHA, "--model-config", str(path)], capsys, needle, str(path))
    refused(["matrix", "--model-config", str(path)], capsys, needle)
    # The speculative draft model's config is read with the same limits, named or launched.
    refused([*MHA, "--draft-model-config", str(path)], capsys, needle, "--draft-model-config")
    draft = ["--speculative-draft-model-path", str(tmp_path)]
    refused([*MHA, "--", *LAUNCH, *draft], capsys, needle, "--speculative-draft-model-path")
    with pytest.raises(ModelConfigError, match=needle):
        load_model_facts(path)


def test_a_valid_surrogate_pair_is_read(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "\\ud83d\\ude00", "kv_lora_rank": 512}', encoding="utf-8")
    facts = load_model_facts(path)
    assert facts.model_type == "\U0001f600" and facts.attention_arch is Arch.MLA


def test_non_utf8_argv_with_strict_utf8_stdout_is_exit_2() -> None:
    done = run_module(
        "check", "--platform", b"\xff\xfecuda", "--attention-arch", "mha", PYTHONIOENCODING="utf-8"
    )
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    assert b"--platform" in done.stderr and b"\\udcff" in done.stderr  # echoed, escaped
    json_done = run_module(
        "check", "--json", "--platform", "cuda", "--attention-arch", "mha",
        "--", b"--mem-fraction-static=\xff",
        PYTHONIOENCODING="utf-8",
    )  # fmt: skip
    assert json_done.returncode == 0, json_done.stderr
    assert b"\\udcff" in json_done.stdout


def test_ascii_stdout_prints_the_tables() -> None:
    done = run_module("matrix", PYTHONIOENCODING="ascii")
    assert done.returncode == 0, done.stderr
    assert b"\\u2705" in done.stdout  # the check mark, escaped


def test_an_unexpected_error_is_exit_3_with_a_bug_report_hint(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import compat.guard.judge as judging

    def broken(*args: object) -> None:
        raise RuntimeError("a bug\non two lines")

    monkeypatch.setattr(judging, "check", broken)
    code, _, err = cli(MHA, capsys)
    assert code == 3
    assert "internal error: RuntimeError: a bug on two lines;" in err and "COMPAT_DEBUG" in err
    assert len(err.strip().splitlines()) == 1


def test_stdout_on_a_full_disk_is_exit_2() -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "compat", "matrix"], stdout=full, stderr=subprocess.PIPE
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [b"compat matrix: error: No space left on device"]


# -- a launch command quoted as one argument was ignored ---------------------------------------


def test_a_pasted_launch_command_is_split_and_judged(capsys: pytest.CaptureFixture[str]) -> None:
    backend = fp4_refused_on_b200(Arch.MHA)
    pasted = (
        f"python3 -m sglang.launch_server --attention-backend {backend} --kv-cache-dtype fp4_e2m1"
    )
    code, out, _ = cli([*MHA, "--compute-capability", "10.0", "--", pasted], capsys)
    assert code == 1, out
    assert "split the one-argument launch command" in out and "shlex" in out
    assert f"backend {backend};" in out and "[fp4-kv]" in out  # the pasted flags were read


def test_a_pasted_command_with_an_open_quote_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    refused([*MHA, "--", "python3 -m sglang.launch_server --chat-template 'x"], capsys, "quotation")


# -- no size limit on config.json or a --model-path file ---------------------------------------


def test_a_60_mb_config_json_is_refused_in_under_a_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.json"
    body = b'{"architectures": ["LlamaForCausalLM"], "pad": [' + b"1," * (30 * 1024 * 1024)
    path.write_bytes(body + b"1]}")
    assert path.stat().st_size > 60_000_000
    for argv in (
        [*MHA, "--model-config", str(path)],
        [*MHA, "--", *LAUNCH, "--model-path", str(path)],
        [*MHA, "--draft-model-config", str(path)],
        [*MHA, "--", *LAUNCH, "--speculative-draft-model-path", str(tmp_path)],
    ):
        start = time.perf_counter()
        line = refused(argv, capsys, "16 MiB", str(path))
        assert time.perf_counter() - start < 1.0, line
    assert MAX_BYTES == 16 * 1024 * 1024


def test_a_fifo_as_model_config_does_not_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    refused([*MHA, "--model-config", str(fifo)], capsys, "not a regular file")
    refused([*MHA, "--draft-model-config", str(fifo)], capsys, "not a regular file")
    draft = ["--speculative-draft-model-path", str(tmp_path)]
    refused([*MHA, "--", *LAUNCH, *draft], capsys, "not a regular file")


# -- API edges ---------------------------------------------------------------------------------


@pytest.mark.parametrize("junk", [None, "fa3", 3, {"attention_backend": "fa3"}, AttentionConfig])
def test_check_of_a_non_config_is_a_type_error(junk: object) -> None:
    with pytest.raises(TypeError, match="check\\(\\) takes an AttentionConfig"):
        check(junk)  # type: ignore[arg-type]


def test_enforce_reads_a_mapping_by_key() -> None:
    backend = fp4_refused_on_b200(Arch.MLA)
    flags = {"attention_backend": backend, "kv_cache_dtype": "fp4_e2m1"}
    for server_args in (flags, argparse.Namespace(**flags)):
        with pytest.raises(IncompatibleConfigError) as raised:
            enforce(server_args, attention_arch="mla", platform="cuda", compute_capability=(10, 0))
        assert raised.value.report.resolved.kv_dtype.value == "fp4_e2m1"
        assert raised.value.report.resolved.prefill_backend == backend


@pytest.mark.parametrize("junk", [None, "fa3", 5, b"x"])
def test_enforce_refuses_what_cannot_hold_flags(junk: object) -> None:
    with pytest.raises(TypeError, match="enforce\\(\\) takes"):
        enforce(junk, attention_arch="mha", platform="cuda")


def test_enforce_without_torch_raises_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    with pytest.raises(ValueError, match="torch is not installed") as raised:
        enforce({}, attention_arch="mha")
    assert isinstance(raised.value, PlatformDetectionError)
    assert isinstance(raised.value, RuntimeError)  # as before, for callers that caught that


class OwnHash(str):
    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        return False


def test_a_str_subclass_with_its_own_hash_is_read_as_its_text() -> None:
    report = check(AttentionConfig(attention_backend=OwnHash("fa3"), attention_arch=OwnHash("mha")))
    assert report.resolved.prefill_backend == "fa3"
    with pytest.raises(InvalidConfigError, match="--attention-backend"):
        AttentionConfig(attention_backend=OwnHash("fa33"))


def test_the_error_contract_names_the_real_classes() -> None:
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    section = usage.split("## Errors\n", 1)[1].split("So `except ValueError`", 1)[0]
    # One table holds the exit codes and the exceptions (#23 L13): none is stated elsewhere.
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    assert sum(page.read_text(encoding="utf-8").count("| exit **") for page in pages) == 6
    assert not any("Exit codes: **" in page.read_text(encoding="utf-8") for page in pages)
    for code in ("0", "1", "2", "3", "127", "126"):
        assert f"| exit **{code}** |" in section
    claims = re.findall(r"`(\w+Error)`(?: \(a `(\w+)`(?: and a `(\w+)`)?\))?", section)
    named = {name for name, _, _ in claims}
    assert named >= {
        "InvalidConfigError",
        "ModelConfigError",
        "IncompatibleConfigError",
        "PlatformDetectionError",
        "TypeError",
    }, named
    for name, *bases in claims:
        error = getattr(compat, name, None) or getattr(builtins, name)
        for base in filter(None, bases):
            assert issubclass(error, getattr(builtins, base)), f"{name} is not a {base}"


@pytest.mark.parametrize("command", [["matrix"], MHA])
def test_a_flag_given_as_equals_dash_dash_is_exit_2(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by the fuzzer (seed 12): argparse made `--model-config=--` an empty list.
    code, _, err = cli([*command, "--model-config=--"], capsys)
    assert code == 2 and "--model-config: expected one value" in err
