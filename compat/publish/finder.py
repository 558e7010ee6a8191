"""The data behind the docs site's compatibility finder: the guard's verdicts, precomputed.

The page lets a reader pick an SGLang release, an architecture, a GPU, a KV-cache dtype, a
page size and a speculative top-k, and shows what `check()` says about each backend (both
phases, or fa4 prefill with each decode backend). Its JavaScript does no reasoning of its
own: it decodes and looks up the data built here by running the guard over each offered
release's whole option space (that release's KV dtypes and backends), one file a release,
which the MkDocs hook adds to the built site: never committed, so never stale.

Every modelled release is offered, newest first. Each costs 20-70 s of CPU (about 4,000
combinations of the menus times 47 columns, and the fix search where nothing passes), so
the parts are computed side by side and the result is kept in the build cache
(`compat.publish.finder_cache`); `COMPAT_FINDER_RELEASES` names fewer for a quicker build.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compat.claim.matrix import Matrix
from compat.guard.check import check
from compat.guard.report import Report
from compat.guard.suggest import ORDER, page_sizes, suggest_fixes
from compat.inputs.config import DEFAULT_SPECULATIVE_ALGORITHM, AttentionConfig, flag_of
from compat.inputs.config import speculation_with_topk as with_topk
from compat.inputs.gpus import GPUS
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
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab import terms as vocab
from compat.vocab.hardware import ComputeCapability

FINDER_RELEASES = tuple(reversed(RELEASE_NAMES))
"""The releases the finder offers: every modelled one, newest first (the initial selection)."""
RELEASES_VARIABLE = "COMPAT_FINDER_RELEASES"
"""Names the releases a build offers (comma-separated, kept newest first); unset or `all`:
every one. For a quicker build while editing, and for the tests' sample of releases."""
INDEX_PATH = "javascripts/finder-releases.js"
"""Where the hook puts the list of releases and their data files, next to the page's script."""
INDEX_GLOBAL = "COMPAT_FINDER_RELEASES"
"""The global the index script assigns: `[{release, file}, ...]`, the initial one first."""
DATA_GLOBAL = "COMPAT_FINDER_DATA"
"""The global each data script adds its release to (a script, not JSON: works from file://)."""
SCHEMA_VERSION = 5
TOPK_CHOICES = (1, 2, 4)
"""Speculative top-k values offered besides "off": 1 and more than 1 are different columns."""
VERDICTS = ("compatible", "warnings", "incompatible")
"""Verdict names, indexed by the verdict digit of the data's parts."""
AXIS_ORDER = ("arch", "gpu", "kv_cache_dtype", "page_size", "topk")
"""The axes in the order that the data's combination index counts them (last varies fastest)."""
MAX_FIXES = 5
_SEVERITIES = (vocab.Severity.ERROR, vocab.Severity.WARNING, vocab.Severity.INFO)
_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(_SEVERITIES)}


def data_path(release: str) -> str:
    """Where the hook puts one release's data in the built site, next to the page's script."""
    return f"javascripts/finder-data-{release}.js"


@dataclass(frozen=True)
class Option:
    """One choice of one axis: the form value, its label, and the config fields it sets."""

    value: str
    label: str
    fields: tuple[tuple[str, Any], ...]
    flags: str | None = None
    """How `compat check` spells it, where that is not its fields as flags (`--gpu B200`)."""

    @property
    def args(self) -> str:
        """The option as `compat check` flags (empty when it sets nothing)."""
        if self.flags is not None:
            return self.flags
        dotted = [v.dotted if isinstance(v, ComputeCapability) else v for _, v in self.fields]
        return " ".join(f"{flag_of(n)} {v}" for (n, _), v in zip(self.fields, dotted, strict=True))


@dataclass(frozen=True)
class Axis:
    id: str
    options: tuple[Option, ...]
    initial: str

    def __post_init__(self) -> None:
        values = [option.value for option in self.options]
        if len(set(values)) != len(values) or self.initial not in values:
            raise ValueError(f"finder axis {self.id}: duplicate values or unknown initial")


def _axis(axis_id: str, initial: str, options: Iterable[tuple[str, str, dict[str, Any]]]) -> Axis:
    return Axis(axis_id, tuple(Option(v, t, tuple(f.items())) for v, t, f in options), initial)


