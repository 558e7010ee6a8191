"""Columns declare what they check; the guard's compiled tables and memo are honest caches.

A column's trigger, its flags and its action are data (`compat/matrix.py`): changing one in
an in-memory copy of the matrix changes what the guard does, with no other edit. The guard
compiles its tables and words its findings once per matrix; a cold copy of a matrix must
word every report exactly as a warm one, or a memo key misses an input.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from cells import B200, NO, with_cell
from msgspec.structs import replace

from compat import MATRIX, AttentionConfig, InvalidConfigError, check
from compat.claim.cells import Action
from compat.claim.columns import ALWAYS, Column, ColumnId, KvDtypeIn, ModelHas, TopkRange
from compat.claim.matrix import Matrix
from compat.guard.plan import CompiledGuard, backend_plan, compiled
from compat.guard.report import Report
from compat.releases import RELEASES, release_matrix
from compat.vocab.terms import Arch, KvDtype, KvFamily, ModelFeature


def with_column(matrix: Matrix, column_id: ColumnId, **changes: Any) -> Matrix:
    """A fresh copy of `matrix` with one column's declaration changed."""
    columns = tuple(replace(c, **changes) if c.id is column_id else c for c in matrix.columns)
    return replace(matrix, columns=columns)


def column(matrix: Matrix, column_id: ColumnId) -> Column:
    return matrix.column(column_id)


# -- the memo is keyed by everything that shapes a finding -------------------------------------

PRESETS = (
    {"platform": "cuda", "compute_capability": (8, 0)},
    {"platform": "cuda", "compute_capability": (9, 0)},
    {"platform": "cuda", "compute_capability": (10, 0)},
    {"platform": "cuda"},
    {"platform": "rocm"},
    {"platform": "npu"},
    {"platform": "cpu"},
)


def sample_configs(release: str, count: int, seed: int) -> list[AttentionConfig]:
    """`count` valid configurations of `release`, spread over every input the guard reads."""
    rules = RELEASES[release]
    backends = sorted(rules.backend_set)
    dtypes = sorted(rules.kv_set)
    rng = random.Random(seed)
    configs: list[AttentionConfig] = []
    while len(configs) < count:
        topk = rng.choice((None, None, 1, 2, 4))
        fields: dict[str, Any] = {
            "sglang_version": release,
            "attention_arch": rng.choice(("mha", "mla")),
            "kv_cache_dtype": rng.choice(dtypes),
            "page_size": rng.choice((None, 1, 16, 32, 64, 128)),
            "sliding_window": rng.random() < 0.3,
            "multimodal": rng.random() < 0.3,
            "encoder_decoder": rng.random() < 0.1,
            "sparse_attention": rng.random() < 0.1,
            "speculative_attention_mode": rng.choice(("prefill", "decode")),
            **rng.choice(PRESETS),
        }
        if topk is not None:
            fields.update(speculative_algorithm="EAGLE", speculative_eagle_topk=topk)
            fields.update(speculative_num_steps=3, speculative_num_draft_tokens=8)
        placement = rng.random()
        if placement < 0.5:
            fields["attention_backend"] = rng.choice(backends)
        elif placement < 0.8:
            fields["prefill_attention_backend"] = rng.choice(backends)
            fields["decode_attention_backend"] = rng.choice(backends)
        elif placement < 0.9:
            fields["decode_attention_backend"] = rng.choice(backends)
        try:
            configs.append(AttentionConfig(**fields))
        except InvalidConfigError:
            continue
    return configs


def words(report: Report) -> tuple[object, ...]:
    """Everything a report says except its suggestions (each a search of its own)."""
    return (
        report.resolved,
        tuple((f.to_dict(), f.enforced) for f in report.findings),
        report.startup_summary,
    )


@pytest.mark.parametrize("release", ["0.5.7", "0.5.23"])
def test_a_cold_matrix_words_every_report_as_a_warm_one(release: str) -> None:
    """A memo key that missed an input would hand one configuration another's finding.

    The warm matrix has seen every configuration once before; the cold copy sees them in
    the opposite order, so a finding shared by mistake differs in one of the two runs.
    """
    configs = sample_configs(release, 3000, seed=8)
    warm = release_matrix(release)
    for config in configs:
        check(config, warm)
    warm_words = [words(check(config, warm)) for config in configs]
    cold = replace(warm)
    assert compiled(cold) is not compiled(warm)
    cold_words = [words(check(config, cold)) for config in reversed(configs)][::-1]
    for config, warm_said, cold_said in zip(configs, warm_words, cold_words, strict=True):
        assert cold_said == warm_said, config
    # The suggestions search through the matrix's own guard: the same there.
    for config in configs[::300]:
        assert check(config, cold).suggestions == check(config, warm).suggestions, config


def test_the_compiled_tables_are_typed_and_belong_to_their_matrix() -> None:
    copy = replace(MATRIX)
    assert isinstance(compiled(MATRIX), CompiledGuard)
    assert compiled(MATRIX) is compiled(MATRIX)
    assert compiled(copy) is not compiled(MATRIX)
    assert compiled(copy).matrix is copy
    assert backend_plan(copy, Arch.MLA, "flashmla") is compiled(copy).plan(Arch.MLA, "flashmla")


# -- columns declare their guard semantics -------------------------------------------------------


def test_each_kv_family_has_the_column_its_trigger_names() -> None:
    for dtype in KvDtype:
        if dtype.family is None:
            with pytest.raises(ValueError, match="no table column"):
                MATRIX.kv_column(dtype)
        else:
            trigger = column(MATRIX, MATRIX.kv_column(dtype)).when
            assert trigger == KvDtypeIn(dtype.family)


