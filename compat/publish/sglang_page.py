"""SGLang's own attention page, its tables part: the MHA and MLA tables and the FA4 + KV4 note,
in the format of the release's page, for SGLang to adopt and to check against.

The page moved to a Mintlify site (`attention_backend.mdx`, tables as JSX `<table>`
elements); before that it was Markdown (`attention_backend.md`). Which one a release has is
read from where its tables come from (the tables' evidence), never typed per release. The
cells are the release's folded matrix; the note's partners are computed from its FP4 cells.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

from compat.claim.matrix import Matrix, Row, Table
from compat.claim.words import code
from compat.releases import release_matrix
from compat.releases.doc import read_from_code
from compat.vocab.terms import Arch, Term


class PageFormat(Term):
    MINTLIFY = "mdx"
    MARKDOWN = "md"


def page_format(matrix: Matrix) -> PageFormat:
    """The format of the page the release's tables come from."""
    url = matrix.tables[0].evidence.url or ""
    return PageFormat.MINTLIFY if url.endswith(".mdx") else PageFormat.MARKDOWN


def heading(arch: Arch) -> str:
    return f"### {arch.label} Backends"


_HEAD = (
    'textAlign: "left", padding: "10px 12px", fontWeight: 700, whiteSpace: "nowrap", '
    'backgroundColor: "rgba(255,255,255,{shade})"'
)
_CELL = 'padding: "9px 12px", {bold}backgroundColor: "rgba(255,255,255,{shade})"'
_SHADES = ("0.02", "0.05")  # columns alternate two shades, as SGLang's tables do


def page_rows(table: Table) -> tuple[Row, ...]:
    """The rows SGLang's page has: not those the package read from a release's code alone
    (a backend the page never listed; its cells are on this package's pages)."""
    return tuple(
        row
        for row in table.rows
        if not all(
            cell.evidence is not None and read_from_code(cell.evidence)
            for cell in row.cells.values()
        )
    )


def _jsx_text(text: str) -> str:
    """Text safe inside a JSX element: what MDX would read as a tag or an expression."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace("{", "&#123;")
        .replace("}", "&#125;")
    )


def _jsx_table(table: Table) -> Iterator[str]:
    width = 100 // (len(table.headers) + 1)
    yield '<table style={{width: "100%", borderCollapse: "collapse", tableLayout: "fixed"}}>'
    yield "  <colgroup>"
    first = 100 - width * len(table.headers)
    for share in (first, *([width] * len(table.headers))):
        yield f'    <col style={{{{width: "{share}%"}}}} />'
    yield "  </colgroup>"
    yield "  <thead>"
    yield '    <tr style={{borderBottom: "2px solid #d55816"}}>'
    for number, text in enumerate(("Backend", *(header for _, header in table.headers))):
        style = _HEAD.format(shade=_SHADES[number % 2])
        yield f"      <th style={{{{{style}}}}}>**{_jsx_text(text)}**</th>"
    yield "    </tr>"
    yield "  </thead>"
    yield "  <tbody>"
    for row in page_rows(table):
        yield "    <tr>"
        cells = (f"**{row.display_name}**", *(row.cells[c].symbol for c in table.columns))
        for number, text in enumerate(cells):
            bold = "fontWeight: 500, " if number == 0 else ""
            style = _CELL.format(bold=bold, shade=_SHADES[number % 2])
            yield f"      <td style={{{{{style}}}}}>{_jsx_text(text)}</td>"
        yield "    </tr>"
    yield "  </tbody>"
    yield "</table>"


def _markdown_table(table: Table) -> Iterator[str]:
    headers = ("Backend", *(header for _, header in table.headers))
    yield f"| {' | '.join(f'**{h}**' for h in headers)} |"
    yield "|" + "---|" * len(headers)
    for row in page_rows(table):
        cells = (f"**{row.display_name}**", *(row.cells[c].symbol for c in table.columns))
        yield f"| {' | '.join(cells)} |"


def _note(matrix: Matrix, form: PageFormat) -> Iterator[str]:
    """The FA4 + KV4 note: the decode partners, computed from the FP4 cells."""
    for rule in matrix.pairing_rules:
        spellings = " or ".join(code(d.value) for d in matrix.kv_dtypes(rule.kv_family))
        partners = "; ".join(
            f"{arch.label}: {', '.join(code(n) for n in matrix.decode_partners(rule, arch))}"
            for arch in Arch
        )
        text = (
            f"With `--kv-cache-dtype` {spellings}, {code(rule.prefill_backend)} serves prefill "
            f"only: set `--decode-attention-backend` to a backend that reads that cache "
            f"({partners})."
        )
        if form is PageFormat.MINTLIFY:
            yield from ("<Note>", text, "</Note>", "")
        else:
            yield from (f"> **Note:** {text}", "")


def render(release: str) -> str:
    """The tables part of SGLang's page of `release`, in that page's format."""
    matrix = release_matrix(release)
    form = page_format(matrix)
    lines: list[str] = []
    for table in matrix.tables:
        lines += [heading(table.arch), ""]
        lines += _jsx_table(table) if form is PageFormat.MINTLIFY else _markdown_table(table)
        lines.append("")
    lines += _note(matrix, form)
    return "\n".join(lines).rstrip("\n") + "\n"


@dataclass(frozen=True)
class PageTable:
    """A table read back from a page: its header and rows of cell text, markup removed."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


