"""Small text helpers: plain terminal text from the matrix's Markdown, and did-you-mean hints."""

from __future__ import annotations

import re
from collections.abc import Iterable

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def plain(text: str) -> str:
    """Drop code spans' backticks and bold markers; write a link as `text (url)`."""
    text = _LINK.sub(r"\1 (\2)", text)
    return text.replace("`", "").replace("**", "")


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice most like `word` (difflib's similarity ratio at least `cutoff`), if any."""
    import difflib  # only on error paths: importing it costs start-up time

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(suggestion: str | None, *, quoted: bool = False) -> str:
    """`; did you mean X?` to end a message with, or nothing without a suggestion."""
    if suggestion is None:
        return ""
    return f"; did you mean {suggestion!r}?" if quoted else f"; did you mean {suggestion}?"


def join_or(items: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`: the way the tables list alternatives."""
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} or {items[1]}"
    return ", ".join(items[:-1]) + f" or {items[-1]}"


# What a word processor or chat client makes of ASCII: `--` becomes an en or em dash, quotes
# become typographic ones. A shell reads none of them as a flag's dashes or as quotes.
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
UNICODE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
"""Hyphens, en and em dashes, the minus sign: what `--` may have been typeset into."""


def ascii_spelling(word: str) -> str | None:
    """`word` as it was typed before it was typeset (`\u2013attention-backend` is
    `--attention-backend`, typographic quotes are ASCII ones), or None if it has nothing
    typeset: a leading run of dashes with any Unicode one in it is a flag's `--`."""
    body = word.lstrip("-" + UNICODE_DASHES)
    leading = word[: len(word) - len(body)]
    dashes = "--" if leading.strip("-") else leading
    spelled = dashes + body.replace("\u2013", "-").replace("\u2014", "-").translate(_TYPOGRAPHIC)
    return None if spelled == word else spelled
