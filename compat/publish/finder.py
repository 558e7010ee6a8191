"""The data behind the docs site's compatibility finder: the guard's verdicts, precomputed.

The page lets a reader pick an SGLang release, a model (an attention architecture, or a
published checkpoint of the model zoo), a GPU, a KV-cache dtype, a page size and a
speculative top-k, and shows what `check()` says about each backend (both
phases, or fa4 prefill with each decode backend). Its JavaScript does no reasoning of its
own: it decodes and looks up the data built here by running the guard over each offered
release's whole option space (that release's KV dtypes and backends), one file per release
and model, loaded when first picked, which the MkDocs hook adds to the built site: never
committed, so never stale.

A build offers the newest modelled release (`COMPAT_FINDER_RELEASES=all`: every one,
newest first, as the published site does). An architecture costs 20-60 s of CPU per
release (about 2,400 combinations of the menus times 47 columns, and the fix search where
nothing passes); a named model about a third of that, since its rows carry no fix search
(`compat check --model NAME`, which the page's command runs, prints the fixes). The parts
are computed side by side (`stream_rows`) and each is kept in the build cache under a key
of what it reads (`compat.publish.finder_build`); `COMPAT_FINDER_MODELS` names fewer models
for a quicker build.
"""

from __future__ import annotations

import functools
import gc
import itertools
import json
import os
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import replace
from typing import Any

from compat.claim.matrix import Matrix
from compat.guard.check import check
from compat.guard.check_memo import CheckMemo
from compat.guard.collector import gc_paused
from compat.guard.report import Report
from compat.guard.suggest import ORDER, suggest_fixes
from compat.inputs.config import AttentionConfig
from compat.publish.finder_layout import (
    DIGITS,
    Cell,
    Row,
    Texts,
    cell_tables,
    encode,
    encode_findings,
    finding_order,
    intern,
    width,
)
from compat.publish.finder_options import (
    FINDER_RELEASES,
    Axis,
    finder_backends,
    finder_options,
    foreign_backends,
    hardware_classes,
    kv_follow,
    offered_models,
    offered_releases,
    opening,
    opening_selection,
    pair_prefills,
    verdict,
)
from compat.publish.finder_progress import FIX_SEARCH_COST, Part, Progress
from compat.publish.workers import worker_pool
from compat.releases import NEWEST, release_matrix
from compat.vocab import terms as vocab

INDEX_PATH = "javascripts/finder-releases.js"
"""Where the hook puts the list of releases and their data files, next to the page's script."""
INDEX_GLOBAL = "COMPAT_FINDER_RELEASES"
"""The global the index script assigns: `[{release, initial_model, models}, ...]`, the
initial release first; `models` is its model menu (`model_menu`), each with its data file."""
DATA_GLOBAL = "COMPAT_FINDER_DATA"
"""The global each data script adds its release and model to (`data_key`; a script, not
JSON: works from file://)."""
SCHEMA_VERSION = 7
VERDICTS = ("compatible", "warnings", "incompatible")
"""Verdict names, indexed by the verdict digit of the data's parts."""
MAX_FIXES = 5
_SEVERITIES = (vocab.Severity.ERROR, vocab.Severity.WARNING, vocab.Severity.INFO)
_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(_SEVERITIES)}


def data_path(release: str, model: str) -> str:
    """Where the hook puts one release and model's data in the built site, next to the
    page's script."""
    return f"javascripts/finder-data-{release}-{model}.js"


# -- computing: the guard on every combination and column; then the layout ----------------
def _cell(report: Report) -> Cell:
    ordered = sorted(report.findings, key=lambda finding: _SEVERITY_RANK[finding.severity])
    return verdict(report), tuple(
        (_SEVERITY_RANK[f.severity], f.rule, f.message, _phases_text(f.phases)) for f in ordered
    )


@functools.cache
def _phases_text(phases: tuple[vocab.Phase, ...]) -> str:
    """Phases joined by + (an enum's `.value` is a slow property, read per finding)."""
    return "+".join(phase.value for phase in phases)


