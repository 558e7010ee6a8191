"""Fixes for a failing configuration, each one checked by the guard before it is offered.

A fix is a combination of up to `MAX_CHANGES` flag changes ("moves"): the backend of both
phases, of one phase, the KV dtype, the page size, or the speculative settings. Combinations
are searched by size and never contain a smaller fix. A larger size is searched while fewer
than `ENOUGH` fixes were found, or, up to `INTENT_CHANGES` changes, while no fix keeps what
the launch asked for (`Intent`): then only moves that keep it are combined.

Fixes rank by the launch's intent first (keep the KV dtype's family, keep speculation, keep
the backend the launch named), then by the number of changes, then by SGLang's own
preference among backends (its default for this hardware, then the default table's order,
then the architecture's table order), then by which kind of flag they change. A deprecated
alias is never offered; a fix that passes only because SGLang runs another backend than the
one named says which; fixes SGLang runs identically are offered once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

import msgspec.structs

from compat.claim.matrix import Matrix
from compat.engine.startup.models import model_rule_of
from compat.guard.check_memo import CheckMemo
from compat.guard.intent import KEEPS_ALL, Intent, Misses, named_backend, runs_here
from compat.guard.moves import Move
from compat.guard.part_fixes import draft_moves, mm_moves
from compat.guard.report import Report, Resolved, Suggestion
from compat.guard.sub_fixes import KIND as SUB
from compat.guard.sub_fixes import sub_backend_moves
from compat.inputs.config import AttentionConfig
from compat.vocab.terms import KV_DTYPE_SPELLINGS, KvDtype, Phase

PER_KIND = 3
"""Single-flag fixes kept per kind of move (backend, one phase, dtype, ...)."""
MAX_CHANGES = 3
ENOUGH = 3
"""Search combinations of more flags only while fewer fixes than this were found."""
PER_SIZE = 5
"""Fixes of two or more changes kept per size."""
ORDER = (
    "each checked to pass; those that keep the launch's KV dtype family, speculation and "
    "backend first, then fewest changes"
)
"""How the fixes are ordered, in the words every list of them is introduced with."""
INTENT_CHANGES = 2
"""The largest size searched only because no smaller fix keeps the launch's intent."""


# Which kinds of move exclude each other: a whole-backend swap replaces both phase swaps.
_EXCLUSIVE = {frozenset({"backend", "prefill"}), frozenset({"backend", "decode"})}
# The order kinds rank in when the backend order ties: backend changes alter nothing the
# model computes; the KV dtype changes memory and accuracy, so it comes last.
_KIND_ORDER = {
    "backend": 0, "prefill": 1, "decode": 1, SUB: 1, "draft": 1, "mm": 1,
    "page": 2, "spec": 3, "kv": 4,
}  # fmt: skip
# SGLang's own choice: the launch without a backend flag.
_NO_BACKEND_FLAGS = MappingProxyType(
    {"attention_backend": None, "prefill_attention_backend": None, "decode_attention_backend": None}
)
# The order a fix's flags are written in: the backends (prefill before decode), then the rest.
_SHOWN_ORDER = ("backend", "prefill", "decode", SUB, "draft", "mm", "page", "spec", "kv")


class Fix(msgspec.Struct, frozen=True):
    """A passing combination of moves, with what SGLang runs once it is applied."""

    moves: tuple[Move, ...]
    config: AttentionConfig
    resolved: Resolved
    warned: bool
    misses: Misses

    @property
    def order(self) -> tuple[object, ...]:
        return (self.misses, self.warned, sorted(move.key for move in self.moves))


def suggest_fixes(report: Report, checks: CheckMemo, matrix: Matrix) -> tuple[Suggestion, ...]:
    """Passing fixes of `report`'s configuration, those that keep the launch's intent first,
    then the fewest changes. `checks` is check() against `matrix`, remembered: a caller
    that searches the fixes of neighbouring launches (the finder) passes one memo to all."""
    config, intent = report.config, Intent.of(report, matrix)
    moves = candidate_moves(report, checks, matrix)
    passing: list[frozenset[Move]] = []
    kept: list[Fix] = []
    for size in range(1, MAX_CHANGES + 1):
        best = min((fix.misses for fix in kept), default=None)
        pool = moves
        if size > 1 and len(kept) >= ENOUGH:
            if best == KEEPS_ALL or size > INTENT_CHANGES:
                break
            # Searched only for the intent: combine the moves that keep it.
            pool = [move for move in moves if intent.keeps(dict(move.fields))]
        found: list[Fix] = []
        for combo in _combinations(pool, size):
            if passing:
                moved = frozenset(combo)
                if any(fix <= moved for fix in passing):
                    continue  # not minimal: a smaller fix is inside it
            outcome = checks.passing_copy_of(config, moved_fields(combo))
            if outcome is not None:
                misses = intent.misses(outcome.resolved)
                warned = len(outcome.warnings) > 0
                # The report's configuration is the combination's (an equal one, checked
                # before): the copy is built only when it was never checked.
                found.append(Fix(combo, outcome.config, outcome.resolved, warned, misses))
        passing += [frozenset(fix.moves) for fix in found]
        if pool is not moves:  # searched for the intent: keep only what comes closer to it
            found = [fix for fix in found if best is None or fix.misses < best]
        found.sort(key=lambda fix: fix.order)
        kept += _per_kind(found) if size == 1 else _prefer_clean(found)[:PER_SIZE]
    kept.sort(key=lambda fix: fix.misses)  # stable: fewer changes first within a level
    unique: dict[Resolved, Fix] = {}
    for fix in kept:  # a fix SGLang runs exactly as an earlier one is the same fix
        unique.setdefault(fix.resolved, fix)
    return tuple(_suggestion(fix, report) for fix in unique.values())


