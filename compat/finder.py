"""The data behind the docs site's compatibility finder: the guard's verdicts, precomputed.

The finder page lets a reader pick an architecture, a GPU, a KV-cache dtype, a page size
and a speculative top-k, and shows what `check()` says about running both phases on each
backend. The page's JavaScript does no reasoning of its own: it looks the answer up in the
structure built here, which runs the guard over the finder's whole (finite) option space.

Each release of `FINDER_RELEASES` has its own option space (the KV dtypes and backends that
release accepts), its own verdicts (the guard predicting that release) and its own data file.
The MkDocs hook writes them into the built site; they are never committed, so they cannot be
stale.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from compat.config import (
    DEFAULT_SPECULATIVE_ALGORITHM,
    AttentionConfig,
    flag_of,
    speculation_with_topk,
)
from compat.guard import check
from compat.releases import NEWEST, RELEASES, release_matrix
from compat.report import Finding, Report, Suggestion
from compat.schema import Matrix
from compat.suggest import page_sizes, suggest_fixes
from compat.vocab import (
    KV_DTYPE_SPELLINGS,
    Arch,
    ComputeCapability,
    KvDtype,
    Phase,
    Platform,
    Severity,
)

__all__ = [
    "AXIS_ORDER",
    "DATA_GLOBAL",
    "FINDER_RELEASES",
    "INDEX_GLOBAL",
    "INDEX_PATH",
    "SPECULATIVE_ALGORITHM",
    "TOPK_CHOICES",
    "VERDICTS",
    "Axis",
    "Option",
    "combinations",
    "config_for",
    "data_path",
    "finder_backends",
    "finder_data",
    "finder_options",
    "generated_files",
    "render_finder_data",
    "render_finder_index",
    "render_finder_script",
    "verdict_of",
]

FINDER_RELEASES = (NEWEST, "0.5.7")
"""The releases the finder offers, newest first (the initial selection); 0.5.7 is the
release of PR #14467, the page's baseline."""

INDEX_PATH = "javascripts/finder-releases.js"
"""Where the hook puts the list of releases and their data files, next to the page's script."""

INDEX_GLOBAL = "COMPAT_FINDER_RELEASES"
"""The global the index script assigns: `[{release, file}, ...]`, the initial one first."""

DATA_GLOBAL = "COMPAT_FINDER_DATA"
"""The global object each data script adds its release to (a script, not fetched JSON:
works from file:// too)."""

SCHEMA_VERSION = 3


def data_path(release: str) -> str:
    """Where the hook puts one release's data in the built site, next to the page's script."""
    return f"javascripts/finder-data-{release}.js"


TOPK_CHOICES = (1, 2, 4)
"""Speculative top-k values offered besides "off": 1 and more than 1 are different columns."""

SPECULATIVE_ALGORITHM = DEFAULT_SPECULATIVE_ALGORITHM
"""The algorithm the finder assumes when speculative decoding is on."""

VERDICTS = ("compatible", "warnings", "incompatible")
"""Verdict names, indexed by the data's outcome table."""

_SEVERITIES = (Severity.ERROR, Severity.WARNING, Severity.INFO)
_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(_SEVERITIES)}

AXIS_ORDER = ("arch", "gpu", "kv_cache_dtype", "page_size", "topk")
"""The axes in the order that the data's combination index counts them (last varies fastest)."""


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
        parts = []
        for name, value in self.fields:
            if isinstance(value, ComputeCapability):
                value = value.dotted
            parts.append(f"{flag_of(name)} {value}")
        return " ".join(parts)


@dataclass(frozen=True)
class Axis:
    id: str
    options: tuple[Option, ...]
    initial: str

    def __post_init__(self) -> None:
        values = [option.value for option in self.options]
        if len(set(values)) != len(values) or self.initial not in values:
            raise ValueError(f"finder axis {self.id}: duplicate values or unknown initial")


def _gpu_options() -> tuple[Option, ...]:
    """Every GPU of `compat.gpus` by name, then each platform that has no named GPU."""
    import shlex

    from compat.gpus import GPUS

    options = []
    for gpu in GPUS:
        fields: tuple[tuple[str, Any], ...] = (("platform", gpu.platform.value),)
        if gpu.capability is not None:
            fields += (("compute_capability", gpu.capability),)
        names = " / ".join((gpu.name, *gpu.aliases))
        where = gpu.platform.label if gpu.capability is None else str(gpu.capability)
        options.append(
            Option(
                gpu_value(gpu.name), f"{names} ({where})", fields, f"--gpu {shlex.quote(gpu.name)}"
            )
        )
    named = {gpu.platform for gpu in GPUS}
    for platform in Platform:
        if platform not in named:
            options.append(Option(platform.value, platform.label, (("platform", platform.value),)))
    return tuple(options)


