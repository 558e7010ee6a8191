"""Fuzzing the guard's inputs and the CLI with Hypothesis.

The contract under test: whatever a caller passes, `AttentionConfig(...)` either builds a
configuration that `check()` turns into a Report, or raises `InvalidConfigError` naming the
offending flag. Nothing else escapes: no TypeError, no KeyError, no traceback on the CLI.

The file generates well over 10,000 cases in total (see the `max_examples` below).
"""

from __future__ import annotations

import contextlib
import io
import json
import string
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from typing import Any

import pytest
from cells import fp4_refused_on_b200
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paths import MODELS

from compat import MATRIX, AttentionConfig, InvalidConfigError, Report, Suggestion, check
from compat.cli import main
from compat.guard.report import Finding
from compat.guard.resolve import refused_at_startup
from compat.inputs.environment import OPTION as ENV_OPTION
from compat.inputs.flags import DEVICE, DISAGGREGATION_MODE, FLAGS, SUB_BACKEND_FLAGS
from compat.inputs.model_source import HEAD_SHAPES
from compat.inputs.packages import OPTION as PACKAGE_OPTION
from compat.releases import BASELINE, RELEASES
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Arch, Severity

# The algorithms every release accepts (the baseline's); later ones add more.
SPECULATIVE_ALGORITHMS = RELEASES[BASELINE].algorithm_choices

# Every init field of AttentionConfig, read from the class so a new field is fuzzed too.
FIELDS = tuple(f.name for f in dataclass_fields(AttentionConfig) if f.init)
BACKENDS = MATRIX.backend_names
MODEL_DIRS = tuple(sorted(str(path) for path in MODELS.iterdir() if path.is_dir()))

# Slow examples are expected: each one runs the guard (and often its suggestions, which
# run the guard again for every candidate fix), and the CLI builds its parser every call.
_FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz(examples: int) -> settings:
    return settings(_FUZZ, max_examples=examples)


def names_of(field: str) -> tuple[str, ...]:
    """How an error may name a field: as its launch flag (or another spelling the release
    declares for it, `--nsa-prefill-backend`), or by the field's own name."""
    return ("--" + field.replace("_", "-"), field, *_ALIASES.get(field, ()))


# `environment` is `--env` on the command line (`compat check --env NAME=VALUE`), `packages`
# `--package` (`--package NAME==VERSION`).
_ALIASES = {flag.field: flag.aliases for flag in FLAGS} | {
    "environment": (ENV_OPTION,),
    "packages": (PACKAGE_OPTION,),
}


# -- values --------------------------------------------------------------------------------

