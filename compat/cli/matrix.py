"""`compat matrix`: the MHA and MLA tables in the terminal, or the backends a setup allows.

With no filter it prints the tables. With any filter it asks the guard about every backend
(`--attention-backend NAME` plus the filters) and lists exactly those it accepts, with the
reasons it refuses the others.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

from compat.claim.matrix import ArchStatus, Matrix
from compat.cli.json_errors import json_text
from compat.guard.check import check
from compat.guard.findings import UNMODELLED_RELEASE_RULE, unmodelled_release_finding
from compat.guard.report import Report
from compat.inputs.assemble import InputError, hardware_fields
from compat.inputs.config import (
    DEFAULT_SPECULATIVE_ALGORITHM,
    AttentionConfig,
    InputProblem,
    InvalidConfigError,
    speculation_with_topk,
)
from compat.inputs.flags import KV_CACHE_DTYPE, PAGE_SIZE, SPECULATIVE_EAGLE_TOPK, Flag
from compat.inputs.gpus import gpu_named
from compat.releases import release_matrix
from compat.vocab.terms import Arch

SPECULATIVE_ALGORITHM = DEFAULT_SPECULATIVE_ALGORITHM
"""Set when `--speculative-eagle-topk` is given: topk means nothing without an algorithm."""
# The SGLang flags that filter, with the placeholder and help `compat matrix --help` shows.
_SGLANG_FILTERS: tuple[tuple[Flag, str, str | None], ...] = (
    (KV_CACHE_DTYPE, "DTYPE", None),
    (PAGE_SIZE, "N", None),
    (SPECULATIVE_EAGLE_TOPK, "K", f"implies --speculative-algorithm {SPECULATIVE_ALGORITHM}"),
)
# The AttentionConfig fields of every filter passed to the guard as given, in --help's order.
_FILTERS = (
    "platform",
    "compute_capability",
    *(flag.field for flag, _, _ in _SGLANG_FILTERS),
    "sglang_version",
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "matrix",
        help="print the capability tables, or the backends a setup allows",
        description="Print the MHA and MLA tables. With any filter, check every backend "
        "against the filters with the guard and list which pass and why the others fail.",
    )
    parser.add_argument(
        "--attention-arch", choices=[arch.value for arch in Arch], help="show one table"
    )
    parser.add_argument(
        "--model-config",
        metavar="PATH",
        help="a Hugging Face config.json (or its directory): sets the architecture and the "
        "model features the guard checks",
    )
    parser.add_argument("--platform", metavar="{cuda,rocm,npu,xpu,cpu}")
    parser.add_argument("--compute-capability", metavar="CC", help="10.0, sm100, 100 or a GPU name")
    parser.add_argument(
        "--gpu",
        metavar="NAME",
        help="a GPU name (H100, B200, MI300X, ...): sets platform and compute capability, as "
        "for compat check",
    )
    for flag, metavar, text in _SGLANG_FILTERS:
        kind = int if flag.integer else None
        parser.add_argument(flag.option, dest=flag.field, type=kind, metavar=metavar, help=text)
    parser.add_argument(
        "--sglang-version",
        metavar="X.Y.Z",
        help="the release whose backends and start-up rules to use (default: the installed "
        "one, else the newest known)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    fields: dict[str, Any] = {}
    for name in _FILTERS:
        value = getattr(args, name)
        if value is not None:
            fields[name] = value
    if args.speculative_eagle_topk is not None:
        fields.update(speculation_with_topk(args.speculative_eagle_topk))
    archs = tuple(Arch)
    problems: list[str] = []  # every problem of the input is reported at once
    if args.gpu is not None or args.compute_capability is not None:
        try:
            hardware = hardware_fields(args.gpu, args.compute_capability)
        except InputError as error:
            problems.append(str(error))
        else:
            given = fields.get("platform")
            if given is not None and given != hardware["platform"]:
                problems.append(
                    f"--platform {given} contradicts --gpu {args.gpu} "
                    f"({hardware['platform']}); give one"
                )
            fields.update(hardware)
    if args.model_config is not None:
        from compat.inputs.config_file import ModelConfigError
        from compat.inputs.model_config import load_model_facts

        try:
            facts = load_model_facts(args.model_config)
        except ModelConfigError as error:
            problems.append(f"--model-config: {error}")
        else:
            fields = {**facts.config_fields(), **fields}
            archs = (facts.attention_arch,)
    if args.attention_arch is not None:
        fields["attention_arch"] = args.attention_arch
    filtered = bool(set(fields) - {"sglang_version"}) or args.attention_arch is not None
    invalid: tuple[InputProblem, ...] = ()
    try:
        probe = AttentionConfig(**{"attention_arch": "mha", **fields})
    except InvalidConfigError as error:
        invalid = error.problems
    if problems or invalid:
        if args.json:
            from compat.cli.json_errors import print_json_error

            print_json_error(InputError("; ".join([*problems, *map(str, invalid)]), invalid))
        for problem in [*problems, *invalid]:
            print(f"compat matrix: error: {problem}", file=sys.stderr)
        return 2
    if args.attention_arch is not None:
        archs = (Arch(args.attention_arch),)
    release = probe.parsed.release
    matrix = release_matrix(release.release)
    if not filtered:
        return _print_tables(matrix, args.json)
    verdicts = {arch: judge(matrix, arch, fields) for arch in archs}
    if args.json:
        data = _verdicts_json(fields, verdicts)
        print(json_text({**data, "unmodelled_sglang_version": probe.parsed.unmodelled_release}))
        return 0
    if probe.parsed.unmodelled_release is not None:  # said once, not on every backend's row
        said = unmodelled_release_finding(probe.parsed.unmodelled_release, release.release)
        print(f"warning: {said.message}\n")
    gpu = None if args.gpu is None else gpu_named(args.gpu).label
    _print_verdicts(matrix, fields, verdicts, gpu)
    return 0


def judge(matrix: Matrix, arch: Arch, fields: dict[str, Any]) -> dict[str, Report]:
    """The guard's report for `--attention-backend NAME` plus `fields`, for every backend
    the release accepts."""
    offered = AttentionConfig(**{**fields, "attention_arch": arch.value}).parsed.release
    return {
        name: check(
            AttentionConfig(**{**fields, "attention_backend": name, "attention_arch": arch.value}),
            matrix,
        )
        for name in matrix.backend_names
        if name in offered.backend_set
    }


# -- text layout ----------------------------------------------------------------------------


def display_width(text: str) -> int:
    """Terminal columns `text` takes: wide glyphs count 2, a variation selector widens."""
    width = 0
    for char in text:
        if char == "\ufe0f":
            width += 1
        elif unicodedata.combining(char) or unicodedata.category(char) == "Cf":
            continue
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


def aligned(rows: Sequence[Sequence[str]], gap: int = 2) -> list[str]:
    """Rows of cells as lines with every column padded to its widest cell."""
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        (" " * gap).join(_pad(cell, widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in rows
    ]


def table_lines(matrix: Matrix, arch: Arch, only: frozenset[str] | None = None) -> list[str]:
    """One table as aligned text; `only` keeps just those backends' rows."""
    table = matrix.table(arch)
    header = ["Backend", "--attention-backend", *(text for _, text in table.headers)]
    body = [
        [row.display_name, row.backend, *(row.cells[column].symbol for column in table.columns)]
        for row in table.rows
        if only is None or row.backend in only
    ]
    lines = [table.title, ""]
    if not body:
        return [*lines, "  (no row)"]
    text = aligned([header, *body])
    rule = "-" * max(display_width(line) for line in text)
    return [*lines, text[0], rule, *text[1:]]


