"""`replaced()`, the fix search's and the finder's copy-with-changes, equals construction.

It checks only the changed values when they are the ones checked alone (backends, KV
dtype, algorithm, integers) and the release is the same; whatever is changed, the copy
must equal `dataclasses.replace` (which constructs afresh): the same fields, the same
`parsed`, or the same InvalidConfigError.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat import AttentionConfig, InvalidConfigError
from compat.inputs.config import replaced
from compat.inputs.release_choice import VERSION_VARIABLE
from compat.releases import RELEASES
from compat.vocab.hardware import ComputeCapability

BASES = (
    AttentionConfig(),
    AttentionConfig(sglang_version="0.5.7", kv_cache_dtype="fp4_e2m1", attention_arch="mla"),
    AttentionConfig(
        sglang_version="0.5.23",
        attention_backend="fa3",
        page_size=16,
        compute_capability=ComputeCapability(9, 0),
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=2,
    ),
    AttentionConfig(
        sglang_version="0.5.15",
        prefill_attention_backend="fa4",
        decode_attention_backend="trtllm_mla",
        attention_arch="mla",
        compute_capability=(10, 0),
        tp_size=8,
    ),
    AttentionConfig(platform="rocm", kv_cache_dtype="fp8_e4m3", sliding_window=True),
)


class Shout(str):
    """A str subclass: construction stores the plain string it holds."""


NAMES = sorted({name for rules in RELEASES.values() for name in rules.backend_choices})
KV_SPELLINGS = sorted({name for rules in RELEASES.values() for name in rules.kv_choices})
NAME_VALUES = st.one_of(
    st.none(),
    st.sampled_from(NAMES),
    st.sampled_from(["fa", "FA3", "flashinfer ", "", "fp4", "eagle"]),
    st.integers(-1, 3),
    st.builds(Shout, st.sampled_from(NAMES)),
)
INTEGER_VALUES = st.one_of(
    st.none(), st.integers(-2, 130), st.booleans(), st.sampled_from(["16", 1.0, (16,), (1, [2])])
)
CHANGES: dict[str, st.SearchStrategy[Any]] = {
    "attention_backend": NAME_VALUES,
    "prefill_attention_backend": NAME_VALUES,
    "decode_attention_backend": NAME_VALUES,
    "kv_cache_dtype": st.one_of(st.sampled_from(KV_SPELLINGS), NAME_VALUES),
    "speculative_algorithm": st.one_of(
        st.sampled_from(["EAGLE", "eagle", "EAGLE3", "NGRAM", "MEDUSA"]), NAME_VALUES
    ),
    "page_size": INTEGER_VALUES,
    "speculative_eagle_topk": INTEGER_VALUES,
    "speculative_num_steps": INTEGER_VALUES,
    "tp_size": INTEGER_VALUES,
    # Fields checked with others, or that choose the release: construction checks all.
    "platform": st.sampled_from(["cuda", "rocm", "tpu"]),
    "compute_capability": st.sampled_from([None, (9, 0), ComputeCapability(10, 0), "sm100"]),
    "sglang_version": st.sampled_from([None, "0.5.7", "0.5.23", "0.5.99"]),
    "sliding_window": st.sampled_from([True, False, 1]),
}


def outcome(build: Any) -> tuple[str, object]:
    try:
        config = build()
    except InvalidConfigError as error:
        return "invalid", str(error)
    return "valid", (config, config.parsed)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(BASES),
    st.dictionaries(st.sampled_from(sorted(CHANGES)), st.none(), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({key: CHANGES[key] for key in keys})
    ),
)
def test_a_copy_equals_a_fresh_construction(base: AttentionConfig, changes: dict[str, Any]) -> None:
    copied = outcome(lambda: replaced(base, **changes))
    fresh = outcome(lambda: dataclasses.replace(base, **changes))
    assert copied == fresh
    if copied[0] == "valid":  # the stored values are the plain ones construction stores
        config = copied[1][0]  # type: ignore[index]
        assert all(type(getattr(config, name)) is not Shout for name in changes)


def test_a_copy_reads_the_release_of_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """A config that names no release is judged for the one chosen when it is built: a copy
    made after the chosen release changed is judged (and checked) for the new one."""
    monkeypatch.setenv(VERSION_VARIABLE, "0.5.7")
    base = AttentionConfig(kv_cache_dtype="fp4_e2m1", attention_arch="mla")
    monkeypatch.setenv(VERSION_VARIABLE, "0.5.16")
    assert replaced(base, page_size=64).parsed.release is RELEASES["0.5.16"]
    monkeypatch.setenv(VERSION_VARIABLE, "0.5.23")  # fp4_e2m1 was removed in 0.5.21
    with pytest.raises(InvalidConfigError, match="fp4_e2m1"):
        replaced(base, page_size=64)


def test_a_value_accepted_before_is_checked_again_where_it_could_fail() -> None:
    """A copy skips the check of a value its release accepted before (by field, type and
    release): a value that another release refuses, or a bool equal to an accepted
    integer, is still refused."""
    old = AttentionConfig(sglang_version="0.5.7", attention_arch="mla")
    new = AttentionConfig(sglang_version="0.5.23", attention_arch="mla")
    for _ in range(2):  # the second time, from what the first remembered
        assert replaced(old, kv_cache_dtype="fp4_e2m1").parsed.kv_spelling == "fp4_e2m1"
        with pytest.raises(InvalidConfigError, match=r"'fp4_e2m1' was removed in SGLang 0\.5\.21"):
            replaced(new, kv_cache_dtype="fp4_e2m1")
        assert replaced(old, page_size=1).parsed.page_size == 1
        refused = r"--page-size: expected a positive integer, got True"
        with pytest.raises(InvalidConfigError, match=refused):
            replaced(old, page_size=True)
        # A value that cannot be remembered (it cannot be hashed) is checked, as construction
        # checks it.
        with pytest.raises(InvalidConfigError, match=r"--page-size: expected a positive"):
            replaced(old, page_size=(1, [2]))
