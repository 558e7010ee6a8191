"""Suggested fixes keep what the launch asked for (issue #22), each case named as an operator
met it: the KV dtype's family, speculation, the backend named; never a deprecated alias; a
fix that passes only because SGLang swaps the backend says so; no fix offered twice.

Each test also re-checks what it asserts about: a fix is applied and judged again, and the
resolution it claims is the guard's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.guard import check_memo
from compat.guard.check_memo import CheckMemo
from compat.guard.report import Suggestion
from compat.guard.suggest import suggest_fixes
from compat.releases import release_matrix, release_rules
from compat.vocab.terms import KV_DTYPE_SPELLINGS, KvFamily

B200 = {"platform": "cuda", "compute_capability": (10, 0)}
H200 = {"platform": "cuda", "compute_capability": (9, 0)}
MHA_0_5_23 = {"sglang_version": "0.5.23", "attention_arch": "mha"}
DEEPSEEK = {"attention_arch": "mla", "model_architecture": "DeepseekV3ForCausalLM"}
EAGLE_TOPK4 = {
    "speculative_algorithm": "EAGLE",
    "speculative_eagle_topk": 4,
    "speculative_num_steps": 3,
    "speculative_num_draft_tokens": 8,
}


def applied(config: AttentionConfig, suggestion: Suggestion) -> AttentionConfig:
    """`config` with a suggestion's flags set and its removals made."""
    changes: dict[str, Any] = {flag[2:].replace("-", "_"): None for flag in suggestion.removes}
    for flag, value in suggestion.flags:
        changes[flag[2:].replace("-", "_")] = int(value) if value.isdigit() else value
    if "speculative_algorithm" in changes and changes["speculative_algorithm"] is None:
        changes.update(speculative_num_steps=None, speculative_num_draft_tokens=None)
    return replace(config, **changes)


def test_deepseek_b200_nvfp4_on_0_5_23_first_fix_keeps_an_fp4_cache() -> None:
    config = AttentionConfig(sglang_version="0.5.23", kv_cache_dtype="nvfp4", **DEEPSEEK, **B200)
    report = check(config)
    assert not report.ok
    first = report.suggestions[0]
    flags = dict(first.flags)
    assert flags.get("--kv-cache-dtype") == "fp4_mx_block16", report.suggestions
    assert "--attention-backend" in flags or "--prefill-attention-backend" in flags, first
    fixed = check(applied(config, first))
    assert fixed.ok, fixed.errors
    assert fixed.resolved.kv_dtype.family is KvFamily.FP4  # SGLang runs an FP4 cache indeed
    # The fixes that give up FP4 come after every one that keeps it.
    families = [
        KV_DTYPE_SPELLINGS[dict(s.flags).get("--kv-cache-dtype", "nvfp4")].family
        for s in report.suggestions
    ]
    assert families == sorted(families, key=lambda family: family is not KvFamily.FP4)


def test_deepseek_b200_nvfp4_on_0_5_23_never_offers_the_tokenspeed_mla_alias() -> None:
    aliases = release_rules("0.5.23").backend_aliases
    assert "tokenspeed_mla" in aliases  # the case only means something while it is an alias
    configs = [
        AttentionConfig(sglang_version="0.5.23", kv_cache_dtype=kv, **DEEPSEEK, **B200)
        for kv in ("nvfp4", "fp4_mx_block16", "fp8_e5m2", "mxfp8")
    ]
    configs.append(
        AttentionConfig(
            sglang_version="0.5.23", attention_backend="flashmla", **EAGLE_TOPK4, **DEEPSEEK, **B200
        )
    )
    offered = {value for c in configs for s in check(c).suggestions for _, value in s.flags}
    assert offered  # some fix was offered, so the absence below says something
    assert not offered & set(aliases), sorted(offered & set(aliases))