def gpu_value(name: str) -> str:
    """A GPU's menu value: its name in lower case, words joined by hyphens."""
    return "-".join(name.lower().split())


def finder_backends(release: str) -> tuple[str, ...]:
    """The backends the finder shows for `release`: the release's matrix rows that its
    `--attention-backend` accepts, in the matrix's order."""
    accepted = RELEASES[release].backend_set
    return tuple(name for name in release_matrix(release).backend_names if name in accepted)


def finder_options(release: str = FINDER_RELEASES[0]) -> tuple[Axis, ...]:
    """The finder's option space for `release`, axis by axis in `AXIS_ORDER`."""
    matrix = release_matrix(release)
    arch = Axis(
        "arch",
        tuple(Option(a.value, a.label, (("attention_arch", a.value),)) for a in Arch),
        Arch.MLA.value,
    )
    gpu = Axis("gpu", _gpu_options(), gpu_value("B200"))
    # One spelling per dtype: the canonical one (drops aliases such as `bfloat16`).
    offered = RELEASES[release].kv_set
    dtypes = [
        name
        for name, dtype in KV_DTYPE_SPELLINGS.items()
        if name == dtype.value and name in offered
    ]
    # PR #14467's question: the release's first FP4 cache dtype, else SGLang's default.
    fp4 = [name for name in dtypes if KV_DTYPE_SPELLINGS[name].is_fp4]
    kv = Axis(
        "kv_cache_dtype",
        tuple(Option(name, name, (("kv_cache_dtype", name),)) for name in dtypes),
        fp4[0] if fp4 else KvDtype.AUTO.value,
    )
    page = Axis(
        "page_size",
        (
            Option("", "unset (backend default)", ()),
            *(Option(str(size), str(size), (("page_size", size),)) for size in page_sizes(matrix)),
        ),
        "",
    )
    topk = Axis(
        "topk",
        (
            Option("", "off", ()),
            *(
                Option(
                    str(k),
                    f"{k} ({SPECULATIVE_ALGORITHM})",
                    # SGLang takes a topk only with the number of steps and draft tokens.
                    tuple(speculation_with_topk(k).items()),
                )
                for k in TOPK_CHOICES
            ),
        ),
        "",
    )
    axes = (arch, gpu, kv, page, topk)
    assert tuple(axis.id for axis in axes) == AXIS_ORDER
    return axes


def combinations(axes: Iterable[Axis]) -> Iterable[tuple[Option, ...]]:
    """Every combination of one option per axis, in the data's index order."""
    return itertools.product(*(axis.options for axis in axes))


def config_for(
    combination: Iterable[Option], backend: str | None, release: str = FINDER_RELEASES[0]
) -> AttentionConfig:
    """The configuration the finder asks the guard about: both phases on `backend`, SGLang
    `release` predicted."""
    fields: dict[str, Any] = {"sglang_version": release}
    for option in combination:
        fields.update(option.fields)
    return AttentionConfig(attention_backend=backend, **fields)


def verdict_of(report: Report) -> str:
    """compatible, warnings (no error but at least one warning) or incompatible."""
    if not report.ok:
        return VERDICTS[2]
    if report.warnings:
        return VERDICTS[1]
    return VERDICTS[0]


def _ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Errors first, then warnings, then infos; the guard's order within each."""
    return sorted(findings, key=lambda finding: _SEVERITY_RANK[finding.severity])


class _Interner:
    """Assigns each distinct value a stable index, in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, value: Any) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index)
        return found

    @property
    def values(self) -> list[Any]:
        return list(self.index)


DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
"""The alphabet of the data's fixed-width numbers (base 64, safe in JSON and URLs)."""
WIDTH = 2
"""Digits per encoded number: outcome and finding ids stay below 64**2."""
MAX_FIXES = 5


def _encode(number: int, width: int = WIDTH) -> str:
    if not 0 <= number < len(DIGITS) ** width:
        raise ValueError(f"finder data: {number} does not fit in {width} digits")
    text = ""
    for _ in range(width):
        number, digit = divmod(number, len(DIGITS))
        text = DIGITS[digit] + text
    return text