def _prefer_clean(found: list[Fix]) -> list[Fix]:
    """Drop fixes that leave warnings when some fix of the same kind leaves none."""
    clean = [fix for fix in found if not fix.warned]
    return clean or found


def _per_kind(found: list[Fix]) -> list[Fix]:
    by_kind: dict[str, list[Fix]] = {}
    for fix in found:
        by_kind.setdefault(fix.moves[0].kind, []).append(fix)
    ordered = sorted(by_kind.values(), key=lambda fixes: fixes[0].moves[0].priority)
    return [fix for fixes in ordered for fix in _prefer_clean(fixes)[:PER_KIND]]


def _combinations(moves: list[Move], size: int) -> list[tuple[Move, ...]]:
    """The combinations of `size` moves that change as many kinds of flag, no two exclusive,
    in `itertools.combinations`' order (ties among fixes keep it). Built kind by kind rather
    than filtered from every combination: of the 117,480 triples of 90 moves, a few
    thousand change three kinds."""
    by_kind: dict[str, list[int]] = {}
    for index, move in enumerate(moves):
        by_kind.setdefault(move.kind, []).append(index)
    chosen: list[tuple[int, ...]] = []
    for kinds in itertools.combinations(by_kind, size):
        if any(frozenset(pair) in _EXCLUSIVE for pair in itertools.combinations(kinds, 2)):
            continue
        for indices in itertools.product(*(by_kind[kind] for kind in kinds)):
            phases = [moves[i].backend for i in indices if moves[i].kind in ("prefill", "decode")]
            if len(phases) == 2 and phases[0] == phases[1]:
                continue  # prefill X with decode X is `--attention-backend X`, a move of its own
            chosen.append(tuple(sorted(indices)))
    chosen.sort()
    return [tuple(moves[i] for i in indices) for indices in chosen]


def moved_fields(moves: Iterable[Move]) -> dict[str, Any]:
    """The configuration fields a combination of moves sets."""
    fields: dict[str, Any] = {}
    for move in moves:
        fields.update(move.fields)
    return fields


def _suggestion(fix: Fix, report: Report) -> Suggestion:
    combo = sorted(fix.moves, key=lambda move: _SHOWN_ORDER.index(move.kind))
    sets = tuple(flag for move in combo for flag in move.sets)
    written = {flag for flag, _ in sets}
    removes = tuple(
        dict.fromkeys(flag for move in combo for flag in move.removes if flag not in written)
    )
    reason = "; ".join(move.reason for move in combo) + _swap_note(fix, report.resolved)
    return Suggestion(sets, removes, reason, changes=len(combo))


def _swap_note(fix: Fix, before: Resolved) -> str:
    """What SGLang runs, when a fix passes only because it runs another backend than the one
    the command names (fa3 on MI300X with an FP8 e5m2 cache runs triton)."""
    swaps: list[tuple[Phase, str, str]] = []
    for phase in Phase:
        named, runs = named_backend(fix.config, phase), fix.resolved.backend(phase)
        if named is not None and runs is not None and runs not in (named, before.backend(phase)):
            swaps.append((phase, named, runs))
    if not swaps:
        return ""
    if len(swaps) == 2 and swaps[0][1:] == swaps[1][1:]:
        return f"; SGLang then runs {swaps[0][2]}, not {swaps[0][1]}"
    return "".join(
        f"; SGLang then runs the {phase.value} phase on {runs}, not {named}"
        for phase, named, runs in swaps
    )


# -- the moves ---------------------------------------------------------------------------