def finder_backends(release: str) -> tuple[str, ...]:
    """The backends the finder shows for `release`: the release's matrix rows that its
    `--attention-backend` accepts, in the matrix's order."""
    accepted = RELEASES[release].backend_set
    return tuple(name for name in release_matrix(release).backend_names if name in accepted)


def finder_options(release: str = FINDER_RELEASES[0]) -> tuple[Axis, ...]:
    """The finder's option space for `release`, axis by axis in `AXIS_ORDER`."""
    # Every GPU of `compat.inputs.gpus` by name, then each platform that has no named GPU.
    gpus = []
    for gpu in GPUS:
        fields: tuple[tuple[str, Any], ...] = (("platform", gpu.platform.value),)
        if gpu.capability is not None:
            fields += (("compute_capability", gpu.capability),)
        label = " / ".join((gpu.name, *gpu.aliases))
        where = gpu.platform.label if gpu.capability is None else str(gpu.capability)
        flags = f"--gpu {shlex.quote(gpu.name)}"
        value = "-".join(gpu.name.lower().split())  # lower case, words joined by hyphens
        gpus.append(Option(value, f"{label} ({where})", fields, flags))
    bare = [p for p in vocab.Platform if p not in {gpu.platform for gpu in GPUS}]
    gpus += [Option(p.value, p.label, (("platform", p.value),)) for p in bare]
    archs = [(a.value, a.label, {"attention_arch": a.value}) for a in vocab.Arch]
    # One spelling per dtype: the canonical one (drops aliases such as `bfloat16`).
    spellings, offered = vocab.KV_DTYPE_SPELLINGS, RELEASES[release].kv_set
    dtypes = [name for name, dtype in spellings.items() if name == dtype.value and name in offered]
    # PR #14467's question: the release's first FP4 cache dtype, else SGLang's default.
    fp4 = [name for name in dtypes if spellings[name].is_fp4] + [vocab.KvDtype.AUTO.value]
    kv = _axis("kv_cache_dtype", fp4[0], ((n, n, {"kv_cache_dtype": n}) for n in dtypes))
    sizes = [(str(s), str(s), {"page_size": s}) for s in page_sizes(release_matrix(release))]
    page = _axis("page_size", "", [("", "unset (backend default)", {}), *sizes])
    # A topk comes with the step and draft-token counts SGLang requires alongside it.
    spec = [(str(k), f"{k} ({DEFAULT_SPECULATIVE_ALGORITHM})", with_topk(k)) for k in TOPK_CHOICES]
    topk = _axis("topk", "", [("", "off", {}), *spec])
    axes = (_axis("arch", "mla", archs), Axis("gpu", tuple(gpus), "b200"), kv, page, topk)
    assert tuple(axis.id for axis in axes) == AXIS_ORDER
    return axes


def pair_prefills(release: str = FINDER_RELEASES[0]) -> tuple[str, ...]:
    """Prefill backends the finder pairs with every decode backend: those that cannot serve
    decode themselves, and those a pairing rule names (a pair is where they are needed)."""
    matrix = release_matrix(release)
    names = {b.name for b in matrix.backends if b.phases == frozenset({vocab.Phase.PREFILL})}
    names |= {rule.prefill_backend for rule in matrix.pairing_rules}
    return tuple(name for name in finder_backends(release) if name in names)


def hardware_classes(axes: tuple[Axis, ...]) -> list[tuple[tuple[str, Any], ...]]:
    """The distinct platform/compute-capability settings the GPU menu's options make."""
    return list(dict.fromkeys(option.fields for option in axes[1].options))


# -- computing: the guard on every combination and column; then the layout ----------------
def _cell(report: Report) -> Cell:
    verdict = 2 if not report.ok else 1 if report.warnings else 0
    ordered = sorted(report.findings, key=lambda finding: _SEVERITY_RANK[finding.severity])
    keys = [(_SEVERITY_RANK[f.severity], f.rule, f.message, f.phases) for f in ordered]
    return verdict, tuple((s, r, m, "+".join(p.value for p in ps)) for s, r, m, ps in keys)