def test_fa3_on_mi300x_fp8_e5m2_fix_says_sglang_runs_triton() -> None:
    config = AttentionConfig(
        sglang_version="0.5.23",
        attention_arch="mha",
        attention_backend="fa3",
        platform="rocm",
        model_architecture="LlamaForCausalLM",
    )
    report = check(config)
    e5m2 = [s for s in report.suggestions if dict(s.flags).get("--kv-cache-dtype") == "fp8_e5m2"]
    assert e5m2, report.suggestions
    (fix,) = e5m2
    fixed = check(applied(config, fix))
    assert fixed.ok
    assert (fixed.resolved.prefill_backend, fixed.resolved.decode_backend) == ("triton", "triton")
    assert fix.reason.endswith("SGLang then runs triton, not fa3"), fix.reason
    # It changes the KV dtype's family and still does not run fa3: it comes last.
    assert report.suggestions[-1] == fix


def test_flex_attention_prefill_on_mi300x_never_offers_prefill_x_plus_decode_x() -> None:
    config = AttentionConfig(
        sglang_version="0.5.23",
        attention_arch="mla",
        prefill_attention_backend="flex_attention",
        decode_attention_backend="fa3",
        platform="rocm",
    )
    report = check(config)
    summaries = [s.summary for s in report.suggestions]
    both = "--attention-backend triton (drop --prefill-attention-backend and "
    both += "--decode-attention-backend)"
    assert both in summaries
    for suggestion in report.suggestions:
        flags = dict(suggestion.flags)
        prefill = flags.get("--prefill-attention-backend")
        assert prefill is None or prefill != flags.get("--decode-attention-backend"), summaries
    # No two fixes make SGLang run the same thing.
    runs = [check(applied(config, s)).resolved for s in report.suggestions]
    assert len(set(runs)) == len(runs), summaries


def test_flashmla_topk4_on_b200_keeps_speculation_before_dropping_it() -> None:
    config = AttentionConfig(
        sglang_version="0.5.23", attention_backend="flashmla", **EAGLE_TOPK4, **DEEPSEEK, **B200
    )
    suggestions = check(config).suggestions
    reasons = [s.reason for s in suggestions]
    assert reasons[0] == "draft one token per step", reasons
    drop = reasons.index("run without speculative decoding")
    # Every fix that keeps speculation (a backend swap too) comes before the one that drops it.
    assert all(check(applied(config, s)).resolved.speculative for s in suggestions[:drop])
    assert drop == len(reasons) - 1, reasons


def test_dsv4_page_16_on_b200_keeps_the_named_backend_with_its_page_size() -> None:
    config = AttentionConfig(attention_backend="dsv4", page_size=16, **MHA_0_5_23, **B200)
    suggestions = check(config).suggestions
    assert suggestions[0].flags == (("--page-size", "256"),), suggestions
    fixed = check(applied(config, suggestions[0]))
    assert fixed.ok and fixed.resolved.decode_backend == "dsv4"
    assert any("--attention-backend" in s.summary for s in suggestions[1:])


def test_qsa_page_16_on_h200_keeps_qsa_decode_with_a_prefill_partner_before_replacing_it() -> None:
    # On an H200: the partner that brings page size 64, hpc_ops, builds only on sm9x parts.
    config = AttentionConfig(attention_backend="qsa", page_size=16, qsa_profile=True,
                             **MHA_0_5_23, **H200)  # fmt: skip
    suggestions = check(config).suggestions
    kept = [check(applied(config, s)).resolved.decode_backend == "qsa" for s in suggestions]
    assert kept[0] and True in kept[1:], [s.summary for s in suggestions]
    assert kept == sorted(kept, reverse=True), [s.summary for s in suggestions]  # kept first
    assert any(s.flags[0][0] == "--prefill-attention-backend" for s in suggestions)