def backend_preference(report: Report, checks: CheckMemo, matrix: Matrix) -> list[str]:
    """SGLang's preference among backends for this model and machine.

    Its own default first (as the guard resolves it with no backend flag), then the
    backends the model's own branch picks or allows (a model with a list runs only those),
    then the default table's backends in its order, then the architecture's table, then
    the rest.
    """
    resolved = checks.copy_of(report.config, _NO_BACKEND_FLAGS).resolved
    arch = report.resolved.arch
    release = report.config.parsed.release
    ordered: list[str | None] = [resolved.prefill_backend, resolved.decode_backend]
    rule = model_rule_of(report.config.parsed, release)
    if rule is not None:
        ordered += [*rule.default_backends, *rule.allowed]
    ordered += [branch.backend for branch in release.defaults]
    ordered += [row.backend for row in matrix.table(arch).rows]
    ordered += list(matrix.backend_names)
    # A deprecated alias is another name for a backend already in the list: never offered.
    offered = release.backend_set - release.backend_aliases.keys()
    return [name for name in dict.fromkeys(ordered) if name is not None and name in offered]


def candidate_moves(report: Report, checks: CheckMemo, matrix: Matrix) -> list[Move]:
    config, resolved = report.config, report.resolved
    order = backend_preference(report, checks, matrix)
    moves: list[Move] = []
    phase_flags = tuple(
        phase.flag
        for phase, value in (
            (Phase.PREFILL, config.prefill_attention_backend),
            (Phase.DECODE, config.decode_attention_backend),
        )
        if value is not None
    )
    for rank, name in enumerate(order):
        if not runs_here(matrix.backend(name), resolved):
            continue  # the machine is not a flag: no fix can make this backend run on it
        if not (name == resolved.prefill_backend and name == resolved.decode_backend):
            moves.append(
                Move(
                    "backend",
                    rank,
                    (
                        ("attention_backend", name),
                        ("prefill_attention_backend", None),
                        ("decode_attention_backend", None),
                    ),
                    (("--attention-backend", name),),
                    phase_flags,
                    f"run both phases on {name}",
                    backend=name,
                )
            )
        for phase in Phase:
            if name != resolved.backend(phase):
                moves.append(
                    Move(
                        phase.value,
                        rank,
                        ((f"{phase.value}_attention_backend", name),),
                        ((phase.flag, name),),
                        (),
                        f"run the {phase.value} phase on {name}",
                        backend=name,
                    )
                )
    moves += draft_moves(report, order)
    moves += mm_moves(report)
    moves += _dtype_moves(config)
    moves += _spec_moves(config)
    moves += _page_size_moves(config, matrix)
    moves += (Move(SUB, *move) for move in sub_backend_moves(config))
    # When one phase alone fails, changing that phase is the smallest fix of all.
    failing = {phase for finding in report.errors for phase in finding.phases}
    alone = next(iter(failing)).value if len(failing) == 1 else None
    return [
        msgspec.structs.replace(move, priority=-1 if move.kind == alone else _KIND_ORDER[move.kind])
        for move in moves
    ]


def _dtype_moves(config: AttentionConfig) -> Iterable[Move]:
    current = KV_DTYPE_SPELLINGS[config.kv_cache_dtype]
    offered = config.parsed.release.kv_set
    canonical = [
        name
        for name, dtype in KV_DTYPE_SPELLINGS.items()
        if name == dtype.value and name in offered
    ]
    for rank, spelling in enumerate(canonical):
        dtype = KV_DTYPE_SPELLINGS[spelling]
        if dtype is not current:
            yield Move(
                "kv",
                rank,
                (("kv_cache_dtype", spelling),),
                (("--kv-cache-dtype", spelling),),
                (),
                "keep the KV cache in the model's dtype"
                if dtype is KvDtype.AUTO
                else f"store the KV cache as {spelling}",
            )


def _spec_moves(config: AttentionConfig) -> Iterable[Move]:
    if config.speculative_algorithm is None:
        return
    topk = config.speculative_eagle_topk
    if topk is not None and topk > 1:
        yield Move(
            "spec",
            0,
            (("speculative_eagle_topk", 1),),
            (("--speculative-eagle-topk", "1"),),
            (),
            "draft one token per step",
        )
    yield Move(
        "spec",
        1,
        (("speculative_algorithm", None), ("speculative_eagle_topk", None)),
        (),
        ("--speculative-algorithm", "--speculative-eagle-topk"),
        "run without speculative decoding",
    )


def page_sizes(matrix: Matrix) -> tuple[int, ...]:
    """1 (no paging) and every page size a cell of the matrix names."""
    sizes = {1}
    for table in matrix.tables:
        for row in table.rows:
            for cell in row.cells.values():
                sizes.update(cell.page_sizes)
    return tuple(sorted(sizes))


def _page_size_moves(config: AttentionConfig, matrix: Matrix) -> Iterable[Move]:
    if config.page_size is not None:
        yield Move(
            "page", 0, (("page_size", None),), (), ("--page-size",), "let SGLang pick the page size"
        )
    for rank, size in enumerate(page_sizes(matrix), start=1):
        if size != config.page_size:
            reason = "use token-level pages" if size == 1 else f"use pages of {size} tokens"
            yield Move(
                "page", rank, (("page_size", size),), (("--page-size", str(size)),), (), reason
            )
