"""`compat explain BACKEND`: everything the matrix knows about one backend, with its sources."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compat.claim import words as wording
from compat.claim.backends import Backend, phase_rule_id
from compat.claim.baseline import MATRIX
from compat.claim.cells import Cell, CellKind, PlatformSupport
from compat.claim.columns import ColumnId
from compat.claim.matrix import ArchStatus, Matrix
from compat.cli.json_errors import json_text
from compat.cli.matrix import aligned
from compat.vocab.evidence import Evidence
from compat.vocab.spelling import closest, did_you_mean, join_or
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Platform


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="everything the matrix knows about one backend",
        description="Print what the capability matrix knows about one attention backend: "
        "phases, platforms, hardware, table cells with their sources, rules and defaults.",
    )
    parser.add_argument("backend", metavar="BACKEND", help="an --attention-backend value")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def unknown_backend(name: str, matrix: Matrix = MATRIX) -> str:
    """The one-line error for a name that is not a backend, with a did-you-mean."""
    names = list(matrix.backend_names)
    hint = did_you_mean(closest(name.strip().lower(), names), quoted=True)
    return f"unknown backend {name!r}{hint} (valid choices: {', '.join(sorted(names))})"


def run(args: argparse.Namespace) -> int:
    name: str = args.backend
    from compat.releases import NEWEST, release_matrix

    matrix = release_matrix(NEWEST) if name not in MATRIX.backend_names else MATRIX
    if name not in matrix.backend_names:
        if args.json:
            from compat.cli.json_errors import print_json_error

            print_json_error(unknown_backend(name, matrix))
        print(f"compat explain: error: {unknown_backend(name, matrix)}", file=sys.stderr)
        return 2
    if args.json:
        print(json_text(explain_json(matrix, name)))
    else:
        from compat.vocab.spelling import plain

        print(plain("\n".join(explain_lines(matrix, name))))
    return 0


class _Sources:
    """Numbers evidence in the order the explanation cites it."""

    def __init__(self) -> None:
        self.cited: dict[Evidence, int] = {}

    def cite(self, evidence: Evidence | None) -> str:
        if evidence is None:
            return ""
        number = self.cited.setdefault(evidence, len(self.cited) + 1)
        return f"[{number}]"

    def lines(self) -> list[str]:
        out = []
        for evidence, number in self.cited.items():
            out.append(f"  [{number}] {evidence.source}")
            if evidence.url:
                out.append(f"      {evidence.url}")
            if evidence.tested_on:
                out.append(f"      tested on {evidence.tested_on}")
            if evidence.models:
                out.append(f"      models: {', '.join(evidence.models)}")
            if evidence.note:
                out.append(f"      {evidence.note}")
        return out


def _features(items: frozenset[ModelFeature]) -> str:
    return ", ".join(feature.label for feature in ModelFeature if feature in items)


def _capability(matrix: Matrix, backend: Backend, arch: Arch) -> str:
    if matrix.arch_status(backend.name, arch) is ArchStatus.REFUSED:
        return "n/a"
    needed = backend.capability.get(arch)
    return "any" if needed is None else needed.label


def _summary(matrix: Matrix, backend: Backend, sources: _Sources) -> list[str]:
    archs = [table.arch for table in matrix.tables]
    platforms = ", ".join(
        platform.label + ("" if kind is PlatformSupport.SUPPORTED else f" ({kind.value})")
        for platform, kind in ((p, backend.platforms[p]) for p in Platform if backend.runs_on(p))
    )
    capability = "; ".join(f"{arch.label}: {_capability(matrix, backend, arch)}" for arch in archs)
    models = "; ".join(
        f"{arch.label}: {matrix.arch_status(backend.name, arch).label}" for arch in archs
    )
    if backend.kv_dtypes is None:
        dtypes = "any the table cells allow"
    else:
        dtypes = "only " + ", ".join(d.value for d in KvDtype if d in backend.kv_dtypes)
    fp4 = [
        f"{arch.label} {cell.symbol}"
        for arch in archs
        if (row := matrix.row(arch, backend.name)) is not None
        and (cell := row.cells.get(ColumnId.FP4_KV)) is not None
    ]
    if fp4:
        dtypes += f" (FP4 KV cache: {', '.join(fp4)})"
    features = []
    if backend.requires_features:
        features.append(f"serves only models with {_features(backend.requires_features)}")
    if backend.refuses_features:
        features.append(f"cannot serve {_features(backend.refuses_features)} models")
    fields = [
        ("Phases", wording.phases_served(backend)),
        ("Platforms", platforms),
        ("Compute capability", f"{capability} (CUDA)"),
        ("Models", models),
        ("KV cache dtypes", dtypes),
        ("Model features", "; ".join(features) or "no requirement"),
        ("CUDA graphs", "turned off" if backend.disables_cuda_graph else "kept"),
    ]
    if backend.note:
        fields.append(("Note", backend.note))
    if backend.evidence is not None:
        fields.append(("Source", sources.cite(backend.evidence)))
    width = max(len(label) for label, _ in fields)
    return [f"  {label.ljust(width)}  {value}" for label, value in fields]


def _guard_note(matrix: Matrix, column_id: ColumnId, cell: Cell) -> str:
    """What the guard does with this cell when a configuration uses its column."""
    if cell.kind in (CellKind.SUPPORTED, CellKind.NOT_APPLICABLE):
        return ""
    if column_id is ColumnId.NATIVE_PAGE_SIZES and not cell.fixed:
        return "guard: info (other page sizes are emulated)"
    return f"guard: {matrix.column(column_id).action.value}"


def _rows(matrix: Matrix, backend: Backend, sources: _Sources) -> list[str]:
    lines: list[str] = []
    for table in matrix.tables:
        arch = table.arch
        row = matrix.row(arch, backend.name)
        if row is None:
            status = matrix.arch_status(backend.name, arch)
            lines += ["", f"{table.title}: no row ({status.label})"]
            continue
        lines += ["", f"{table.title}: {row.display_name}"]
        cells = []
        for column_id, header in table.headers:
            cell = row.cells[column_id]
            cited = sources.cite(matrix.evidence_for(arch, backend.name, column_id))
            guard = _guard_note(matrix, column_id, cell)
            cells.append([header, cell.symbol, cited, guard])
        lines += [f"  {line}" for line in aligned(cells)]
    return lines


def _rules(matrix: Matrix, backend: Backend, sources: _Sources) -> list[str]:
    name = backend.name
    lines: list[str] = []
    phase_only = wording.explanation(backend, matrix, name)
    if phase_only is not None:
        # The backend's own source is cited in the summary above.
        lines.append(f"[{phase_rule_id(backend)}] {phase_only}")
    for rule in matrix.cross_field_rules:
        text = wording.explanation(rule, matrix, name)
        if text is not None:
            lines.append(f"[{rule.id}] {text} {sources.cite(rule.evidence)}")
    snap = ColumnId.NATIVE_PAGE_SIZES.rule_id
    for row, arch, sizes in matrix.fixed_page_sizes():
        if row.backend == name:
            listed = join_or([str(size) for size in sizes])
            lines.append(
                f"[{snap}] for {arch.label} models it runs only with page size {listed}; SGLang "
                f"changes any other page size to {max(sizes)}"
            )
    return lines


def _defaults(name: str) -> list[str]:
    """Where the newest release's default decision picks `name`."""
    from compat.publish.startup_text import branch_conditions, model_rule_text
    from compat.releases import NEWEST, RELEASES

    rules = RELEASES[NEWEST]
    lines = [
        f"SGLang {rules.release}: the default for {branch.arch.label if branch.arch else 'any'} "
        f"models when {branch_conditions(branch, rules)}".replace("`", "")
        for branch in rules.defaults
        if branch.backend == name
    ]
    lines += [
        f"SGLang {rules.release}: {model_rule_text(rule)}".replace("`", "")
        for rule in rules.model_rules
        if name in rule.default_backends
    ]
    return lines or ["not a default anywhere (used only when --attention-backend names it)"]


