"""`CheckMemo`, check() remembered by a configuration's field values: a copy's report is the
copy's own, found without building the copy when an equal configuration was checked."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat import AttentionConfig, InvalidConfigError, Report, check
from compat.guard.check_memo import CheckMemo
from compat.inputs.config import FIELD_NAMES, field_values, replaced
from compat.vocab.hardware import ComputeCapability

H100_MLA = AttentionConfig(
    sglang_version="0.5.23",
    attention_arch="mla",
    compute_capability=ComputeCapability(9, 0),
    page_size=16,
)


class Counted:
    """check(), counting the configurations it is asked about."""

    def __init__(self) -> None:
        self.asked: list[AttentionConfig] = []

    def __call__(self, config: AttentionConfig) -> Report:
        self.asked.append(config)
        return check(config)


def test_the_field_names_are_the_fields_a_configuration_is_compared_by() -> None:
    compared = [f.name for f in dataclasses.fields(AttentionConfig) if f.compare]
    assert list(FIELD_NAMES) == compared
    assert field_values(H100_MLA) == tuple(getattr(H100_MLA, name) for name in compared)


def test_a_copy_is_checked_once_whatever_it_was_copied_from() -> None:
    run = Counted()
    memo = CheckMemo(run)
    other = replaced(H100_MLA, page_size=64, attention_backend="flashmla")
    first = memo.copy_of(H100_MLA, {"page_size": 64, "attention_backend": "flashmla"})
    again = memo.copy_of(other, {})
    by_other_path = memo.copy_of(
        replaced(H100_MLA, page_size=64), {"attention_backend": "flashmla"}
    )
    assert run.asked == [other]  # built and checked once
    assert first is again is by_other_path is memo(other)
    assert first.config == other and first == check(other)
    assert len(memo) == 1
    memo.copy_of(H100_MLA, {"page_size": 32})
    assert len(run.asked) == 2


# The fields the fix search and the finder change, with values valid and invalid.
CHANGES: dict[str, st.SearchStrategy[Any]] = {
    "attention_backend": st.sampled_from([None, "fa3", "flashmla", "triton", "fa4", "nope"]),
    "prefill_attention_backend": st.sampled_from([None, "fa4", "flashinfer"]),
    "decode_attention_backend": st.sampled_from([None, "trtllm_mla", "cutlass_mla"]),
    "kv_cache_dtype": st.sampled_from(["auto", "fp8_e4m3", "fp8_e5m2", "bf16"]),
    "page_size": st.sampled_from([None, 1, 16, 32, 64, 0]),
    "speculative_eagle_topk": st.sampled_from([None, 1, 2]),
    "speculative_algorithm": st.sampled_from([None, "EAGLE"]),
    "compute_capability": st.sampled_from([(9, 0), ComputeCapability(10, 0)]),
}
CHANGE_LISTS = st.lists(
    st.dictionaries(st.sampled_from(sorted(CHANGES)), st.none(), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({key: CHANGES[key] for key in keys})
    ),
    min_size=1,
    max_size=6,
)
"""Copies asked one after another, a few fields changed in each (equal ones among them)."""


def _guards_report(change: dict[str, Any], ask: Callable[..., object]) -> Report | None:
    """check() of H100_MLA's copy with `change`; None where the copy is invalid, once `ask`
    (a memo's question about the same copy) has raised the same InvalidConfigError."""
    try:
        return check(replaced(H100_MLA, **change))
    except InvalidConfigError as error:
        with pytest.raises(InvalidConfigError) as raised:
            ask(H100_MLA, change)
        assert str(raised.value) == str(error)
        return None


@settings(max_examples=150, deadline=None)
@given(CHANGE_LISTS)
def test_every_copys_report_is_the_guards_report_of_that_copy(
    changes: list[dict[str, Any]],
) -> None:
    """Copies asked one after another (equal ones among them): each report is check() of
    the copy itself, or the copy's InvalidConfigError."""
    memo = CheckMemo(check)
    for change in changes:
        expected = _guards_report(change, memo.copy_of)
        if expected is None:
            continue
        report = memo.copy_of(H100_MLA, change)
        assert report == expected
        assert report.config == expected.config


@dataclasses.dataclass(frozen=True)
class Labelled(AttentionConfig):
    label: str = ""


def test_a_subclass_with_fields_of_its_own_is_keyed_by_all_of_them() -> None:
    run = Counted()
    memo = CheckMemo(run)
    memo(Labelled(sglang_version="0.5.23", label="a"))
    memo(Labelled(sglang_version="0.5.23", label="b"))
    memo.copy_of(Labelled(sglang_version="0.5.23", label="c"), {"page_size": 16})
    assert [config.label for config in run.asked] == ["a", "b", "c"]  # type: ignore[attr-defined]


def test_a_change_of_a_field_that_does_not_exist_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="'page_sizes'"):
        CheckMemo(check).copy_of(H100_MLA, {"page_sizes": 16})


@settings(max_examples=150, deadline=None)
@given(CHANGE_LISTS)
def test_a_passing_copy_is_the_guards_report_and_a_failing_one_is_none(
    changes: list[dict[str, Any]],
) -> None:
    """The fix search's ask: the copy's own report when it passes, None when it fails,
    whether the memo knew the copy, knew it refused, or saw it first."""
    memo = CheckMemo(check)
    for change in changes:
        expected = _guards_report(change, memo.passing_copy_of)
        if expected is None:
            continue
        assert memo.passing_copy_of(H100_MLA, change) == (expected if expected.ok else None)
        assert memo.copy_of(H100_MLA, change) == expected


def test_a_copy_refused_at_start_up_is_not_checked_until_its_report_is_asked_for() -> None:
    run = Counted()
    memo = CheckMemo(run)
    refused = {"attention_backend": "trtllm_mla"}  # an SM100 kernel on an H100
    assert memo.passing_copy_of(H100_MLA, refused) is None
    assert memo.passing_copy_of(H100_MLA, refused) is None
    assert run.asked == []  # the start-up replay alone said no, once
    report = memo.copy_of(H100_MLA, refused)  # a caller wanting the whole report gets it
    assert run.asked == [replaced(H100_MLA, **refused)]
    assert report.refused_at_startup
    passing = {"attention_backend": "flashmla", "page_size": 64}
    assert memo.passing_copy_of(H100_MLA, passing) == check(replaced(H100_MLA, **passing))
    assert len(run.asked) == 2