def _row(
    base: AttentionConfig,
    release: str,
    run: CheckMemo,
    fix_search: bool = True,
) -> Row:
    backends = finder_backends(release)
    reports = [run.copy_of(base, {"attention_backend": name}) for name in backends]
    passing = any(report.ok for report in reports)
    refused = ""
    for prefill in pair_prefills(release):
        pairs = [
            run.copy_of(base, {"prefill_attention_backend": prefill, "decode_attention_backend": d})
            for d in backends
            if d != prefill  # a pair of one backend with itself is its both-phases column
        ]
        # The prefill backend's own errors that every pair shares: no decode partner can
        # help, and the finder shows just these.
        alone = [f for f in pairs[0].errors if set(f.phases) == {vocab.Phase.PREFILL}]
        common = tuple(f for f in alone if all(f in report.findings for report in pairs[1:]))
        refused += "1" if common else "0"
        reports += [replace(report, findings=common) if common else report for report in pairs]
    unset, fixes = run(base), None
    if not passing and fix_search:
        found = suggest_fixes(unset, run, release_matrix(release))[:MAX_FIXES]
        fixes = tuple((fix.summary, fix.reason) for fix in found)
    defaults = (unset.resolved.prefill_backend, unset.resolved.decode_backend)
    return Row(tuple(map(_cell, reports)), refused, defaults, fixes)


def _memoized(matrix: Matrix) -> CheckMemo:
    """`check()` against `matrix`, each configuration once."""
    return CheckMemo(functools.partial(check, matrix=matrix))


def release_rows(release: str, model: int, hardware: int) -> list[Row]:
    """The rows of one model option and hardware class, in index order. One memo serves
    them all: the suggestion search asks about neighbouring combinations and columns."""
    axes, run = finder_options(release), _memoized(release_matrix(release))
    option = axes[0].options[model]
    fixed = (option.fields, hardware_classes(axes)[hardware])
    combinations = itertools.product(*(axis.options for axis in axes[2:]))
    fields = (dict(itertools.chain(*fixed, *(o.fields for o in rest))) for rest in combinations)
    with gc_paused():  # the part's memo holds every report: full collections would walk it
        return [
            _row(AttentionConfig(sglang_version=release, **f), release, run, option.fix_search)
            for f in fields
        ]


def combination_row(release: str, values: dict[str, str]) -> Row:
    """The row of one combination (an option value per axis id), as the build computes it:
    lets a test hold any release's rows to the guard without computing its whole space."""
    axes, run = finder_options(release), _memoized(release_matrix(release))
    chosen = [next(o for o in axis.options if o.value == values[axis.id]) for axis in axes]
    fields = dict(itertools.chain(*(option.fields for option in chosen)))
    config = AttentionConfig(sglang_version=release, **fields)
    return _row(config, release, run, chosen[0].fix_search)


def compute_rows(
    releases: Sequence[str],
    say: Callable[[str], None] | None = None,
    models: Sequence[str] | None = None,
) -> dict[Part, list[Row]]:
    """Every row of each release and model option (`models`: their values, default every
    one), computed side by side (`stream_rows`); `say` gets a line of progress per part."""
    parts = [
        (release, option.value)
        for release in releases
        for option in finder_options(release)[0].options
        if models is None or option.value in models
    ]
    with closing(stream_rows(parts, say)) as stream:  # workers stop on any way out
        return dict(stream)


def stream_rows(
    parts: Sequence[Part], say: Callable[[str], None] | None = None
) -> Generator[tuple[Part, list[Row]], None, None]:
    """Each part's rows, in the order of `parts`, as soon as that part is done: only the
    parts not yet handed on are held, never the whole site. The pieces (a model and
    hardware class each) are computed side by side on every CPU, in worker processes that
    die with the build (`compat.publish.workers`); the result does not depend on where.
    `say` gets a line per part with the time it took and an estimate of the time left: the
    whole takes minutes, and the builder should see it move."""
    pieces: list[tuple[str, int, int]] = []
    sizes, costs = [], []
    for release, model in parts:
        axes = finder_options(release)
        number = [option.value for option in axes[0].options].index(model)
        classes = len(hardware_classes(axes))
        pieces += [(release, number, h) for h in range(classes)]
        sizes.append(classes)
        costs.append(classes * (FIX_SEARCH_COST if axes[0].options[number].fix_search else 1))
    if not pieces:
        return
    workers = max(1, min(len(pieces), os.cpu_count() or 1))
    clock = Progress(sum(costs), workers, say)
    with worker_pool(workers) as pool:
        done = pool.imap(_piece_rows, pieces)  # in order: a part's pieces are consecutive
        for part, size, cost in zip(parts, sizes, costs, strict=True):
            rows = [row for _ in range(size) for row in next(done)]
            clock.part_done(part, cost, len(parts))
            yield part, rows