WHITESPACE = st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2003\u3000", max_size=4)
NEAR_MISSES = st.sampled_from(
    [
        "",
        " ",
        "MHA",
        " mha",
        "mla\n",
        "FA3",
        "fa3 ",
        "flash_infer",
        "fp4",
        "FP8_E4M3",
        "bfloat16 ",
        "eagle\x00",
        "CUDA",
        "sm",
        "sm_",
        "10.",
        ".0",
        "sm1000",
        "٩٠",  # Arabic-Indic digits: "90" to a \d regex
        "１０.０",  # full-width digits
        "None",
        "true",
        "0",
        "-1",
    ]
)
NUMBER = st.one_of(
    st.integers(min_value=-3, max_value=130),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=2),
)
HUGE_NUMERAL = st.integers(4000, 6000).map(lambda n: "9" * n)  # past int()'s digit limit
GARBAGE: st.SearchStrategy[Any] = st.one_of(
    HUGE_NUMERAL,
    st.none(),
    st.text(),
    WHITESPACE,
    NEAR_MISSES,
    st.integers(),
    st.integers(min_value=-(2**300), max_value=2**300),
    st.sampled_from([0, -1, 1, 2**63, -(2**63), 10**100]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.binary(max_size=8),
    st.lists(st.one_of(st.integers(), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.tuples(NUMBER, NUMBER),
    st.tuples(NUMBER),
    st.tuples(NUMBER, NUMBER, NUMBER),
    st.builds(ComputeCapability, st.integers(), st.integers()),
    st.frozensets(st.integers(), max_size=2),
    st.builds(object),
)

CAPABILITIES = ((8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (12, 0))
VALID: dict[str, st.SearchStrategy[Any]] = {
    "attention_backend": st.one_of(st.none(), st.sampled_from(BACKENDS)),
    "prefill_attention_backend": st.one_of(st.none(), st.sampled_from(BACKENDS)),
    "decode_attention_backend": st.one_of(st.none(), st.sampled_from(BACKENDS)),
    "speculative_draft_attention_backend": st.one_of(st.none(), st.sampled_from(BACKENDS)),
    # The sub-backend flags: the names of 0.5.7, the release the fuzz asks about (a flag
    # it lacks is only ever unset).
    **{
        flag.field: st.one_of(st.none(), st.sampled_from(RELEASES["0.5.7"].sub_choices[flag.field]))
        if flag.field in RELEASES["0.5.7"].sub_choices
        else st.none()
        for flag in SUB_BACKEND_FLAGS
    },
    "kv_cache_dtype": st.sampled_from(sorted(KV_DTYPE_SPELLINGS)),
    "page_size": st.one_of(
        st.none(), st.sampled_from([1, 16, 32, 64, 128]), st.integers(min_value=1)
    ),
    "speculative_algorithm": st.one_of(
        st.none(),
        st.sampled_from(SPECULATIVE_ALGORITHMS),
        st.sampled_from([a.lower() for a in SPECULATIVE_ALGORITHMS]),
    ),
    "speculative_eagle_topk": st.one_of(st.none(), st.integers(min_value=1, max_value=8)),
    "speculative_attention_mode": st.sampled_from(["prefill", "decode"]),
    "attention_arch": st.sampled_from(["mha", "mla"]),
    "draft_attention_arch": st.one_of(st.none(), st.sampled_from(["mha", "mla"])),
    "draft_model_architecture": st.one_of(
        st.none(), st.sampled_from(["MiMoV2MTP", "LlamaForCausalLMEagle3"])
    ),
    "platform": st.sampled_from(["cuda", "rocm", "npu", "xpu", "cpu"]),
    "compute_capability": st.one_of(
        st.none(),
        st.sampled_from(CAPABILITIES),
        st.sampled_from(["10.0", "sm100", "sm_90", "90", "8.6", "12"]),
        st.sampled_from([ComputeCapability(*cc) for cc in CAPABILITIES]),
    ),
    "sliding_window": st.booleans(),
    "multimodal": st.booleans(),
    "encoder_decoder": st.booleans(),
    "dual_chunk_attention": st.booleans(),
    "sparse_attention": st.booleans(),
    "qsa_profile": st.booleans(),
    "cuda_version": st.one_of(st.none(), st.sampled_from([(11, 8), (12, 4), (12, 8), (13, 0)])),
    "speculative_num_steps": st.one_of(st.none(), st.integers(min_value=1, max_value=8)),
    "speculative_num_draft_tokens": st.one_of(st.none(), st.integers(min_value=1, max_value=16)),
    "model_architecture": st.one_of(
        st.none(), st.sampled_from(["LlamaForCausalLM", "DeepseekV3ForCausalLM", "Phi3ForCausalLM"])
    ),
    "kv_heads": st.one_of(st.none(), st.sampled_from([1, 8, 16, 128])),
    "sglang_version": st.one_of(st.none(), st.sampled_from(["0.5.7", "0.5.7.post1"])),
    "trust_remote_code": st.booleans(),
    "quantization": st.one_of(
        st.none(), st.sampled_from(sorted(RELEASES[BASELINE].quantization_set))
    ),
    "device": st.one_of(st.none(), st.sampled_from(DEVICE.choices)),
    "tp_size": st.one_of(st.none(), st.sampled_from([1, 2, 4, 8])),
    "dp_size": st.one_of(st.none(), st.sampled_from([1, 2, 4])),
    "enable_dp_attention": st.booleans(),
    "enable_deterministic_inference": st.booleans(),
    "disaggregation_mode": st.sampled_from(DISAGGREGATION_MODE.choices),
    "prefill_round_robin_balance": st.booleans(),
    **dict.fromkeys(HEAD_SHAPES, st.one_of(st.none(), st.sampled_from([16, 64, 128, 192]))),
    "disable_cuda_graph": st.booleans(),
    "disable_hybrid_swa_memory": st.booleans(),
    "enable_hierarchical_cache": st.booleans(),
    "mamba_scheduler_strategy": st.sampled_from(RELEASES[BASELINE].mamba_strategy_choices),
    "mamba_ssm_dtype": st.one_of(
        st.none(), st.sampled_from(RELEASES[BASELINE].mamba_ssm_dtype_choices)
    ),
    "model_type": st.one_of(st.none(), st.sampled_from(["llama", "deepseek_v3", "qwen3_next"])),
    "checkpoint_quantization": st.one_of(st.none(), st.sampled_from(["fp8", "mxfp4"])),
    "remote_code": st.booleans(),
    # The releases sampled (0.5.7) read no variable the replay models: unset is all valid.
    "environment": st.just(()),
    # Nor any kernel package version (Triton is read from 0.5.12, on ROCm).
    "packages": st.just(()),
}


def test_every_field_has_a_valid_strategy() -> None:
    assert set(VALID) == set(FIELDS)
    assert len(FIELDS) >= 17


# -- the contract -----------------------------------------------------------------------


def judge(fields: dict[str, Any]) -> Report | InvalidConfigError:
    """Build and check; only InvalidConfigError may escape construction, nothing escapes check."""
    try:
        config = AttentionConfig(**fields)
    except InvalidConfigError as error:
        assert error.problems, "InvalidConfigError without a problem"
        text = str(error)
        for problem in error.problems:
            assert problem.flag in text
        return error
    report = check(config)
    assert isinstance(report, Report)
    assert isinstance(report.ok, bool)
    assert all(isinstance(finding, Finding) for finding in report.findings)
    assert report.ok == (not any(f.severity is Severity.ERROR for f in report.findings))
    # The fix search's shortcut (`CheckMemo.passing_copy_of`): a refusal at start-up fails.
    assert not (report.ok and refused_at_startup(config.parsed)), "refused, yet it passes"
    if not report.ok:
        assert all(isinstance(s, Suggestion) for s in report.suggestions)
    return report


def problem_fields(error: InvalidConfigError) -> set[str]:
    """The fields the error blames, mapped back from the flags it names."""
    blamed = set()
    for problem in error.problems:
        matching = [f for f in FIELDS if problem.flag in names_of(f)]
        assert matching, f"the problem names no field: {problem}"
        blamed.update(matching)
    return blamed


@fuzz(3000)
@given(field=st.sampled_from(FIELDS), value=GARBAGE)
def test_one_garbage_field_is_named_or_accepted(field: str, value: Any) -> None:
    fields = {"attention_arch": "mha", "platform": "cuda", field: value}
    outcome = judge(fields)
    if isinstance(outcome, InvalidConfigError):
        assert problem_fields(outcome) == {field}, str(outcome)
        assert any(name in str(outcome) for name in names_of(field))


@fuzz(2000)
@given(
    fields=st.fixed_dictionaries(
        {}, optional={name: st.one_of(GARBAGE, VALID[name]) for name in FIELDS}
    )
)
def test_any_fields_give_a_report_or_name_the_bad_flags(fields: dict[str, Any]) -> None:
    outcome = judge(fields)
    if isinstance(outcome, InvalidConfigError):
        assert problem_fields(outcome) <= set(fields), str(outcome)


def mostly_valid(name: str) -> st.SearchStrategy[Any]:
    """The real choices nine times in ten, garbage otherwise."""
    return st.integers(0, 9).flatmap(lambda roll: GARBAGE if roll == 0 else VALID[name])


def applied(config: AttentionConfig, suggestion: Suggestion) -> AttentionConfig:
    """The configuration with a suggestion's flags pasted in and its removals dropped."""
    changes: dict[str, Any] = {}
    for flag, value in suggestion.flags:
        name = flag.removeprefix("--").replace("-", "_")
        assert name in FIELDS, f"the suggestion sets an unknown flag {flag}"
        changes[name] = int(value) if name in ("page_size", "speculative_eagle_topk") else value
    for flag in suggestion.removes:
        name = flag.removeprefix("--").replace("-", "_")
        assert name in FIELDS, f"the suggestion drops an unknown flag {flag}"
        changes[name] = None
    return replace(config, **changes)


@fuzz(2500)
@given(fields=st.fixed_dictionaries({name: mostly_valid(name) for name in FIELDS}))
def test_mostly_valid_configs_reach_the_guards_deep_paths(fields: dict[str, Any]) -> None:
    outcome = judge(fields)
    if isinstance(outcome, InvalidConfigError):
        assert problem_fields(outcome) <= set(fields)
        return
    report = outcome
    json.dumps(report.to_dict())
    assert report.resolved.prefill_backend in (None, *BACKENDS)
    assert report.resolved.decode_backend in (None, *BACKENDS)
    assert report.resolved.page_size >= 1
    for finding in report.findings:
        assert finding.backend is None or finding.backend in BACKENDS
        assert finding.message
    for suggestion in report.suggestions:
        fixed = check(applied(report.config, suggestion))
        assert fixed.ok, f"suggestion {suggestion.summary!r} does not pass: {fixed.errors}"


# -- a type-strictness bug the fuzzer once found -------------------------------------------


@fuzz(200)
@given(
    capability=st.tuples(
        st.one_of(st.integers(1, 12), st.floats(1, 12), st.booleans()),
        st.one_of(st.integers(0, 9), st.floats(0, 9), st.booleans()),
    )
)
@example(capability=(10, 0.0))
def test_capability_tuples_are_validated_the_same_every_time(
    capability: tuple[Any, Any],
) -> None:
    fields: dict[str, Any] = {"attention_arch": "mha", "compute_capability": capability}
    first = judge(fields)
    with contextlib.suppress(InvalidConfigError):  # validate an int twin first
        twin = (int(capability[0]), int(capability[1]))
        AttentionConfig(attention_arch="mha", compute_capability=twin)
    second = judge(fields)
    assert type(first) is type(second), f"{capability!r}: {first!r} then {second!r}"
    if isinstance(second, Report):
        assert all(type(part) is int for part in capability), f"accepted {capability!r}"


# -- the command line -----------------------------------------------------------------------

PATH_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "._-", max_size=10)
# Random tokens stay under the OS file-name limit; over-long paths have their own test below.
TOKEN = st.one_of(st.text(max_size=12), WHITESPACE, NEAR_MISSES, st.sampled_from(["--", "-", "-h"]))
NUMERAL = st.one_of(st.sampled_from(["1", "16", "0", "-4", "+8", " 16 ", "1e3"]), HUGE_NUMERAL)
CHECK_VALUES: dict[str, st.SearchStrategy[str]] = {
    "--attention-backend": st.sampled_from(BACKENDS),
    "--prefill-attention-backend": st.sampled_from(BACKENDS),
    "--decode-attention-backend": st.sampled_from(BACKENDS),
    "--kv-cache-dtype": st.sampled_from(sorted(KV_DTYPE_SPELLINGS)),
    "--page-size": st.one_of(st.sampled_from(["1", "16", "32", "64", "128"]), NUMERAL),
    "--speculative-algorithm": st.sampled_from([*SPECULATIVE_ALGORITHMS, "eagle"]),
    "--speculative-eagle-topk": st.one_of(st.sampled_from(["1", "2", "4"]), NUMERAL),
    "--speculative-attention-mode": st.sampled_from(["prefill", "decode"]),
    "--attention-arch": st.sampled_from(["mha", "mla"]),
    "--compute-capability": st.one_of(
        st.sampled_from(["10.0", "sm100", "90", "8.6", "sm_120", "0.0"]), NUMERAL
    ),
    "--model-config": st.one_of(st.sampled_from(MODEL_DIRS), PATH_TEXT),
}
SWITCHES = ("--sliding-window", "--no-sliding-window", "--multimodal", "--no-multimodal", "--json")
PLATFORM_VALUE = st.one_of(
    st.sampled_from(["cuda", "rocm", "npu", "xpu", "cpu"]), NEAR_MISSES, st.text(max_size=8)
)


def flag_with_value(values: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[list[str]]:
    """`--flag value` with a real value or a random token, or `--flag=value`, or a bare flag."""
    # Each flag's strategy is built once: one built per draw is validated again each time.
    forms = {
        name: st.one_of(
            st.tuples(st.just(name), values[name]).map(list),
            st.tuples(st.just(name), values[name]).map(lambda pair: ["=".join(pair)]),
            st.tuples(st.just(name), TOKEN).map(list),
            st.just([name]),
        )
        for name in sorted(values)
    }
    return st.sampled_from(sorted(values)).flatmap(forms.__getitem__)


def token_groups(values: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[list[str]]:
    group = st.one_of(
        st.sampled_from(SWITCHES).map(lambda s: [s]),
        TOKEN.map(lambda t: [t]),
        *([flag_with_value(values)] * 2 if values else []),
    )
    return st.lists(group, max_size=6).map(lambda groups: [t for g in groups for t in g])


SGLANG_VALUES = {
    name: value
    for name, value in CHECK_VALUES.items()
    if name
    in (
        "--attention-backend",
        "--prefill-attention-backend",
        "--decode-attention-backend",
        "--kv-cache-dtype",
        "--page-size",
        "--speculative-algorithm",
        "--speculative-eagle-topk",
        "--speculative-attention-mode",
    )
} | {"--model-path": st.one_of(st.sampled_from(MODEL_DIRS), PATH_TEXT), "--tp": st.just("8")}
LAUNCH = st.tuples(
    st.sampled_from([[], ["python3", "-m", "sglang.launch_server"], ["sglang", "serve"]]),
    token_groups(SGLANG_VALUES),
).map(lambda parts: ["--", *parts[0], *parts[1]])

CHECK_ARGS = st.tuples(PLATFORM_VALUE, token_groups(CHECK_VALUES), st.one_of(st.just([]), LAUNCH))
MATRIX_VALUES: dict[str, st.SearchStrategy[str]] = {
    "--attention-arch": st.sampled_from(["mha", "mla"]),
    "--platform": st.sampled_from(["cuda", "rocm", "npu", "xpu", "cpu"]),
    "--compute-capability": CHECK_VALUES["--compute-capability"],
    "--kv-cache-dtype": CHECK_VALUES["--kv-cache-dtype"],
    "--page-size": CHECK_VALUES["--page-size"],
    "--speculative-eagle-topk": CHECK_VALUES["--speculative-eagle-topk"],
    "--model-config": CHECK_VALUES["--model-config"],
}


WRITERS = frozenset({"docs", "export"})


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Exit code and everything printed; any exception but SystemExit fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code: int | str | None = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    printed = out.getvalue() + err.getvalue()
    assert code in (0, 1, 2), f"{argv!r} exited {code!r}:\n{printed}"
    assert "Traceback" not in printed, f"{argv!r} printed a traceback:\n{printed}"
    assert isinstance(code, int)
    return code, printed


@fuzz(2000)
@given(args=CHECK_ARGS)
def test_cli_check_exits_0_1_or_2(args: tuple[str, list[str], list[str]]) -> None:
    platform, tokens, launch = args
    code, printed = run_cli(["check", "--platform", platform, *tokens, *launch])
    if code == 2:
        assert printed.strip(), "exit 2 without saying why"


@fuzz(700)
@given(
    argv=st.one_of(
        token_groups(MATRIX_VALUES).map(lambda tokens: ["matrix", *tokens]),
        st.tuples(st.one_of(st.sampled_from(BACKENDS), TOKEN), token_groups({})).map(
            lambda parts: ["explain", parts[0], *parts[1]]
        ),
        # Never `docs` or `export`: without --check they write files into the checkout.
        st.lists(TOKEN, max_size=4).filter(lambda argv: not WRITERS & set(argv)),
    )
)
def test_cli_other_commands_exit_0_1_or_2(argv: list[str]) -> None:
    run_cli(argv)


@fuzz(15)
@given(tokens=token_groups(CHECK_VALUES))
def test_cli_check_with_platform_detection(tokens: list[str]) -> None:
    """Without --platform the CLI detects it (with torch when installed): slow, so few cases."""
    run_cli(["check", *tokens])


OVERLONG = "x" * 300  # past the 255-byte file-name limit of common file systems


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--platform", "cuda", "--attention-arch", "mha", "--model-config", OVERLONG],
        ["matrix", "--model-config", OVERLONG],
    ],
    ids=["check-model-config", "matrix-model-config"],
)
def test_an_overlong_model_config_is_a_usage_error(argv: list[str]) -> None:
    code, printed = run_cli(argv)
    assert code == 2
    assert "too long" in printed.lower()


def test_an_overlong_launch_model_path_is_not_a_local_model() -> None:
    argv = [
        "check",
        "--platform",
        "cuda",
        "--attention-arch",
        "mha",
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        OVERLONG,
    ]
    code, printed = run_cli(argv)
    assert code == 0
    # The guard reads --model-path, so it is not "ignored": the output says it found no config.
    assert "--model-path: no config.json found locally" in printed and OVERLONG in printed


def test_a_json_report_parses() -> None:
    # An MLA backend the live matrix refuses an FP4 cache: the report has an error.
    backend = fp4_refused_on_b200(Arch.MLA)
    code, printed = run_cli(
        [
            "check",
            "--platform",
            "cuda",
            "--compute-capability",
            "10.0",
            "--attention-arch",
            "mla",
            "--attention-backend",
            backend,
            "--kv-cache-dtype",
            "fp4_e2m1",
            "--json",
        ]
    )
    assert code == 1
    assert json.loads(printed)["ok"] is False