def _build(name: str) -> list[str]:
    """What the newest release's attention registry requires of a launch of `name`."""
    from compat.guard.build_words import requirement_lines
    from compat.releases import NEWEST, RELEASES

    rules = RELEASES[NEWEST]
    if name not in rules.backend_set:
        return [f"SGLang {NEWEST} does not accept it"]
    lines = requirement_lines(rules.build, name, NEWEST)
    return lines or [f"SGLang {NEWEST}: its factory checks neither the model nor the GPU"]


def _verify(name: str) -> list[str]:
    """What the newest release's verify gaps say of `name` (none: it verifies)."""
    from compat.guard.verify_words import gap_lines
    from compat.releases import NEWEST, RELEASES

    return gap_lines(RELEASES[NEWEST].verify, name, NEWEST)


def _first_prefill(name: str) -> list[str]:
    """What the newest release's kernels over the model's shapes say of `name`."""
    from compat.guard.shape_words import gap_lines
    from compat.releases import NEWEST, RELEASES

    return gap_lines(RELEASES[NEWEST].shapes, name, NEWEST)


def _releases(name: str) -> list[str]:
    """The releases whose flags accept `name`, as ranges."""
    from compat.releases import RELEASES

    accepting = [r for r, rules in RELEASES.items() if name in rules.backend_set]
    if not accepting:
        return ["no release modelled here accepts it"]
    names = list(RELEASES)
    spans: list[list[str]] = []
    for release in accepting:
        if spans and names.index(release) == names.index(spans[-1][-1]) + 1:
            spans[-1].append(release)
        else:
            spans.append([release])
    text = ", ".join(s[0] if len(s) == 1 else f"{s[0]} to {s[-1]}" for s in spans)
    return [f"SGLang {text}"]