def _piece_rows(piece: tuple[str, int, int]) -> list[Row]:
    """`release_rows` of one piece, looked up when called (a test may stand in for it).
    A worker only computes rows, whose records hold no cycles (`compat.guard.collector`):
    its collector stays off, not paused per piece (each resume collected the piece's all)."""
    gc.disable()
    return release_rows(*piece)


def _axes_data(axes: tuple[Axis, ...], initial: dict[str, str]) -> list[dict[str, Any]]:
    hardware = hardware_classes(axes)
    return [
        {
            "id": axis.id,
            "initial": initial.get(axis.id, axis.initial),
            "options": [
                {"value": option.value, "label": option.label, "args": option.args}
                | ({"hw": hardware.index(option.fields)} if axis.id == "gpu" else {})
                for option in axis.options
            ],
        }
        for axis in axes
    ]


def initial_model(release: str, models: Sequence[str] | None = None) -> str:
    """The model option the page opens on for `release` (among `models` when given)."""
    return opening_selection(release, models)["model"]


def finder_data(
    release: str = FINDER_RELEASES[0], model: str | None = None, rows: list[Row] | None = None
) -> dict[str, Any]:
    """The guard's verdicts predicting `release` for one option of the model menu (`model`,
    its value) from `rows` (else computed): every combination of the release's other menus,
    every column.

    `axes` are the menus but the model's (the release index lists those: `model_menu`);
    `fix_search` says whether the rows carry the guard's fixes. A column is one backend on
    both phases, or a (prefill, decode) pair (`columns`: backend numbers, -1 for no prefill
    of its own); a combination's index is mixed radix over hardware class, dtype, page size
    and topk (last fastest). Numbers are written in
    `DIGITS`, `widths[table]` digits each: as few as the table's size allows. Texts live
    once in `texts`, each as word numbers into `words`; `findings` holds per finding its
    severity's digit and the text numbers of its rule, message and phases, numbered so that
    every cell's findings are in id order. Cells come in blocks of `block` (every page size
    and topk of one hardware class and dtype; `topks` per page size): per block and
    column, `results` holds a `groups` number, whose entry holds a `sets` number (finding
    ids all the block's cells share), three `tuples` numbers (a set per page size, a set
    per topk, a set per cell) and a `patterns` number (each cell's verdict digit). A cell's
    findings are the union of its four sets, in id order (`cell_tables`). `defaults`: per
    combination SGLang's prefill and decode backends with no backend flag (one digit
    each, `len(backends)` for none); `refused`: per combination and pair prefill, "1"
    where the prefill backend itself is refused (its cells then hold only the errors all
    pairs share); `fixes`: per combination 0, or 1 + an index into `fixlists` ([summary,
    reason] text number pairs, the guard's fixes for the default launch) where nothing
    passes. `kv_follow`: per hardware class, page size and topk, the KV dtype the page
    moves to when a GPU change leaves nothing passing (`kv_follow`, its option number, the
    number of dtypes for none); `foreign`: per hardware class, the backends of other
    platforms. The GPU and KV dtype menus open on the model's `opening`. Measured on
    0.5.23, both architectures in one file: 998 KB as a two-digit outcome number per cell
    and column (one digit never fits: every column has over 64 outcomes), 252 KB with one
    set per block and a part per cell and plain texts, 130 KB (32 KB gzipped) this way.
    """
    model = initial_model(release) if model is None else model
    if rows is None:
        rows = compute_rows([release], models=[model])[release, model]
    axes, backends = finder_options(release), finder_backends(release)
    option = next(o for o in axes[0].options if o.value == model)
    if len(backends) >= len(DIGITS):
        raise ValueError("finder data: too many backends for one-digit defaults")
    ids = {key: number for number, key in enumerate(finding_order(rows))}
    texts = Texts()
    for _, *words in ids:
        for text in words:
            texts.number(text)
    fixlists: dict[Any, int] = {}
    fixes = [0 if row.fixes is None else 1 + intern(fixlists, row.fixes) for row in rows]
    fix_texts = [[[texts.number(t) for t in fix] for fix in entry] for entry in fixlists]
    text_tables = texts.tables()
    pages, topks = len(axes[3].options), len(axes[4].options)
    tables = cell_tables(rows, pages, topks, ids)
    tables["widths"] |= text_tables.pop("widths") | {"fixes": width(len(fixlists) + 1)}
    index = {name: number for number, name in enumerate(backends)}
    pairs = [[index[p], index[d]] for p in pair_prefills(release) for d in backends if d != p]
    chosen = [len(backends) if n is None else index[n] for row in rows for n in row.defaults]
    radix = (len(hardware_classes(axes)), len(axes[2].options), pages, topks)
    follow = kv_follow([(row.defaults, row.cells) for row in rows], backends, radix)
    start = opening(release, model)
    initial = {} if start is None else {"gpu": start[0], "kv_cache_dtype": start[1]}
    return {
        "schema": SCHEMA_VERSION,
        "release": release,
        "model": model,
        "fix_search": option.fix_search,
        "axes": _axes_data(axes, initial)[1:],
        "hardware": len(hardware_classes(axes)),
        "backends": list(backends),
        "columns": [[-1, b] for b in range(len(backends))] + pairs,
        "digits": DIGITS,
        "verdicts": list(VERDICTS),
        "severities": [severity.value for severity in _SEVERITIES],
        "findings": encode_findings(ids, texts, tables["widths"]["text"]),
        "block": pages * topks,
        "topks": topks,
        **tables,
        **text_tables,
        "defaults": "".join(DIGITS[number] for number in chosen),
        "refused": "".join(row.refused for row in rows),
        "fix_order": ORDER,
        "fixlists": fix_texts,
        "fixes": encode(fixes, tables["widths"]["fixes"]),
        "kv_follow": encode(follow, width(radix[1] + 1)),
        "foreign": foreign_backends(release),
    }


