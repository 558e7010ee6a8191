"""The consistency proof: the guard's verdict on every single-column claim equals the page.

The page is read with the tests' own Markdown reader; what each column header means for a
configuration is written here, independently of the package. Shared by the test and the
benchmark, which times the whole enumeration.
"""

from __future__ import annotations

import functools
import gc
import itertools
import multiprocessing
import os
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from markdown_tables import read_tables, table_under
from paths import ROOT

from compat import MATRIX, AttentionConfig, Report, Severity, check
from compat.guard.collector import gc_paused
from compat.inputs.config import replaced

# The proof is about the PR #14467 baseline (the guard's verdicts for SGLang 0.5.7, which the
# tests pin): the page it reads is that release's, and its configurations name the release.
RELEASE = "0.5.7"
PAGE = ROOT / "docs" / "releases" / f"{RELEASE}.md"

ARCHS = ("mha", "mla")
KV_DTYPES = ("auto", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1")
TOPKS = (None, 1, 2)
PAGE_SIZES = (1, 16, 32, 64, 128)
PRESETS = (
    ("cuda", (8, 0)),
    ("cuda", (9, 0)),
    ("cuda", (10, 0)),
    ("rocm", None),
    ("npu", None),
    ("xpu", None),
    ("cpu", None),
)
# The legend's words for what the guard does with an unsupported cell.
ACTION_SEVERITY = {"error": Severity.ERROR, "warn": Severity.WARNING, "info": Severity.INFO}
_ROW_LABEL = re.compile(r"^(?P<display>.+?) \[`(?P<name>[a-z0-9_]+)`\]$")


@dataclass(frozen=True)
class Claim:
    header: str
    cell: str
    finding_id: str
    action: str
    phases: frozenset[str]
    disputed: bool = False
    """The cell carries the page's dispute marker: the release's own code contradicts it."""

    @functools.cached_property
    def page_sizes(self) -> frozenset[int]:
        """The page sizes a cell names (a native-size or a conditional cell)."""
        return frozenset(int(size) for size in re.findall(r"\d+", self.cell))


@dataclass(frozen=True)
class Claims:
    """Every cell of the page's tables, by (arch, backend), with the legend's action."""

    by_row: dict[tuple[str, str], tuple[Claim, ...]]
    _judged: dict[tuple[str, str, frozenset[str]], tuple[Claim, ...]] = field(
        default_factory=dict, compare=False
    )

    def judged(self, arch: str, backend: str, phases: frozenset[str]) -> tuple[Claim, ...]:
        """The claims of a backend's row that judge one of `phases`: a configuration of the
        proof asks about a few backends and phases, each asked by thousands."""
        key = (arch, backend, phases)
        found = self._judged.get(key)
        if found is None:
            row = self.by_row.get((arch, backend), ())
            found = self._judged[key] = tuple(c for c in row if c.phases & phases)
        return found


def read_claims(page: str) -> Claims:
    """Every cell of each backend's row, with the legend's action for its column."""
    (legend,) = [t for t in read_tables(page) if t.heading == "Legend" and t.header[0] == "Column"]
    column, action, phases, finding = (
        legend.header.index(h)
        for h in ("Column", "Guard action on an unsupported cell", "Phases checked", "Finding id")
    )
    by_header: dict[str, tuple[str, str, frozenset[str]]] = {}
    for row in legend.rows:
        for header in re.split(r" \((?:MHA|MLA|MHA, MLA)\)(?:; )?", row[column]):
            if header:
                phase_words = frozenset(re.findall(r"prefill|decode", row[phases]))
                by_header[header] = (row[finding].strip("`"), row[action], phase_words)
    claims: dict[tuple[str, str], tuple[Claim, ...]] = {}
    for arch in ARCHS:
        table = table_under(page, f"{arch.upper()} backends")
        for row in table.rows:
            match = _ROW_LABEL.match(row[0])
            assert match, f"unreadable row label {row[0]!r}"
            number = table.rows.index(row)
            claims[(arch, match["name"])] = tuple(
                Claim(header, cell, *by_header[header], (number, column) in table.marks)
                for column, (header, cell) in enumerate(
                    zip(table.header[1:], row[1:], strict=True), start=1
                )
            )
    return Claims(claims)


def column_in_use(header: str, config: AttentionConfig, report: Report) -> bool:
    """Whether a configuration uses what a column header talks about."""
    resolved = report.resolved
    if header == "FP8 KV Cache":
        return config.kv_cache_dtype.startswith("fp8")
    if header == "FP4 KV Cache":
        return config.kv_cache_dtype == "fp4_e2m1"
    if header == "Spec topk=1":
        return resolved.topk == 1
    if header == "Spec topk>1":
        return resolved.topk is not None and resolved.topk > 1
    if header == "Sliding Window":
        return config.sliding_window
    if header == "MultiModal":
        return config.multimodal
    if header == "Chunked Prefix Cache":
        return True
    if header in ("Page Size > 1 (native)", "Native Page Sizes"):
        return resolved.page_size > 1
    raise AssertionError(f"the proof does not know the column {header!r}")


def expected_finding(claim: Claim, report: Report, backend: str) -> Severity | None:
    """The severity the page promises for this claim, or None for no finding."""
    page_size = report.resolved.page_size
    if claim.cell in ("✅", "n/a"):
        return None
    if claim.cell.startswith("⚠️"):
        return None if page_size in claim.page_sizes else ACTION_SEVERITY[claim.action]
    if claim.action == "snap":
        # Page sizes: a listed size is native; a fixed one is snapped to (so it is listed);
        # anything else is emulated, which the legend says is reported as info.
        # A fixed-size kernel left on another size (the other phase's) is a cross-field
        # error of that backend instead.
        conflict = any(
            f.rule == "page-size-conflict" and f.backend == backend for f in report.findings
        )
        if page_size in claim.page_sizes or conflict:
            return None
        return Severity.INFO
    assert claim.cell == "❌", f"unexpected cell {claim.cell!r}"
    if claim.disputed:
        # The page marks it: the release's own code runs it, so the guard only warns.
        return Severity.WARNING
    return ACTION_SEVERITY[claim.action]


Shard = tuple[str, str]
"""(architecture, prefill backend): a part of the space one process proves at a time."""


def shards(every: int = 1) -> list[Shard]:
    """The whole space's shards, or those of every n-th prefill backend (a smoke run's)."""
    return list(itertools.product(ARCHS, MATRIX.backend_names[::every]))


Fields = dict[str, Any]


def configurations(parts: list[Shard] | None = None) -> Iterator[AttentionConfig]:
    """The enumerated space, or the configurations of some of its shards.

    Built as copies (`copies`): from scratch, they took over a quarter of the proof's time.
    `tests/guard/test_consistency.py` holds them equal to constructed ones.
    """
    return copies(defining_fields(parts))


def copies(fields: Iterable[tuple[Fields, Fields]]) -> Iterator[AttentionConfig]:
    """A configuration per (machine fields, launch fields), in order: a copy (`replaced`)
    of one base per machine fields, changing the launch fields, which must be fields that
    `replaced` checks alone (backends, KV dtype, page size, speculative algorithm and topk)."""
    bases: dict[tuple[object, ...], AttentionConfig] = {}
    for machine, launch in fields:
        key = tuple(machine.items())
        base = bases.get(key)
        if base is None:
            base = bases[key] = AttentionConfig(**machine)
        yield replaced(base, **launch)


def defining_fields(parts: list[Shard] | None = None) -> Iterator[tuple[Fields, Fields]]:
    """Each configuration's fields: those of its machine and model, those of its launch."""
    backends = MATRIX.backend_names
    # Every configuration keeps its index in the whole space (which sets its model's
    # switches), however the space is split.
    per_prefill = len(backends) * len(KV_DTYPES) * len(TOPKS) * len(PAGE_SIZES) * len(PRESETS)
    for arch, prefill in shards() if parts is None else parts:
        start = (ARCHS.index(arch) * len(backends) + backends.index(prefill)) * per_prefill
        for index, (decode, dtype, topk, page, (platform, capability)) in enumerate(
            itertools.product(backends, KV_DTYPES, TOPKS, PAGE_SIZES, PRESETS), start
        ):
            machine: Fields = dict(
                sglang_version=RELEASE,
                attention_arch=arch,
                prefill_attention_backend=prefill,
                platform=platform,
                compute_capability=capability,
                sliding_window=index % 2 == 1,
                multimodal=index % 4 >= 2,
            )
            launch: Fields = dict(
                decode_attention_backend=decode,
                kv_cache_dtype=dtype,
                page_size=page,
                speculative_algorithm=None if topk is None else "EAGLE",
                speculative_eagle_topk=topk,
            )
            yield machine, launch


def verify(config: AttentionConfig, report: Report, claims: Claims) -> tuple[int, list[str]]:
    """(claims compared, mismatches) for one configuration."""
    resolved = report.resolved
    prefill, decode = resolved.prefill_backend, resolved.decode_backend
    if prefill is not None and prefill == decode:
        uses: tuple[tuple[str | None, frozenset[str]], ...] = ((prefill, BOTH_PHASES),)
    else:
        uses = ((prefill, PREFILL), (decode, DECODE))
    # Each finding's severity by rule and backend, and each column's use, read once per
    # configuration: a configuration has about thirty claims and ten columns.
    found_by: dict[tuple[str, str | None], set[Severity]] = {}
    for finding in report.findings:
        key = (finding.rule, finding.backend)
        known = found_by.get(key)
        if known is None:
            found_by[key] = {finding.severity}
        else:
            known.add(finding.severity)
    in_use: dict[str, bool] = {}
    compared = 0
    mismatches: list[str] = []
    arch = config.attention_arch
    for backend, phases in uses:
        if backend is None:
            continue
        for claim in claims.judged(arch, backend, phases):
            header = claim.header
            used = in_use.get(header)
            if used is None:
                used = in_use[header] = column_in_use(header, config, report)
            if not used:
                continue
            compared += 1
            expected = expected_finding(claim, report, backend)
            found = found_by.get((claim.finding_id, backend), _NONE_FOUND)
            if found != ({expected} if expected else _NONE_FOUND):
                mismatches.append(
                    f"{config}: {backend} {claim.header}={claim.cell!r}: page says "
                    f"{expected}, guard said {sorted(s.value for s in found)}"
                )
    return compared, mismatches


_NONE_FOUND: frozenset[Severity] = frozenset()
PREFILL = frozenset({"prefill"})
DECODE = frozenset({"decode"})
BOTH_PHASES = PREFILL | DECODE


@functools.cache
def _claims(page: str) -> Claims:
    """`read_claims`, once per page text in each process (a process proves many shards)."""
    return read_claims(page)


def _prove_shard(page: str, shard: Shard) -> tuple[int, int, list[str]]:
    claims = _claims(page)
    configs = compared = 0
    mismatches: list[str] = []
    with gc_paused():
        for config in configurations([shard]):
            configs += 1
            count, wrong = verify(config, check(config), claims)
            compared += count
            mismatches += wrong[: max(0, 20 - len(mismatches))]
    return configs, compared, mismatches


def run_proof(
    page: str | None = None, workers: int | None = None, every: int = 1
) -> tuple[int, int, list[str]]:
    """(configurations, claims compared, mismatches) over the whole enumerated space, or,
    with `every` n, over the configurations of every n-th prefill backend (a smoke run's).

    The space's shards (`shards`, 34 of about the same cost) are handed to `workers`
    processes (default: one per core) as they free up: a split into as many parts as
    processes left one working a shard's time after the other.
    """
    text = page if page is not None else PAGE.read_text(encoding="utf-8")
    workers = workers or os.cpu_count() or 1
    parts = shards(every)
    if workers == 1:
        results = [_prove_shard(text, part) for part in parts]
    else:
        context = multiprocessing.get_context("fork")
        # The workers live for the proof alone and make no cyclic garbage: their collector
        # stays off, rather than walking each shard's objects when a shard's pause ends.
        with ProcessPoolExecutor(workers, mp_context=context, initializer=gc.disable) as pool:
            results = list(pool.map(_prove_shard, [text] * len(parts), parts))
    configs = sum(r[0] for r in results)
    compared = sum(r[1] for r in results)
    mismatches = [m for r in results for m in r[2]][:20]
    return configs, compared, mismatches
