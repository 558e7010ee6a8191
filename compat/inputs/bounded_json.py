"""Read a JSON object from a file that may be hostile: bounded in size, depth and numbers.

`json.loads` alone crashes or stalls on what a hand-made or damaged file can hold: nesting
thousands deep (RecursionError), an integer of thousands of digits (ValueError), a gigabyte
of text (memory and seconds), millions of tiny arrays within that size (seconds and hundreds
of megabytes), a lone surrogate escape (a string no stream can print). Each is refused here
with one line naming the limit, the values counted before any is parsed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_BYTES = 16 * 1024 * 1024
"""A file larger than this is refused before it is read (16 MiB)."""
MAX_NESTING = 64
"""Arrays and objects nested deeper than this are refused."""
MAX_INTEGER_DIGITS = 100
"""An integer literal with more digits than this is refused."""
MAX_VALUES = 250_000
"""A file with more arrays, objects and values in them than this is refused before parsing.

A model config holds a few hundred; the largest label maps a few ten thousand. Parsing
this many takes about 0.1 s; 16 MiB of one-element arrays (four million) took seconds.
"""

# A \uD800-\uDFFF escape in the text; only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# One token of the value count, in a text whose escapes are gone: an array or object
# opening, a comma, a string (an unterminated one runs to the end of the text) or a run of
# anything else. The alternatives start on different bytes and each is one character class,
# so the scan never backtracks: one linear pass (a pattern that read escapes retried an
# unterminated string from every quote in it: quadratic, 143 s for 0.68 MB of `\\"`).
_TOKEN = re.compile(rb'[,\[{]|"[^"]*(?:"|\Z)|[^,\[{"]+')
_QUOTE = ord('"')
_STRUCTURE = frozenset(b",[{")


class BoundedJsonError(ValueError):
    """The file is not a JSON object within the limits; the message is one line."""


def load_object(file: Path) -> dict[str, Any]:
    """The JSON object in `file`, or BoundedJsonError saying what is wrong with it."""
    try:
        raw = read_bounded(file)
    except OSError as error:
        raise BoundedJsonError(f"cannot read it ({error.strerror or error})") from None
    _count_values(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BoundedJsonError(
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})"
        ) from None
    try:
        data = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as error:
        raise BoundedJsonError(
            f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    except RecursionError:
        raise BoundedJsonError(_TOO_DEEP) from None
    if not isinstance(data, dict):
        raise BoundedJsonError(f"expected a JSON object at the top level, got {json_type(data)}")
    _check_values(data, surrogates=_SURROGATE_ESCAPE.search(text) is not None)
    return data


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_TOO_DEEP = f"nested deeper than {MAX_NESTING} levels"


def read_bounded(file: Path, limit: int = MAX_BYTES, what: str = "a config file") -> bytes:
    """The file's bytes, refusing a non-regular or oversized file before reading it.

    Raises OSError when it cannot be opened, BoundedJsonError for the rest.
    """
    # O_NONBLOCK: a FIFO swapped in after the caller's checks must not hang the open.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(file, flags), "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise BoundedJsonError("not a regular file")
        if status.st_size > limit:
            raise BoundedJsonError(_too_large(status.st_size, limit, what))
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise BoundedJsonError(_too_large(len(data), limit, what))
    return data


def _too_large(size: int, limit: int, what: str) -> str:
    return (
        f"{size} bytes is over the {limit // (1024 * 1024)} MiB limit ({what} is a few "
        "kilobytes: is this the right file?)"
    )


def _count_values(raw: bytes) -> None:
    """Refuse more than MAX_VALUES arrays, objects and values, counted in C before parsing.

    Every value after the first of its array or object follows a comma, and each array
    and object opens with a bracket, so these characters outside strings bound the count.
    """
    if sum(map(raw.count, (b",", b"[", b"{"))) <= MAX_VALUES:
        return  # the common case: even counting inside strings, it is within the limit
    # A run of other bytes lies between two counted tokens, and a JSON text holds at most
    # two strings (a key and its value) per comma or bracket: stopping at these limits
    # bounds the loop at a few times MAX_VALUES tokens, however the 16 MiB are made.
    # An escape is a backslash and the byte after it, paired from the left: dropping `\\`
    # pairs, then `\"` ones, leaves every quote that opens or closes a string (in C, linear).
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    count = strings = 0
    for token in _TOKEN.finditer(plain):
        first = plain[token.start()]
        if first == _QUOTE:
            strings += 1
            if strings > 2 * MAX_VALUES:
                raise BoundedJsonError(
                    f"strings over the limit of {2 * MAX_VALUES} (a model config has a few "
                    "hundred: is this the right file?)"
                )
        elif first in _STRUCTURE:
            count += 1
            if count > MAX_VALUES:
                raise BoundedJsonError(
                    f"arrays, objects and values over the limit of {MAX_VALUES} "
                    "(a model config has a few hundred: is this the right file?)"
                )


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        # Raised from inside the parser, which passes it through unchanged.
        raise BoundedJsonError(f"an integer of {digits} digits (the limit is {MAX_INTEGER_DIGITS})")
    return int(text)


def _check_values(data: dict[str, Any], *, surrogates: bool) -> None:
    """Refuse excessive nesting and (when the text had such escapes) lone surrogates."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        items: list[object]
        if isinstance(value, dict):
            items = [*value.keys(), *value.values()] if surrogates else [*value.values()]
        elif isinstance(value, list):
            items = value
        else:
            if surrogates and isinstance(value, str):
                _refuse_surrogate(value)
            continue
        if depth > MAX_NESTING:
            raise BoundedJsonError(_TOO_DEEP)
        stack.extend((item, depth + 1) for item in items)


def _refuse_surrogate(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise BoundedJsonError(
            f"a string holds the lone surrogate escape \\u{ord(text[error.start]):04x}, which "
            "is not a character; fix the escape"
        ) from None