def render_finder_data(
    release: str = NEWEST, model: str | None = None, data: dict[str, Any] | None = None
) -> str:
    """`finder_data(release, model)` (or `data`, already computed) as deterministic,
    compact JSON."""
    data = finder_data(release, model) if data is None else data
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def data_key(release: str, model: str) -> str:
    """The name one release and model's data has in the page's data global."""
    return f"{release}/{model}"


def render_finder_script(
    release: str = NEWEST, model: str | None = None, data: dict[str, Any] | None = None
) -> str:
    """One release and model's data as a script that adds it to a global, so the page also
    works opened from disk."""
    model = initial_model(release) if model is None else model
    key, text = json.dumps(data_key(release, model)), render_finder_data(release, model, data)
    return (
        "// Generated at site build time by compat.publish.finder from the capability matrix\n"
        "// and the guard; do not edit.\n"
        f"window.{DATA_GLOBAL} = window.{DATA_GLOBAL} || {{}};\n"
        f"window.{DATA_GLOBAL}[{key}] = {text};\n"
    )


def generated_names() -> tuple[str, ...]:
    """The paths of every file the finder adds to the built site: the index, then one data
    file per release and model (relative to the site's root, inside `javascripts/`)."""
    models = offered_models()
    return (INDEX_PATH, *(data_path(r, m) for r in offered_releases() for m in models))


def model_menu(release: str, models: Sequence[str]) -> list[dict[str, Any]]:
    """The model menu of `release` as the index lists it: each offered option's value,
    label, `compat check` flags and data file."""
    return [
        {
            "value": option.value,
            "label": option.label,
            "note": option.note,
            "args": option.args,
            "file": data_path(release, option.value).rsplit("/", 1)[1],
        }
        for option in finder_options(release)[0].options
        if option.value in models
    ]


def part_script(part: Part, rows: list[Row]) -> str:
    """The data file of one part (a release and a model option) from its rows."""
    release, model = part
    return render_finder_script(release, model, finder_data(release, model, rows))


def index_script(releases: Sequence[str], models: Sequence[str]) -> str:
    """The index of the offered releases (the initial one first), each with its model menu
    and the model it opens on."""
    index = [
        {"release": r, "initial_model": initial_model(r, models), "models": model_menu(r, models)}
        for r in releases
    ]
    script = f"window.{INDEX_GLOBAL} = {json.dumps(index, separators=(',', ':'))};\n"
    comment = "// Generated at site build time by compat.publish.finder; do not edit.\n"
    return comment + script