def test_the_active_columns_follow_the_triggers() -> None:
    fp8_paged = check(
        AttentionConfig(
            attention_arch="mla",
            attention_backend="flashmla",
            kv_cache_dtype="fp8_e4m3",
            page_size=64,
            speculative_algorithm="EAGLE",
            speculative_eagle_topk=2,
            sliding_window=True,
            **B200,
        )
    )
    active = compiled(MATRIX).active_columns(fp8_paged.resolved, frozenset())
    expected = {c.id for c in MATRIX.columns if c.when in (ALWAYS, KvDtypeIn(KvFamily.FP8))}
    expected |= {ColumnId.SPEC_TOPK_GT1, ColumnId.NATIVE_PAGE_SIZES}
    assert active == expected
    with_feature = compiled(MATRIX).active_columns(
        fp8_paged.resolved, frozenset({ModelFeature.SLIDING_WINDOW})
    )
    assert with_feature == expected | {ColumnId.SLIDING_WINDOW}


def sliding_window_refusal() -> tuple[Matrix, dict[str, Any]]:
    """A copy of the matrix where triton's MHA sliding-window cell is ❌, and a config on it."""
    matrix = with_cell(MATRIX, Arch.MHA, "triton", ColumnId.SLIDING_WINDOW, NO)
    return matrix, {"attention_arch": "mha", "attention_backend": "triton", **B200}


def test_a_columns_trigger_decides_when_it_applies() -> None:
    matrix, fields = sliding_window_refusal()
    rule = ColumnId.SLIDING_WINDOW.rule_id
    assert rule not in check(AttentionConfig(**fields), matrix).rules
    assert rule in check(AttentionConfig(**fields, sliding_window=True), matrix).rules
    always = with_column(matrix, ColumnId.SLIDING_WINDOW, when=ALWAYS)
    assert rule in check(AttentionConfig(**fields), always).rules
    by_multimodal = with_column(
        matrix, ColumnId.SLIDING_WINDOW, when=ModelHas(ModelFeature.MULTIMODAL)
    )
    assert rule not in check(AttentionConfig(**fields, sliding_window=True), by_multimodal).rules
    assert rule in check(AttentionConfig(**fields, multimodal=True), by_multimodal).rules


def test_a_columns_flags_and_action_are_what_its_findings_say() -> None:
    matrix, fields = sliding_window_refusal()
    config = AttentionConfig(**fields, sliding_window=True)
    rule = ColumnId.SLIDING_WINDOW.rule_id
    (before,) = (f for f in check(config, matrix).findings if f.rule == rule)
    assert before.flags == ("--attention-backend",)
    assert before.severity is column(matrix, ColumnId.SLIDING_WINDOW).action.severity
    declared = with_column(
        matrix, ColumnId.SLIDING_WINDOW, flags=("--model-path",), action=Action.ERROR
    )
    (after,) = (f for f in check(config, declared).findings if f.rule == rule)
    assert after.flags == ("--attention-backend", "--model-path")
    assert after.severity is Action.ERROR.severity


def test_speculative_columns_skip_the_prefill_backend_in_decode_mode() -> None:
    """`TopkRange` marks a speculative column; the ALWAYS trigger does not."""
    assert TopkRange(1, 1).speculative and not ALWAYS.speculative
    fields: dict[str, Any] = {
        "attention_arch": "mla",
        "prefill_attention_backend": "fa4",
        "decode_attention_backend": "flashinfer",
        "speculative_algorithm": "EAGLE",
        "speculative_eagle_topk": 1,
        **B200,
    }
    rule = ColumnId.SPEC_TOPK_1.rule_id
    assert MATRIX.row(Arch.MLA, "fa4").cells[ColumnId.SPEC_TOPK_1] == NO  # type: ignore[union-attr]
    assert rule in check(AttentionConfig(**fields)).rules
    decode_mode = AttentionConfig(**fields, speculative_attention_mode="decode")
    assert rule not in check(decode_mode).rules


def test_snapping_is_the_action_of_the_page_size_column() -> None:
    """A fixed native size is snapped to because the column's action says SNAP."""
    assert column(MATRIX, ColumnId.NATIVE_PAGE_SIZES).action is Action.SNAP
    assert backend_plan(MATRIX, Arch.MLA, "flashmla").fixed_page_sizes == frozenset({64})
    warned = with_column(MATRIX, ColumnId.NATIVE_PAGE_SIZES, action=Action.WARN)
    assert backend_plan(warned, Arch.MLA, "flashmla").fixed_page_sizes is None
    assert warned.fixed_page_sizes() == ()


def test_declarations_the_guard_cannot_honour_are_refused() -> None:
    with pytest.raises(ValueError, match="two columns speak for fp4 KV dtypes"):
        with_column(MATRIX, ColumnId.FP8_KV, when=KvDtypeIn(KvFamily.FP4))
    with pytest.raises(ValueError, match="snaps page sizes but is not triggered by a page size"):
        with_column(MATRIX, ColumnId.FP8_KV, action=Action.SNAP)


def test_backends_declare_the_architectures_they_serve() -> None:
    flashmla = MATRIX.backend("flashmla")
    assert flashmla.archs == frozenset({Arch.MLA})
    assert MATRIX.arch_status("flashmla", Arch.MHA).label == "known not to work"
    assert MATRIX.backend("triton").archs == frozenset(Arch)