_JSX_CELL = re.compile(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", re.DOTALL)
_ROW = re.compile(r"<tr\b[^>]*>(.*?)</tr>", re.DOTALL)


def _plain(text: str) -> str:
    return html.unescape(text.strip()).strip("*").strip()


def read_tables(text: str) -> dict[Arch, PageTable]:
    """The MHA and MLA tables of a page, in either format (the first table under each
    heading); an architecture whose heading is missing is left out."""
    found: dict[Arch, PageTable] = {}
    for arch in Arch:
        start = text.find(heading(arch))
        if start < 0:
            continue
        body = text[start + len(heading(arch)) :]
        end = body.find("\n#")
        body = body if end < 0 else body[:end]
        if "<table" in body:
            table = body[body.index("<table") : body.index("</table>")]
            rows = [[_plain(c) for c in _JSX_CELL.findall(r)] for r in _ROW.findall(table)]
        else:
            lines = [line.strip() for line in body.splitlines() if line.strip().startswith("|")]
            rows = [[_plain(c) for c in line.strip("|").split("|")] for line in lines]
            rows = [r for r in rows if not all(set(c) <= set(":-") for c in r)]
        if rows:
            found[arch] = PageTable(tuple(rows[0]), tuple(tuple(r) for r in rows[1:]))
    return found


def differences(expected: str, actual: str) -> list[str]:
    """Every cell where `actual`'s tables differ from `expected`'s, one line each."""
    want, got = read_tables(expected), read_tables(actual)
    problems: list[str] = []
    for arch, table in want.items():
        other = got.get(arch)
        if other is None:
            problems.append(f"{heading(arch)}: no such table")
            continue
        if other.header != table.header:
            problems.append(f"{heading(arch)}: header {other.header} != {table.header}")
            continue
        theirs = {row[0]: row for row in other.rows}
        for row in table.rows:
            found = theirs.pop(row[0], None)
            if found is None:
                problems.append(f"{heading(arch)}: no row for {row[0]}")
                continue
            for column, (cell, seen) in enumerate(zip(row, found, strict=False)):
                if cell != seen:
                    header = table.header[column]
                    problems.append(f"{heading(arch)}: {row[0]}, {header}: {seen!r}, not {cell!r}")
        problems += [f"{heading(arch)}: row {name} is not in the matrix" for name in theirs]
    return problems