def pair_prefills(release: str = FINDER_RELEASES[0]) -> tuple[str, ...]:
    """Prefill backends the finder pairs with every decode backend: those that cannot serve
    decode themselves, and those a pairing rule names (a pair is where they are needed)."""
    matrix = release_matrix(release)
    names = {b.name for b in matrix.backends if b.phases == frozenset({Phase.PREFILL})}
    names |= {rule.prefill_backend for rule in matrix.pairing_rules}
    return tuple(name for name in finder_backends(release) if name in names)


def _refused_prefill(pairs: list[Report]) -> tuple[Finding, ...]:
    """The errors every pair shares when they concern the prefill backend: then no decode
    partner can help, and the finder shows just these (`refused` in the data)."""
    shared = [
        finding
        for finding in pairs[0].errors
        if Phase.PREFILL in finding.phases
        and Phase.DECODE not in finding.phases
        and all(finding in report.findings for report in pairs[1:])
    ]
    return tuple(shared)


def hardware_classes(axes: tuple[Axis, ...]) -> list[tuple[tuple[str, Any], ...]]:
    """The distinct platform/compute-capability settings the GPU menu's options make."""
    return list(dict.fromkeys(option.fields for option in axes[1].options))


def _memoized_check(matrix: Matrix) -> Callable[[AttentionConfig], Report]:
    """`check()` that answers a configuration it has seen from memory: the suggestion search
    asks again about the backend columns the finder has just checked."""
    seen: dict[AttentionConfig, Report] = {}

    def run(config: AttentionConfig) -> Report:
        report = seen.get(config)
        if report is None:
            report = seen[config] = check(config, matrix)
        return report

    return run


def _fixes(report: Report, run: Callable[[AttentionConfig], Report]) -> tuple[Suggestion, ...]:
    """`report.suggestions[:MAX_FIXES]`, searched with the combination's memoized checks."""
    return suggest_fixes(report, run, release_matrix(report.sglang_version))[:MAX_FIXES]