def _row(base: AttentionConfig, release: str, run: Callable[[AttentionConfig], Report]) -> Row:
    backends = finder_backends(release)
    reports = [run(replace(base, attention_backend=name)) for name in backends]
    passing = any(report.ok for report in reports)
    refused = ""
    for prefill in pair_prefills(release):
        pairs = [
            run(replace(base, prefill_attention_backend=prefill, decode_attention_backend=d))
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
    if not passing:
        found = suggest_fixes(unset, run, release_matrix(release))[:MAX_FIXES]
        fixes = tuple((fix.summary, fix.reason) for fix in found)
    defaults = (unset.resolved.prefill_backend, unset.resolved.decode_backend)
    return Row(tuple(map(_cell, reports)), refused, defaults, fixes)


def _memoized(matrix: Matrix) -> Callable[[AttentionConfig], Report]:
    """`check()` against `matrix`, each configuration once."""
    seen: dict[AttentionConfig, Report] = {}

    def run(config: AttentionConfig) -> Report:
        report = seen.get(config)
        if report is None:
            report = seen[config] = check(config, matrix)
        return report

    return run


def release_rows(release: str, arch: int, hardware: int) -> list[Row]:
    """The rows of one architecture and hardware class, in index order. One memo serves them
    all: the suggestion search asks about neighbouring combinations and columns."""
    axes, run = finder_options(release), _memoized(release_matrix(release))
    fixed = (axes[0].options[arch].fields, hardware_classes(axes)[hardware])
    combinations = itertools.product(*(axis.options for axis in axes[2:]))
    fields = (dict(itertools.chain(*fixed, *(o.fields for o in rest))) for rest in combinations)
    return [_row(AttentionConfig(sglang_version=release, **f), release, run) for f in fields]


def combination_row(release: str, values: dict[str, str]) -> Row:
    """The row of one combination (an option value per axis id), as the build computes it:
    lets a test hold any release's rows to the guard without computing its whole space."""
    axes, run = finder_options(release), _memoized(release_matrix(release))
    chosen = [next(o for o in axis.options if o.value == values[axis.id]) for axis in axes]
    fields = dict(itertools.chain(*(option.fields for option in chosen)))
    return _row(AttentionConfig(sglang_version=release, **fields), release, run)


def compute_rows(
    releases: Sequence[str], say: Callable[[str], None] | None = None
) -> dict[str, list[Row]]:
    """Every row of each release; the parts (an architecture and hardware class each) are
    computed side by side on every CPU (the result does not depend on where). `say` gets a
    line as each release is done: the whole takes minutes, and the builder should see it move."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    parts = []
    for release in releases:
        axes = finder_options(release)
        classes = range(len(hardware_classes(axes)))
        parts += [(release, a, h) for a in range(len(axes[0].options)) for h in classes]
    left = {release: sum(part[0] == release for part in parts) for release in releases}
    workers = min(len(parts), os.cpu_count() or 1)
    # Forked workers need no `__main__` guard in the caller (fork is POSIX's default).
    fork = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    rows: dict[str, list[Row]] = {release: [] for release in releases}
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, multiprocessing.get_context(fork)) as pool:
        # Results come in the parts' order, so the releases are done newest first.
        done = pool.map(release_rows, *zip(*parts, strict=True))
        for (release, _, _), part in zip(parts, done, strict=True):
            rows[release] += part
            left[release] -= 1
            if left[release] == 0 and say is not None:
                finished = sum(not count for count in left.values())
                say(
                    f"finder: SGLang {release}'s verdicts computed ({finished} of "
                    f"{len(releases)} releases, {time.perf_counter() - start:.0f} s so far, "
                    f"{workers} processes)"
                )
    return rows


def _axes_data(axes: tuple[Axis, ...]) -> list[dict[str, Any]]:
    hardware = hardware_classes(axes)
    return [
        {
            "id": axis.id,
            "initial": axis.initial,
            "options": [
                {"value": option.value, "label": option.label, "args": option.args}
                | ({"hw": hardware.index(option.fields)} if axis.id == "gpu" else {})
                for option in axis.options
            ],
        }
        for axis in axes
    ]


def finder_data(release: str = FINDER_RELEASES[0], rows: list[Row] | None = None) -> dict[str, Any]:
    """The guard's verdicts predicting `release` (from `rows`, else computed): every
    combination of the release's option space, every column.

    A column is one backend on both phases, or a (prefill, decode) pair (`columns`: backend
    numbers, -1 for no prefill of its own); a combination's index is mixed radix over arch,
    hardware class, dtype, page size and topk (last fastest). Numbers are written in
    `DIGITS`, `widths[table]` digits each: as few as the table's size allows. Texts live
    once in `texts`, each as word numbers into `words`; `findings` holds per finding its
    severity's digit and the text numbers of its rule, message and phases, numbered so that
    every cell's findings are in id order. Cells come in blocks of `block` (every page size
    and topk of one arch, hardware class and dtype; `topks` per page size): per block and
    column, `results` holds a `groups` number, whose entry holds a `sets` number (finding
    ids all the block's cells share), three `tuples` numbers (a set per page size, a set
    per topk, a set per cell) and a `patterns` number (each cell's verdict digit). A cell's
    findings are the union of its four sets, in id order (`cell_tables`). `defaults`: per
    combination SGLang's prefill and decode backends with no backend flag (one digit
    each, `len(backends)` for none); `refused`: per combination and pair prefill, "1"
    where the prefill backend itself is refused (its cells then hold only the errors all
    pairs share); `fixes`: per combination 0, or 1 + an index into `fixlists` ([summary,
    reason] text number pairs, the guard's fixes for the default launch) where nothing
    passes. Measured on 0.5.23: 998 KB as a two-digit outcome number per cell and column
    (one digit never fits: every column has over 64 outcomes), 252 KB with one set per
    block and a part per cell and plain texts, 130 KB (32 KB gzipped) this way.
    """
    rows = compute_rows([release])[release] if rows is None else rows
    axes, backends = finder_options(release), finder_backends(release)
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
    return {
        "schema": SCHEMA_VERSION,
        "release": release,
        "axes": _axes_data(axes),
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
    }


def render_finder_data(release: str = NEWEST, data: dict[str, Any] | None = None) -> str:
    """`finder_data(release)` (or `data`, already computed) as deterministic, compact JSON."""
    data = finder_data(release) if data is None else data
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def render_finder_script(release: str = NEWEST, data: dict[str, Any] | None = None) -> str:
    """One release's data as a script that adds it to a global, so the page also works
    opened from disk."""
    return (
        "// Generated at site build time by compat.publish.finder from the capability matrix\n"
        "// and the guard; do not edit.\n"
        f"window.{DATA_GLOBAL} = window.{DATA_GLOBAL} || {{}};\n"
        f"window.{DATA_GLOBAL}[{json.dumps(release)}] = {render_finder_data(release, data)};\n"
    )


def offered_releases() -> tuple[str, ...]:
    """The releases this build offers, newest first: `FINDER_RELEASES`, or those that
    `COMPAT_FINDER_RELEASES` names; ValueError (one line, the choices) for an unknown one."""
    wanted = os.environ.get(RELEASES_VARIABLE, "").strip()
    if wanted in ("", "all"):
        return FINDER_RELEASES
    names = {name.strip() for name in wanted.split(",") if name.strip()}
    unknown = sorted(names - set(FINDER_RELEASES))
    if unknown or not names:
        raise ValueError(
            f"{RELEASES_VARIABLE}={wanted!r}: {', '.join(unknown) or 'no release'} is not a "
            f"modelled release; choose among {', '.join(RELEASE_NAMES)} or all"
        )
    return tuple(release for release in FINDER_RELEASES if release in names)


def generated_names() -> tuple[str, ...]:
    """The paths of every file the finder adds to the built site: the index, then one data
    file per release (relative to the site's root, inside `javascripts/`)."""
    return (INDEX_PATH, *map(data_path, offered_releases()))


def generated_files(say: Callable[[str], None] | None = None) -> list[tuple[str, str]]:
    """Every file the finder adds to the built site, as (path, content): the index of the
    releases and their data files (the initial one first), then one data file per release.
    `say` gets a line of progress per release."""
    releases = offered_releases()
    rows = compute_rows(releases, say)
    data = {data_path(r): render_finder_script(r, finder_data(r, rows[r])) for r in rows}
    index = [{"release": r, "file": data_path(r).rsplit("/", 1)[1]} for r in releases]
    script = f"window.{INDEX_GLOBAL} = {json.dumps(index, separators=(',', ':'))};\n"
    comment = "// Generated at site build time by compat.publish.finder; do not edit.\n"
    return [(INDEX_PATH, comment + script), *data.items()]