def _without_row(matrix: Matrix, arch: Arch) -> list[str]:
    lines = []
    for status in (ArchStatus.REFUSED, ArchStatus.UNDOCUMENTED):
        names = [n for n in matrix.backend_names if matrix.arch_status(n, arch) is status]
        if names:
            lines.append(f"No row, {status.label}: {', '.join(names)}")
    return lines


def _print_tables(matrix: Matrix, as_json: bool) -> int:
    if as_json:
        from compat.publish.export import matrix_export

        exported = matrix_export(matrix)
        payload = {"tables": exported["documented"]["tables"], "evidence": exported["evidence"]}
        print(json_text(payload))
        return 0
    blocks = [
        "\n".join([*table_lines(matrix, table.arch), "", *_without_row(matrix, table.arch)])
        for table in matrix.tables
    ]
    print("\n\n".join(blocks))
    return 0


def _setting(fields: dict[str, Any], gpu: str | None = None) -> str:
    # A GPU stands for the platform and compute capability it set.
    hidden = {"attention_arch", *(("platform", "compute_capability") if gpu else ())}
    shown = [f"--gpu {gpu}"] if gpu else []
    shown += [
        f"--{name.replace('_', '-')} {value}"
        for name, value in fields.items()
        if not isinstance(value, bool) and name not in hidden
    ]
    shown += [name.replace("_", " ") for name, value in fields.items() if value is True]
    assumed = [] if "platform" in fields else ["platform cuda (default)"]
    return ", ".join(shown + assumed) or "defaults"


def _print_verdicts(
    matrix: Matrix,
    fields: dict[str, Any],
    verdicts: dict[Arch, dict[str, Report]],
    gpu: str | None = None,
) -> None:
    blocks = []
    for arch, reports in verdicts.items():
        accepted = [name for name, report in reports.items() if report.ok]
        lines = [
            f"{arch.label} models with {_setting(fields, gpu)}: the guard accepts "
            f"{len(accepted)} of {len(reports)} backends",
            "",
            *table_lines(matrix, arch, frozenset(accepted)),
            "",
        ]
        width = max(len(name) for name in reports)
        for name, report in reports.items():
            if report.ok:
                notes = sorted({f.rule for f in report.warnings} - {UNMODELLED_RELEASE_RULE})
                extra = f"  warnings: {', '.join(notes)}" if notes else ""
                lines.append(f"ok       {name.ljust(width)}{extra}".rstrip())
        for name, report in reports.items():
            if not report.ok:
                for index, finding in enumerate(report.errors):
                    label = f"refused  {name.ljust(width)}" if index == 0 else " " * (width + 9)
                    lines.append(f"{label}  [{finding.rule}] {finding.message}")
        blocks.append("\n".join(lines))
    print("\n\n".join(blocks))


def _verdicts_json(
    fields: dict[str, Any], verdicts: dict[Arch, dict[str, Report]]
) -> dict[str, Any]:
    return {
        "filters": {name: value for name, value in fields.items() if name != "attention_arch"},
        "archs": [
            {
                "attention_arch": arch.value,
                "accepted": [
                    {
                        "backend": name,
                        "warnings": [f.to_dict() for f in report.warnings],
                    }
                    for name, report in reports.items()
                    if report.ok
                ],
                "refused": [
                    {"backend": name, "errors": [f.to_dict() for f in report.errors]}
                    for name, report in reports.items()
                    if not report.ok
                ],
            }
            for arch, reports in verdicts.items()
        ],
    }