def finder_data(release: str = FINDER_RELEASES[0]) -> dict[str, Any]:
    """The guard's verdict, predicting `release`, for every combination of that release's
    option space and every column.

    A column is one backend on both phases, or a (prefill, decode) pair of `pair_prefills`.
    Compact by construction: strings live once in `strings`; a finding is `[severity, rule,
    message, phases]`; an outcome is a string: its verdict digit, then its finding ids
    (`WIDTH` digits each); each column has its own outcome list; `results` is one string,
    for each combination (mixed radix over arch, hardware class, dtype, page size, topk;
    last fastest) and each column the outcome's index in that column's list, in
    `widths[column]` digits (one where the column has at most 64 outcomes). Numbers are
    written in `DIGITS`. `defaults` holds, per combination, SGLang's prefill and decode
    backends with no backend flag (one digit each; `len(backends)` for none); `refused`, per
    combination and pair prefill, "1" where the prefill backend itself is refused (its
    columns then hold only the errors all pairs share). `fixes` maps a combination where no
    backend passes to the guard's suggestions for the default launch.
    """
    matrix = release_matrix(release)
    axes = finder_options(release)
    backends = finder_backends(release)
    backend_index = {name: index for index, name in enumerate(backends)}
    columns: list[tuple[str | None, str]] = [(None, name) for name in backends]
    prefills = pair_prefills(release)
    # A pair of one backend with itself is its both-phases column.
    columns += [(p, d) for p in prefills for d in backends if d != p]
    strings, findings = _Interner(), _Interner()
    outcomes = [_Interner() for _ in columns]

    def outcome_of(report: Report) -> str:
        ids = (
            findings(
                (
                    _SEVERITY_RANK[finding.severity],
                    strings(finding.rule),
                    strings(finding.message),
                    strings("+".join(phase.value for phase in finding.phases)),
                )
            )
            for finding in _ordered(report.findings)
        )
        return str(VERDICTS.index(verdict_of(report))) + "".join(map(_encode, ids))

    hardware = hardware_classes(axes)
    others = [axis.options for axis in axes[2:]]
    results: list[list[int]] = []
    refused: list[str] = []
    defaults: list[str] = []
    fixes: dict[str, list[list[int]]] = {}
    for arch in axes[0].options:
        for fields in hardware:
            for rest in itertools.product(*others):
                combination = (arch, Option("", "", fields), *rest)
                run = _memoized_check(matrix)
                base = config_for(combination, None, release)
                reports = [run(replace(base, attention_backend=name)) for name in backends]
                passing = any(report.ok for report in reports)
                for prefill in prefills:
                    pairs = [
                        run(
                            replace(
                                base, prefill_attention_backend=prefill, decode_attention_backend=d
                            )
                        )
                        for d in backends
                        if d != prefill
                    ]
                    common = _refused_prefill(pairs)
                    refused.append("1" if common else "0")
                    reports += [
                        replace(report, findings=common) if common else report for report in pairs
                    ]
                results.append(
                    [outcomes[column](outcome_of(report)) for column, report in enumerate(reports)]
                )
                unset = run(base)
                resolved = unset.resolved
                defaults.append(
                    "".join(
                        DIGITS[len(backends) if name is None else backend_index[name]]
                        for name in (resolved.prefill_backend, resolved.decode_backend)
                    )
                )
                if not passing:
                    fixes[str(len(defaults) - 1)] = [
                        [strings(fix.summary), strings(fix.reason)] for fix in _fixes(unset, run)
                    ]
    widths = [1 if len(column.index) <= len(DIGITS) else WIDTH for column in outcomes]
    return {
        "schema": SCHEMA_VERSION,
        "release": release,
        "axes": [
            {
                "id": axis.id,
                "initial": axis.initial,
                "options": [
                    {
                        "value": option.value,
                        "label": option.label,
                        "args": option.args,
                        **({"hw": hardware.index(option.fields)} if axis.id == "gpu" else {}),
                    }
                    for option in axis.options
                ],
            }
            for axis in axes
        ],
        "hardware": len(hardware),
        "backends": list(backends),
        "columns": [
            [-1 if prefill is None else backend_index[prefill], backend_index[decode]]
            for prefill, decode in columns
        ],
        "digits": DIGITS,
        "width": WIDTH,
        "widths": widths,
        "verdicts": list(VERDICTS),
        "severities": [severity.value for severity in _SEVERITIES],
        "speculative_algorithm": SPECULATIVE_ALGORITHM,
        "strings": strings.values,
        "findings": [list(finding) for finding in findings.values],
        "outcomes": [column.values for column in outcomes],
        "results": "".join(
            _encode(number, width)
            for row in results
            for number, width in zip(row, widths, strict=True)
        ),
        "defaults": "".join(defaults),
        "refused": "".join(refused),
        "fixes": fixes,
    }


def render_finder_data(
    release: str = FINDER_RELEASES[0], data: dict[str, Any] | None = None
) -> str:
    """`finder_data(release)` (or `data`, already computed) as deterministic, compact JSON."""
    return json.dumps(
        finder_data(release) if data is None else data,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


def render_finder_script(
    release: str = FINDER_RELEASES[0], data: dict[str, Any] | None = None
) -> str:
    """One release's data as a script that adds it to a global, so the page also works
    opened from disk."""
    return (
        "// Generated at site build time by compat.finder from the capability matrix and the\n"
        "// guard; do not edit.\n"
        f"window.{DATA_GLOBAL} = window.{DATA_GLOBAL} || {{}};\n"
        f"window.{DATA_GLOBAL}[{json.dumps(release)}] = {render_finder_data(release, data)};\n"
    )


def render_finder_index() -> str:
    """The releases the finder offers and each one's data file, the initial one first."""
    index = [
        {"release": release, "file": data_path(release).rsplit("/", 1)[1]}
        for release in FINDER_RELEASES
    ]
    return (
        "// Generated at site build time by compat.finder; do not edit.\n"
        f"window.{INDEX_GLOBAL} = {json.dumps(index, separators=(',', ':'))};\n"
    )


def generated_files() -> list[tuple[str, str]]:
    """Every file the finder adds to the built site, as (path, content): the index, then one
    data file per release."""
    # The releases are independent: one process each, so a multi-core machine builds them
    # side by side (the output does not depend on where it was computed).
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=len(FINDER_RELEASES)) as pool:
        scripts = list(pool.map(render_finder_script, FINDER_RELEASES))
    return [
        (INDEX_PATH, render_finder_index()),
        *zip(map(data_path, FINDER_RELEASES), scripts, strict=True),
    ]
