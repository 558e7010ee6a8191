"""How the finder's data is laid out: compact tables of the guard's answers, decoded by the
page's script (`docs/javascripts/finder.js`) and by the tests' own reader.

The layout only encodes what `compat.publish.finder` computed with the guard; it decides
nothing. Numbers are written in `DIGITS` (base 64), as few digits as a table's size
allows. Texts are stored once, as sequences of words (each word with its trailing
space): the guard's messages repeat their words, so a release's texts take about 35 KB
instead of 85 KB.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
"""The alphabet of the data's numbers (base 64, safe in JSON and URLs)."""
_WORD = re.compile(r"\S*\s*|\s+")

Key = tuple[int, str, str, str]  # a finding: severity rank, rule, message, phases joined by +
Cell = tuple[int, tuple[Key, ...]]  # a column of a combination: verdict, findings errors first


@dataclass(frozen=True)
class Row:
    """Everything the finder shows for one combination."""

    cells: tuple[Cell, ...]
    refused: str
    """Per pair prefill, "1" where the prefill backend is refused whatever the partner."""
    defaults: tuple[str | None, str | None]
    fixes: tuple[tuple[str, str], ...] | None
    """(summary, reason) of the guard's first fixes, where no backend passes."""


def intern(table: dict[Any, int], value: Any) -> int:
    """`value`'s index in `table`, a new one (in order of first appearance) if need be."""
    return table.setdefault(value, len(table))


def width(count: int) -> int:
    """Digits per number for a table of `count` entries: 1 up to 64 entries, 2 up to 4096."""
    return next(digits for digits in itertools.count(1) if len(DIGITS) ** digits >= count)


def encode(numbers: Iterable[int], digits: int) -> str:
    base, places = len(DIGITS), range(digits - 1, -1, -1)
    return "".join(DIGITS[n // base**place % base] for n in numbers for place in places)


def finding_order(rows: Iterable[Row]) -> list[Key]:
    """Every finding, numbered so that each cell lists its findings in increasing id: a
    finding comes after every finding the guard ever reports just before it."""
    import graphlib

    sorter: graphlib.TopologicalSorter[Key] = graphlib.TopologicalSorter()
    seen: set[tuple[Key, ...]] = set()
    for keys in (keys for row in rows for _, keys in row.cells if keys not in seen):
        seen.add(keys)
        for position, key in enumerate(keys):
            sorter.add(key, *keys[max(position - 1, 0) : position])
    try:
        return list(sorter.static_order())
    except graphlib.CycleError as error:
        raise ValueError("finder data: the guard reports some findings in both orders") from error


def cell_tables(rows: list[Row], pages: int, topks: int, ids: dict[Key, int]) -> dict[str, Any]:
    """`widths`, `sets`, `tuples`, `patterns`, `groups` and `results` (see `finder_data`).

    A block is the `pages * topks` combinations of one hardware class and dtype (page
    size slower, topk faster, as in the combination index). Per block and column, a cell's
    findings are split into those every cell of the block has, those every topk of its page
    size has, those every page size of its topk has, and the rest; each part is a set of
    finding ids, interned, and so are the tuples of sets and the whole group. The guard's
    findings mostly follow one axis (an FP4 cache, a page size, a top-k), so few groups
    repeat many times: 0.5.23's cell tables take 74 KB this way, 140 KB as one set per
    block and a tuple of per-cell parts.
    """
    sets: dict[tuple[int, ...], int] = {}
    tuples: dict[tuple[int, ...], int] = {}
    patterns: dict[str, int] = {}
    groups: dict[tuple[int, ...], int] = {}
    results = []
    block = pages * topks
    for start in range(0, len(rows), block):
        cells = rows[start : start + block]
        for column in range(len(cells[0].cells)):
            found = [{ids[key] for key in row.cells[column][1]} for row in cells]
            shared = set.intersection(*found)
            by_page = [
                set.intersection(*found[p * topks : (p + 1) * topks]) - shared for p in range(pages)
            ]
            by_topk = [set.intersection(*found[t::topks]) - shared for t in range(topks)]
            rest = [
                found[p * topks + t] - shared - by_page[p] - by_topk[t]
                for p in range(pages)
                for t in range(topks)
            ]
            parts = [
                intern(tuples, tuple(intern(sets, tuple(sorted(x))) for x in part))
                for part in (by_page, by_topk, rest)
            ]
            verdicts = "".join(str(row.cells[column][0]) for row in cells)
            group = (intern(sets, tuple(sorted(shared))), *parts, intern(patterns, verdicts))
            results.append(intern(groups, group))
    widths = {
        "finding": width(len(ids)),
        "set": width(len(sets)),
        "tuple": width(len(tuples)),
        "pattern": width(len(patterns)),
        "group": width(len(groups)),
    }
    order = ("set", "tuple", "tuple", "tuple", "pattern")
    return {
        "widths": widths,
        "sets": [encode(numbers, widths["finding"]) for numbers in sets],
        "tuples": [encode(numbers, widths["set"]) for numbers in tuples],
        "patterns": list(patterns),
        "groups": [
            "".join(encode((n,), widths[table]) for n, table in zip(g, order, strict=True))
            for g in groups
        ],
        "results": encode(results, widths["group"]),
    }


class Texts:
    """The texts of one release's data, each interned once and stored as word numbers."""

    def __init__(self) -> None:
        self._texts: dict[str, int] = {}

    def number(self, text: str) -> int:
        return intern(self._texts, text)

    def tables(self) -> dict[str, Any]:
        """`words` (each word once) and `texts` (each text as its word numbers, `widths.word`
        digits each); `widths.text` digits name a text elsewhere in the data."""
        words: dict[str, int] = {}
        split = [[intern(words, w) for w in _WORD.findall(text) if w] for text in self._texts]
        digits = width(len(words))
        return {
            "words": list(words),
            "texts": [encode(numbers, digits) for numbers in split],
            "widths": {"word": digits, "text": width(len(self._texts))},
        }


def encode_findings(ids: dict[Key, int], texts: Texts, text_width: int) -> str:
    """Every finding in id order, as one string: per finding its severity's digit, then its
    rule, message and phases (joined by +) as `text_width`-digit text numbers."""
    return "".join(
        DIGITS[severity] + encode((texts.number(t) for t in rmp), text_width)
        for severity, *rmp in ids
    )
