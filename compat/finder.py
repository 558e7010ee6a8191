"""The data behind the docs site's compatibility finder: the guard's verdicts, precomputed.

The finder page lets a reader pick an architecture, a GPU, a KV-cache dtype, a page size
and a speculative top-k, and shows what `check()` says about running both phases on each
backend. The page's JavaScript does no reasoning of its own: it looks the answer up in the
structure built here, which runs the guard over the finder's whole (finite) option space.

The MkDocs hook writes it into the built site; it is never committed, so it cannot be stale.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compat.config import DEFAULT_SPECULATIVE_ALGORITHM, AttentionConfig, flag_of
from compat.guard import check
from compat.matrix import MATRIX
from compat.releases import RELEASES
from compat.report import Finding, Report
from compat.schema import Matrix
from compat.vocab import KV_DTYPE_SPELLINGS, Arch, ComputeCapability, KvDtype, Platform, Severity

__all__ = [
    "AXIS_ORDER",
    "CAPABILITY_PRESETS",
    "DATA_GLOBAL",
    "DATA_PATH",
    "SPECULATIVE_ALGORITHM",
    "TOPK_CHOICES",
    "VERDICTS",
    "Axis",
    "Option",
    "combinations",
    "config_for",
    "finder_data",
    "finder_options",
    "render_finder_data",
    "render_finder_script",
    "verdict_of",
]

DATA_PATH = "javascripts/finder-data.js"
"""Where the hook puts the data in the built site, next to the page's script."""

DATA_GLOBAL = "COMPAT_FINDER_DATA"
"""The global the data script assigns (a script, not fetched JSON: works from file:// too)."""

SCHEMA_VERSION = 1

CAPABILITY_PRESETS = (
    ComputeCapability(8, 0),
    ComputeCapability(8, 6),
    ComputeCapability(8, 9),
    ComputeCapability(9, 0),
    ComputeCapability(10, 0),
    ComputeCapability(12, 0),
)
"""The CUDA GPUs the finder offers, one per compute capability that ships in data centres."""

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

    @property
    def args(self) -> str:
        """The option as `compat check` flags (empty when it sets nothing)."""
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
    options = []
    for platform in Platform:
        if platform is Platform.CUDA:
            for capability in CAPABILITY_PRESETS:
                options.append(
                    Option(
                        f"{platform.value}-{capability}",
                        f"{platform.label} {capability} (CC {capability.dotted})",
                        (("platform", platform.value), ("compute_capability", capability)),
                    )
                )
        else:
            options.append(Option(platform.value, platform.label, (("platform", platform.value),)))
    return tuple(options)


def _page_sizes(matrix: Matrix) -> tuple[int, ...]:
    """1 (no paging) and every page size a cell of the matrix names."""
    sizes = {1}
    for table in matrix.tables:
        for row in table.rows:
            for cell in row.cells.values():
                sizes.update(cell.page_sizes)
    return tuple(sorted(sizes))


def finder_options(matrix: Matrix = MATRIX) -> tuple[Axis, ...]:
    """The finder's option space, axis by axis in `AXIS_ORDER`."""
    arch = Axis(
        "arch",
        tuple(Option(a.value, a.label, (("attention_arch", a.value),)) for a in Arch),
        Arch.MLA.value,
    )
    gpu = Axis("gpu", _gpu_options(), f"{Platform.CUDA.value}-{ComputeCapability(10, 0)}")
    # One spelling per dtype: the canonical one (drops aliases such as `bfloat16`).
    offered = RELEASES[FINDER_RELEASE].kv_set
    dtypes = [
        name
        for name, dtype in KV_DTYPE_SPELLINGS.items()
        if name == dtype.value and name in offered
    ]
    kv = Axis(
        "kv_cache_dtype",
        tuple(Option(name, name, (("kv_cache_dtype", name),)) for name in dtypes),
        KvDtype.FP4_E2M1.value,
    )
    page = Axis(
        "page_size",
        (
            Option("", "unset (backend default)", ()),
            *(Option(str(size), str(size), (("page_size", size),)) for size in _page_sizes(matrix)),
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
                    (
                        ("speculative_algorithm", SPECULATIVE_ALGORITHM),
                        ("speculative_eagle_topk", k),
                    ),
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


def config_for(combination: Iterable[Option], backend: str | None) -> AttentionConfig:
    """The configuration the finder asks the guard about: both phases on `backend`."""
    fields: dict[str, Any] = {"sglang_version": FINDER_RELEASE}
    for option in combination:
        fields.update(option.fields)
    return AttentionConfig(attention_backend=backend, **fields)


# The release whose start-up the finder predicts: the one the page's tables describe.
FINDER_RELEASE = "0.5.7"


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


def finder_data(matrix: Matrix = MATRIX) -> dict[str, Any]:
    """The guard's verdict for every combination of the option space and every backend.

    Compact by construction: strings live once in `strings`; a finding is
    `[severity, rule, message, phases]` (indexes into `severities` and `strings`); an
    outcome is `[verdict, [finding, ...]]`; `results[c][b]` is the outcome index for
    combination `c` (mixed-radix over `axes`, last axis fastest) and backend `b`;
    `defaults[c]` is `[prefill, decode]`, the backends SGLang would pick with no
    `--attention-backend` (indexes into `backends`, -1 for none).
    """
    axes = finder_options(matrix)
    backends = matrix.backend_names
    backend_index = {name: index for index, name in enumerate(backends)}
    strings, findings, outcomes = _Interner(), _Interner(), _Interner()

    def finding_id(finding: Finding) -> int:
        phases = "+".join(phase.value for phase in finding.phases)
        return findings(
            (
                _SEVERITY_RANK[finding.severity],
                strings(finding.rule),
                strings(finding.message),
                strings(phases),
            )
        )

    def outcome_id(report: Report) -> int:
        ids = tuple(finding_id(finding) for finding in _ordered(report.findings))
        return outcomes((VERDICTS.index(verdict_of(report)), ids))

    results: list[list[int]] = []
    defaults: list[list[int]] = []
    for combination in combinations(axes):
        results.append(
            [outcome_id(check(config_for(combination, name), matrix)) for name in backends]
        )
        resolved = check(config_for(combination, None), matrix).resolved
        defaults.append(
            [
                -1 if name is None else backend_index[name]
                for name in (resolved.prefill_backend, resolved.decode_backend)
            ]
        )
    return {
        "schema": SCHEMA_VERSION,
        "axes": [
            {
                "id": axis.id,
                "initial": axis.initial,
                "options": [
                    {"value": option.value, "label": option.label, "args": option.args}
                    for option in axis.options
                ],
            }
            for axis in axes
        ],
        "backends": list(backends),
        "verdicts": list(VERDICTS),
        "severities": [severity.value for severity in _SEVERITIES],
        "speculative_algorithm": SPECULATIVE_ALGORITHM,
        "strings": strings.values,
        "findings": [list(finding) for finding in findings.values],
        "outcomes": [[verdict, list(ids)] for verdict, ids in outcomes.values],
        "results": results,
        "defaults": defaults,
    }


def render_finder_data(matrix: Matrix = MATRIX) -> str:
    """`finder_data()` as deterministic, compact JSON text."""
    return json.dumps(
        finder_data(matrix), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )


def render_finder_script(matrix: Matrix = MATRIX) -> str:
    """The data as a script that assigns a global, so the page also works opened from disk."""
    return (
        "// Generated at site build time by compat.finder from the capability matrix and the\n"
        "// guard; do not edit.\n"
        f"window.{DATA_GLOBAL} = {render_finder_data(matrix)};\n"
    )
