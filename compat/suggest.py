"""Fixes for a failing configuration, each one checked by the guard before it is offered.

Candidates change as little as possible: one phase's backend, then the whole backend, then
the KV dtype, the speculative settings and the page size. Only candidates whose own check
has no error are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from compat.config import AttentionConfig
from compat.report import Report, Suggestion
from compat.schema import Matrix
from compat.vocab import KV_DTYPE_SPELLINGS, KvDtype, Phase

PER_KIND = 3

Flags = tuple[tuple[str, str], ...]
Candidate = tuple[Flags, tuple[str, ...], str, AttentionConfig]


def suggest_fixes(
    report: Report, run_check: Callable[[AttentionConfig], Report], matrix: Matrix
) -> tuple[Suggestion, ...]:
    """Up to PER_KIND passing candidates of each kind, those with fewest warnings first."""
    kept: list[Suggestion] = []
    for kind in _candidate_kinds(report, matrix):
        passing: list[tuple[int, int, Suggestion]] = []
        for position, (flags, removes, reason, candidate) in enumerate(kind):
            outcome = run_check(candidate)
            if outcome.ok:
                suggestion = Suggestion(flags, removes, reason)
                passing.append((len(outcome.warnings), position, suggestion))
        if any(warnings == 0 for warnings, *_ in passing):
            passing = [entry for entry in passing if entry[0] == 0]
        kept += [suggestion for *_, suggestion in sorted(passing)[:PER_KIND]]
    return tuple(kept)


def _candidate_kinds(report: Report, matrix: Matrix) -> list[Iterator[Candidate]]:
    config = report.config
    phases = {phase for finding in report.errors for phase in finding.phases}
    order = _backend_order(report, matrix)
    kinds: list[Iterator[Candidate]] = []
    if phases == {Phase.DECODE}:
        kinds.append(_phase_swaps(config, Phase.DECODE, order, report))
    if phases == {Phase.PREFILL}:
        kinds.append(_phase_swaps(config, Phase.PREFILL, order, report))
    kinds.append(_whole_swaps(config, order, report))
    kinds.append(_dtype_swaps(config))
    kinds.append(_spec_changes(config))
    kinds.append(_page_size_changes(config, report))
    return kinds


def _backend_order(report: Report, matrix: Matrix) -> list[str]:
    """Backends with a row for the model's architecture first, in the table's order."""
    arch = report.resolved.arch
    offered = report.config.parsed.release.backend_set
    with_row = [row.backend for row in matrix.table(arch).rows if row.backend in offered]
    return with_row + [
        name for name in matrix.backend_names if name not in with_row and name in offered
    ]


def _phase_swaps(
    config: AttentionConfig, phase: Phase, order: list[str], report: Report
) -> Iterator[Candidate]:
    current = report.resolved.backend(phase)
    for name in order:
        if name != current:
            swapped = (
                replace(config, prefill_attention_backend=name)
                if phase is Phase.PREFILL
                else replace(config, decode_attention_backend=name)
            )
            yield ((phase.flag, name),), (), f"run the {phase.value} phase on {name}", swapped


def _whole_swaps(config: AttentionConfig, order: list[str], report: Report) -> Iterator[Candidate]:
    resolved = report.resolved
    cleared = tuple(
        phase.flag
        for phase, value in (
            (Phase.PREFILL, config.prefill_attention_backend),
            (Phase.DECODE, config.decode_attention_backend),
        )
        if value is not None
    )
    for name in order:
        if name == resolved.prefill_backend and name == resolved.decode_backend:
            continue
        yield (
            (("--attention-backend", name),),
            cleared,
            f"run both phases on {name}",
            replace(
                config,
                attention_backend=name,
                prefill_attention_backend=None,
                decode_attention_backend=None,
            ),
        )


def _dtype_swaps(config: AttentionConfig) -> Iterator[Candidate]:
    current = KV_DTYPE_SPELLINGS[config.kv_cache_dtype]
    offered = config.parsed.release.kv_set
    for spelling, dtype in KV_DTYPE_SPELLINGS.items():
        if dtype is not current and spelling != "bfloat16" and spelling in offered:
            yield (
                (("--kv-cache-dtype", spelling),),
                (),
                "keep the KV cache in the model's dtype"
                if dtype is KvDtype.AUTO
                else f"store the KV cache as {spelling}",
                replace(config, kv_cache_dtype=spelling),
            )


def _spec_changes(config: AttentionConfig) -> Iterator[Candidate]:
    if config.speculative_algorithm is None:
        return
    topk = config.speculative_eagle_topk
    if topk is not None and topk > 1:
        yield (
            (("--speculative-eagle-topk", "1"),),
            (),
            "draft one token per step",
            replace(config, speculative_eagle_topk=1),
        )
    yield (
        (),
        ("--speculative-algorithm", "--speculative-eagle-topk"),
        "run without speculative decoding",
        replace(config, speculative_algorithm=None, speculative_eagle_topk=None),
    )


def _page_size_changes(config: AttentionConfig, report: Report) -> Iterator[Candidate]:
    if config.page_size is None or config.page_size == 1:
        return
    yield (
        (("--page-size", "1"),),
        (),
        "use token-level pages",
        replace(config, page_size=1),
    )