def explain_lines(matrix: Matrix, name: str) -> list[str]:
    backend = matrix.backend(name)
    sources = _Sources()
    lines = [f"{name} (--attention-backend {name})", "", *_summary(matrix, backend, sources)]
    lines += _rows(matrix, backend, sources)
    rules = _rules(matrix, backend, sources)
    lines += ["", "Rules that mention it:"] + [f"  {line}" for line in rules or ["none"]]
    lines += ["", "When SGLang builds it (after start-up, after the weights load):"]
    lines += [f"  {line}" for line in _build(name)]
    verify = _verify(name)
    if verify:
        lines += ["", "When speculative decoding verifies on it (after the weights load):"]
        lines += [f"  {line}" for line in verify]
    prefill = _first_prefill(name)
    if prefill:
        lines += ["", "When its first prefill runs (after the weights load):"]
        lines += [f"  {line}" for line in prefill]
    lines += ["", "Default:"] + [f"  {line}" for line in _defaults(name)]
    lines += ["", "Accepted by:"] + [f"  {line}" for line in _releases(name)]
    lines += ["", "Sources:", *sources.lines()]
    return lines


def explain_json(matrix: Matrix, name: str) -> dict[str, Any]:
    """The export's entries about one backend: the backend, its rows and its defaults."""
    from compat.publish.export import matrix_export
    from compat.publish.export_releases import release
    from compat.releases import NEWEST, RELEASE_NAMES

    exported = matrix_export(matrix)
    documented = exported["documented"]
    rows = {
        table["arch"]: next((r for r in table["rows"] if r["backend"] == name), None)
        for table in documented["tables"]
    }
    newest = release(NEWEST)
    return {
        "backend": next(b for b in documented["backends"] if b["name"] == name),
        "rows": rows,
        "defaults": [
            d for d in (*newest["defaults"], *newest["model_overrides"]) if d["backend"] == name
        ],
        "releases": [r for r in RELEASE_NAMES if name in release(r)["backends"]],
        "evidence": exported["evidence"],
    }
