"""A small Markdown table reader for the tests, independent of the `compat` package.

It knows just enough Markdown to read the pipe tables of a page: a table belongs to the
nearest heading above it, `\\|` is a literal pipe, and the delimiter row is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(?:\{[^}]*\})?\s*$")
_DELIMITER_CELL = re.compile(r"^:?-{3,}:?$")


# A disputed cell's marker (`compat audit`): read apart from the cell, so that the cell reads
# as the page's word and the marker's tooltip as what the release's code does.
_DISPUTE = re.compile(r'^(?P<cell>.*?)\s*<abbr class="dispute" title="(?P<title>[^"]*)">‡</abbr>$')


@dataclass(frozen=True)
class MarkdownTable:
    heading: str
    header: list[str]
    rows: list[list[str]]
    marks: dict[tuple[int, int], str] = field(default_factory=dict)
    """(row, column) -> the tooltip of a disputed cell's marker (HTML entities as written)."""


def split_row(line: str) -> list[str]:
    """The cells of one `| a | b |` line, stripped, with `\\|` read as a pipe."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells = re.split(r"(?<!\\)\|", text)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _is_delimiter(cells: list[str]) -> bool:
    return bool(cells) and all(_DELIMITER_CELL.match(cell) for cell in cells)


def read_tables(markdown: str) -> list[MarkdownTable]:
    """Every pipe table of `markdown`, with the text of the heading it sits under."""
    tables: list[MarkdownTable] = []
    heading = ""
    lines = markdown.splitlines()
    index = 0
    in_fence = False
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence:
            index += 1
            continue
        match = _HEADING.match(line)
        if match:
            heading = match.group(2)
            index += 1
            continue
        is_table = (
            line.lstrip().startswith("|")
            and index + 1 < len(lines)
            and _is_delimiter(split_row(lines[index + 1]))
        )
        if is_table:
            header = split_row(line)
            rows: list[list[str]] = []
            marks: dict[tuple[int, int], str] = {}
            index += 2
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                cells = split_row(lines[index])
                for column, cell in enumerate(cells):
                    mark = _DISPUTE.match(cell)
                    if mark:
                        cells[column] = mark["cell"]
                        marks[len(rows), column] = mark["title"]
                rows.append(cells)
                index += 1
            tables.append(MarkdownTable(heading, header, rows, marks))
            continue
        index += 1
    return tables


def table_under(markdown: str, heading: str) -> MarkdownTable:
    """The single table under the heading whose text is `heading`."""
    found = [table for table in read_tables(markdown) if table.heading == heading]
    if len(found) != 1:
        raise LookupError(f"expected one table under {heading!r}, found {len(found)}")
    return found[0]
