"""The command line's surface: `compat diff` in the order asked, `--gpu` everywhere, a
bare `compat check` that names `--model`, a grouped `--help`, and short `--model` answers."""

from __future__ import annotations

import json

import pytest

from compat.cli import main
from compat.inputs.flags import FLAGS
from compat.publish.changes_text import value_changes
from compat.releases import NEWEST, RELEASE_NAMES, changes_of

NEWEST_FLAG = ("--sglang-version", NEWEST)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:  # argparse's own exits (--help, a bad argument)
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- compat diff ------------------------------------------------------------------------------


def test_diff_refuses_the_reversed_order_with_the_command_that_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, "diff", NEWEST, "0.5.7")
    assert code == 2 and out == ""
    assert f"run `compat diff 0.5.7 {NEWEST}`" in err
    code, out, _ = _run(capsys, "diff", NEWEST, "0.5.7", "--json")
    assert code == 2 and "compat diff 0.5.7" in json.loads(out)["error"]["message"]


def test_diff_says_a_new_accepted_value_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "diff", "0.5.7", NEWEST)
    assert code == 0
    dflash = [line for line in out.splitlines() if "DFLASH" in line]
    assert dflash == ["  - --speculative-algorithm DFLASH is accepted"]
    # A value that no change of its release names is still listed.
    before = RELEASE_NAMES[RELEASE_NAMES.index("0.5.11") - 1]
    assert list(value_changes(before, "0.5.11")) == [
        "`--speculative-algorithm` accepts `DFLASH` too"
    ]
    assert list(value_changes(before, "0.5.11", changes_of("0.5.11"))) == []


# -- --gpu ------------------------------------------------------------------------------------


def test_matrix_takes_a_gpu_as_check_does(capsys: pytest.CaptureFixture[str]) -> None:
    code, by_name, _ = _run(capsys, "matrix", "--gpu", "B200", *NEWEST_FLAG)
    assert code == 0
    assert by_name.startswith("MHA models with --gpu B200 (sm100)")
    code, by_number, _ = _run(
        capsys, "matrix", "--platform", "cuda", "--compute-capability", "10.0", *NEWEST_FLAG
    )
    assert code == 0
    # The same verdicts, backend for backend.
    verdicts = [line for line in by_name.splitlines() if line.startswith(("ok ", "refused "))]
    assert verdicts == [
        line for line in by_number.splitlines() if line.startswith(("ok ", "refused "))
    ]
    assert len(verdicts) > 10


def test_a_mistyped_gpu_is_matched_by_name_and_family(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("matrix", "check"):
        code, _, err = _run(capsys, command, "--gpu", "B100X", "--attention-arch", "mla")
        assert code == 2
        assert "did you mean B200?" in err, err
    code, _, err = _run(capsys, "matrix", "--gpu", "H100", "--platform", "rocm")
    assert code == 2 and "--platform rocm contradicts --gpu H100" in err


def test_a_bare_check_names_the_model_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "check", "--gpu", "H100")
    assert code == 2
    assert "pass --model NAME" in err and "--attention-arch" in err


def test_check_help_groups_the_sglang_flags_one_line_each(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = _run(capsys, "check", "--help")
    assert code == 0
    lines = out.splitlines()
    for flag in FLAGS:
        (line,) = [line for line in lines if line.strip().startswith(flag.option + " ")]
        # The flag and its words on one line.
        assert flag.help in line, line
    headings = [line for line in lines if line.startswith("SGLang ")]
    assert len(headings) >= 4


# -- --model answers ----------------------------------------------------------------------


def test_a_model_answer_leads_with_the_verdict_and_the_findings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("check", "--model", "DeepSeek-R1", "--gpu", "B200", *NEWEST_FLAG,
            "--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mla")  # fmt: skip
    code, out, _ = _run(capsys, *args)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("incompatible:")
    assert lines[1].startswith("  runs as:")
    assert lines[3].startswith("what SGLang")
    assert "from the model config:" not in out
    (provenance,) = [line for line in lines if line.startswith("model config:")]
    assert "attention_arch=mla" in provenance and "--verbose" in provenance
    assert lines.index(provenance) > max(i for i, line in enumerate(lines) if "error" in line)
    code, verbose, _ = _run(capsys, *args, "--verbose")
    assert code == 1
    assert verbose.count("from the model config:") >= 4
