"""The documented verdicts of a release read that release's matrix, and speak its names.

A finding on release R (its message, its value, its allowed list) names only backends and
KV dtypes that R accepts. The oracle is R's own start-up data (`RELEASES`); the names to
look for are every backend and KV spelling that any release accepts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.claim.cells import CellKind
from compat.claim.columns import ColumnId
from compat.guard.report import Enforcement, Report
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.terms import Arch

EVERY_BACKEND = {name for rules in RELEASES.values() for name in rules.backend_choices}
EVERY_KV = {dtype for rules in RELEASES.values() for dtype in rules.kv_choices}
B200: dict[str, Any] = {"platform": "cuda", "compute_capability": (10, 0)}
MACHINES: tuple[dict[str, Any], ...] = (
    B200,
    {"platform": "cuda", "compute_capability": (9, 0)},
    {"platform": "rocm"},
    {"platform": "cpu"},
)
_WORD = re.compile(r"[a-z0-9_]+")


def _named(report: Report) -> set[str]:
    """Every backend or KV spelling any finding of `report` names."""
    words: set[str] = set()
    for finding in report.findings:
        for text in (finding.message, finding.value or "", *finding.allowed):
            words.update(_WORD.findall(text))
    return words & (EVERY_BACKEND | EVERY_KV)


def _foreign(report: Report, release: str) -> set[str]:
    rules = RELEASES[release]
    return _named(report) - set(rules.backend_choices) - set(rules.kv_choices)


def _launches(release: str, count: int, seed: int) -> Iterator[AttentionConfig]:
    rules = RELEASES[release]
    rng = random.Random(seed)
    for _ in range(count):
        topk = rng.choice((None, 1, 4))
        placement = rng.choice(("attention_backend", "prefill_attention_backend", "both"))
        backend = rng.choice(rules.backend_choices)
        flags: dict[str, Any] = (
            {
                "prefill_attention_backend": backend,
                "decode_attention_backend": rng.choice(rules.backend_choices),
            }
            if placement == "both"
            else {placement: backend}
        )
        yield AttentionConfig(
            attention_arch=rng.choice(("mha", "mla")),
            kv_cache_dtype=rng.choice(rules.kv_choices),
            page_size=rng.choice((None, 1, 16, 64, 128)),
            speculative_algorithm=None if topk is None else "EAGLE",
            speculative_eagle_topk=topk,
            sliding_window=rng.random() < 0.2,
            multimodal=rng.random() < 0.2,
            sparse_attention=rng.random() < 0.2,
            sglang_version=release,
            **flags,
            **rng.choice(MACHINES),
        )


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_findings_name_only_what_the_release_accepts(release: str) -> None:
    for config in _launches(release, 300, seed=RELEASE_NAMES.index(release)):
        report = check(config)
        foreign = _foreign(report, release)
        assert not foreign, (
            f"SGLang {release}: findings name {sorted(foreign)}, which it does not accept "
            f"({[f.message for f in report.findings]})"
        )


def test_the_search_sees_names_from_other_releases() -> None:
    """The check has teeth: the baseline's matrix, asked about 0.5.23, names its own backends."""
    config = AttentionConfig(
        attention_arch="mla", attention_backend="flashmla", kv_cache_dtype="nvfp4",
        sglang_version="0.5.23", **B200,
    )  # fmt: skip
    old = check(config, release_matrix(RELEASE_NAMES[0]))
    assert "cutlass_mla" in _foreign(old, "0.5.23")
    assert not _foreign(check(config), "0.5.23")


def _config(**fields: Any) -> AttentionConfig:
    return AttentionConfig(sglang_version="0.5.23", attention_arch="mla", **B200, **fields)


def test_cutedsl_mla_is_judged_from_its_row_on_0_5_23() -> None:
    row = release_matrix("0.5.23").row(Arch.MLA, "cutedsl_mla")
    assert row is not None
    report = check(_config(attention_backend="cutedsl_mla", kv_cache_dtype="fp8_e4m3"))
    assert not [f for f in report.findings if f.rule.startswith("arch-")]
    assert report.ok
    # Its ❌ FP4 cell speaks: the page documents the FP4 cache as unsupported on it.
    fp4 = check(_config(decode_attention_backend="cutedsl_mla", kv_cache_dtype="nvfp4"))
    assert ("fp4-kv", "cutedsl_mla") in {(f.rule, f.backend) for f in fp4.findings}


def test_flashmla_with_nvfp4_names_only_0_5_23_backends() -> None:
    report = check(_config(attention_backend="flashmla", kv_cache_dtype="nvfp4"))
    assert report.refused_at_startup
    assert not _foreign(report, "0.5.23")
    assert "cutlass_mla" not in " ".join(f.message for f in report.findings)


def test_trtllm_mla_takes_no_fp4_e2m1_on_0_5_23() -> None:
    report = check(_config(attention_backend="trtllm_mla", kv_cache_dtype="nvfp4"))
    texts = [f.message for f in report.findings] + [a for f in report.findings for a in f.allowed]
    assert not any("fp4_e2m1" in text for text in texts)
    documented = [f for f in report.findings if f.rule == "backend-kv-dtype"]
    assert documented and set(documented[0].allowed) <= set(RELEASES["0.5.23"].kv_choices)


def test_an_alias_is_judged_by_its_backend_row_under_its_own_name() -> None:
    for release in RELEASE_NAMES:
        matrix = release_matrix(release)
        for alias, backend in matrix.aliases.items():
            arch = next(a for a in Arch if matrix.row(a, backend) is not None)
            fields = {"attention_arch": arch.value, "sglang_version": release, **B200}
            report = check(AttentionConfig(attention_backend=alias, **fields))
            undocumented = [f for f in report.findings if f.rule == "arch-undocumented"]
            assert not undocumented, (release, alias)


def test_a_not_stated_cell_warns_and_says_so() -> None:
    matrix = release_matrix(NEWEST)
    row = matrix.row(Arch.MHA, "dsv4")
    assert row is not None and row.cells[ColumnId.SLIDING_WINDOW].kind is CellKind.NOT_STATED
    config = AttentionConfig(
        attention_arch="mha", attention_backend="dsv4", sliding_window=True,
        sglang_version=NEWEST, **B200,
    )  # fmt: skip
    (finding,) = [f for f in check(config).findings if f.rule == "sliding-window"]
    assert finding.severity.value == "warning"
    assert finding.enforced is Enforcement.DOCUMENTED
    assert "not stated" in finding.message and "dsv4" in finding.message