def test_json_python_api_and_text_carry_the_same_suggestions() -> None:
    args = ["--sglang-version", "0.5.23", "--attention-arch", "mla"]
    args += ["--model-architecture", "DeepseekV3ForCausalLM", "--gpu", "b200"]
    args += ["--kv-cache-dtype", "nvfp4"]

    def run(*extra: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "compat", "check", *args, *extra],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 1, result.stderr
        return result.stdout

    text, data = run(), json.loads(run("--json"))
    config = AttentionConfig(sglang_version="0.5.23", kv_cache_dtype="nvfp4", **DEEPSEEK, **B200)
    api = check(config)
    assert [s.to_dict() for s in api.suggestions] == data["suggestions"]
    shown = [line.split("  # ", 1) for line in text.splitlines() if line.startswith("  --")]
    assert [(flags.strip(), reason) for flags, reason in shown] == [
        (s["flags"], s["reason"]) for s in data["suggestions"]
    ]


def test_the_combinations_searched_are_every_combination_of_distinct_kinds_in_order() -> None:
    """The search's combinations, built kind by kind, are exactly those of
    `itertools.combinations` that change as many kinds of flag, never both the whole backend
    and one phase's, never prefill X with decode X; in the same order (ties keep it)."""
    from itertools import combinations

    from compat.guard.check_memo import CheckMemo
    from compat.guard.suggest import _combinations, candidate_moves
    from compat.releases import release_matrix

    def allowed(combo: tuple[Any, ...]) -> bool:
        kinds = [move.kind for move in combo]
        phases = [move.backend for move in combo if move.kind in ("prefill", "decode")]
        return (
            len(set(kinds)) == len(kinds)
            and not ({"backend", "prefill"} <= set(kinds) or {"backend", "decode"} <= set(kinds))
            and not (len(phases) == 2 and phases[0] == phases[1])
        )

    launches = [
        AttentionConfig(sglang_version="0.5.23", kv_cache_dtype="nvfp4", **DEEPSEEK, **B200),
        AttentionConfig(**MHA_0_5_23, **B200, page_size=16, attention_backend="fa3", **EAGLE_TOPK4),
        AttentionConfig(sglang_version="0.5.7", platform="rocm", attention_backend="fa3"),
    ]
    for config in launches:
        report = check(config)
        matrix = release_matrix(report.sglang_version)
        moves = candidate_moves(report, CheckMemo(check), matrix)
        assert {move.kind for move in moves} >= {"backend", "prefill", "decode", "kv", "page"}
        for size in (1, 2, 3):
            expected = [combo for combo in combinations(moves, size) if allowed(combo)]
            assert _combinations(moves, size) == expected, (config, size)


# Launches of three releases, both architectures, several machines and KV dtypes, with and
# without speculation: most fail, for many reasons.
LAUNCHES = [
    dict(
        sglang_version=release,
        attention_arch=arch,
        platform=platform,
        compute_capability=capability,
        kv_cache_dtype=dtype,
        attention_backend=backend,
        **spec,
    )
    for release, dtype in (("0.5.7", "fp4_e2m1"), ("0.5.15", "fp8_e5m2"), ("0.5.23", "nvfp4"))
    for arch, backend in (("mha", "trtllm_mha"), ("mla", "fa3"), ("mla", "trtllm_mla"))
    for platform, capability in (("cuda", (9, 0)), ("cuda", (10, 0)), ("rocm", None))
    for spec in ({}, {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 2})
]


def test_the_start_up_shortcut_finds_the_fixes_a_full_search_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fix search stops at SGLang's refusal of a candidate (`passing_copy_of`): it
    offers what it offers when it checks every candidate in full."""
    reports = [check(AttentionConfig(**fields)) for fields in LAUNCHES[::2]]
    failing = [report for report in reports if not report.ok]
    assert len(failing) >= 15, "too few failing launches to compare the searches on"

    def searched() -> list[tuple[Suggestion, ...]]:
        return [
            suggest_fixes(r, CheckMemo(check), release_matrix(r.sglang_version)) for r in failing
        ]

    fast = searched()
    monkeypatch.setattr(check_memo, "refused_at_startup", lambda parsed: False)
    assert searched() == fast
    assert sum(bool(fixes) for fixes in fast) >= 15, "the searches compared found nothing"
