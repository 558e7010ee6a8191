"""SGLang's own `--config FILE`: launch options in a YAML file, read as the release reads it.

SGLang's `prepare_server_args` (sglang/srt/server_args.py) hands the arguments to
`ConfigArgumentMerger.merge_config_with_args` (sglang/srt/server_args_config_parser.py, from
0.5.19 sglang/srt/utils/server_args_config_parser.py) when one argument is exactly
`--config`. The merger turns the file's mapping into arguments (`key: value` becomes
`--key value`) and puts them before the command line's, so the command line wins where both
set a flag (argparse keeps the last value). `--config=FILE`, or an abbreviation of the flag,
is accepted by the parser but the file is never read. Here the same arguments are built, so
that the file's flags are judged exactly as the command line's are.

Not modelled: from 0.5.8 the merger refuses keys of flags whose argparse action is neither
`store` nor `store_true` (e.g. `store_false`); the flag lists keep arities, not actions, and
no flag the guard models is such a flag.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.engine.parser.encoding import release_key
from compat.inputs.bounded_json import BoundedJsonError, read_bounded

CONFIG_FLAG = "--config"
SUFFIXES = (".yaml", ".yml")
MAX_CONFIG_BYTES = 1024 * 1024
"""A launch config over 1 MiB is refused before it is read (it holds a few dozen options)."""
MAX_CONFIG_VALUES = 10_000
"""Values in the file, every YAML alias expanded: more is refused (an alias bomb)."""

# The releases whose merger changed what a value becomes, each read from that release's
# `ConfigArgumentMerger`: from 0.5.8 `_add_boolean_arg` writes `--key true|false` for a flag
# that is not a switch (0.5.7: the bare flag for true, nothing for false, for every flag);
# from 0.5.14 `_convert_config_to_args` writes a mapping as JSON (before: Python's str()).
BOOLEAN_VALUES_FROM = "0.5.8"
MAPPINGS_AS_JSON_FROM = "0.5.14"


class LaunchFileError(ValueError):
    """The `--config` file cannot be read as SGLang reads it; the message is one line."""


@dataclass(frozen=True)
class LaunchFile:
    """The file a launch command names with `--config`, as arguments."""

    path: str
    arguments: tuple[str, ...]
    """The arguments SGLang builds from the file, in its order."""


def merge_config_file(
    argv: Sequence[str], release: str, switches: frozenset[str]
) -> tuple[list[str], LaunchFile | None]:
    """`argv` (the arguments after the program) as the release's parser receives them.

    `switches` are the release's flags that take no value. Raises LaunchFileError where
    the release's own merger raises (two `--config`, no file, not YAML, not a mapping, ...).
    """
    places = [index for index, token in enumerate(argv) if token == CONFIG_FLAG]
    if not places:
        return list(argv), None
    if len(places) > 1:
        raise LaunchFileError(
            f"{CONFIG_FLAG} is given {len(places)} times; SGLang {release} reads one file"
        )
    place = places[0]
    if place == len(argv) - 1:
        raise LaunchFileError(f"{CONFIG_FLAG} has no file after it")
    path = argv[place + 1]
    arguments = tuple(_arguments(path, _load(path), release, switches))
    return [*arguments, *argv[:place], *argv[place + 2 :]], LaunchFile(path, arguments)


def _load(path: str) -> dict[Any, Any]:
    """The mapping the file holds, read with YAML's safe loader as SGLang reads it."""
    import yaml  # type: ignore[import-untyped,unused-ignore]  # only for a --config launch

    file = Path(path)
    if file.suffix.lower() not in SUFFIXES:
        raise LaunchFileError(
            f"{CONFIG_FLAG} {path}: SGLang reads only YAML files (.yaml or .yml), "
            f"not {file.suffix or 'a file without a suffix'}"
        )
    try:
        raw = read_bounded(file, MAX_CONFIG_BYTES, "a launch config")
        text = raw.decode("utf-8")
        data = yaml.load(text, Loader=_loader(yaml))
    except _IntegerTooLong as error:
        lines = text.splitlines()
        key = _KEY.match(lines[error.line] if error.line < len(lines) else "")
        named = f"{key.group(1)}: " if key else ""
        raise LaunchFileError(
            f"{CONFIG_FLAG} {path}: {named}an integer of more than {sys.get_int_max_str_digits()} "
            f"digits (line {error.line + 1}), which Python refuses to read"
        ) from None
    except OSError as error:
        raise LaunchFileError(f"{CONFIG_FLAG} {path}: {error.strerror or error}") from None
    except (BoundedJsonError, UnicodeDecodeError) as error:
        raise LaunchFileError(f"{CONFIG_FLAG} {path}: {error}") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
        problem = getattr(error, "problem", None) or type(error).__name__
        raise LaunchFileError(f"{CONFIG_FLAG} {path}: not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise LaunchFileError(f"{CONFIG_FLAG} {path}: nested too deep") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LaunchFileError(
            f"{CONFIG_FLAG} {path}: SGLang needs a mapping of options at the top level, "
            f"not {type(data).__name__}"
        )
    _count(path, data)
    return data


class _IntegerTooLong(Exception):
    """A YAML integer over Python's digit limit, at a line of the file (counted from 0)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


# `key:` at the start of a YAML line: the option a line sets.
_KEY = re.compile(r"\s*([\w.-]+)\s*:")


def _loader(yaml: Any) -> Any:
    """YAML's safe loader, with an integer over Python's digit limit (a ValueError that
    names neither the file nor the key) raised as _IntegerTooLong with its line."""

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # yaml is Any here
        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                raise _IntegerTooLong(node.start_mark.line) from None

    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    return Loader


def _text(path: str, key: str, value: object) -> str:
    """`str(value)`, as SGLang's merger writes a value, or LaunchFileError naming the key
    (an integer YAML reads in hexadecimal may have too many decimal digits to print)."""
    try:
        return str(value)
    except ValueError:
        raise LaunchFileError(
            f"{CONFIG_FLAG} {path}: {key}: an integer of more than "
            f"{sys.get_int_max_str_digits()} digits, which Python refuses to write"
        ) from None


def _count(path: str, data: object) -> None:
    """Refuse a file whose values, aliases expanded, exceed MAX_CONFIG_VALUES."""
    budget = MAX_CONFIG_VALUES
    stack = [data]
    while stack:
        value = stack.pop()
        budget -= 1
        if budget < 0:
            raise LaunchFileError(
                f"{CONFIG_FLAG} {path}: more than {MAX_CONFIG_VALUES} values (YAML aliases "
                "included): a launch config holds a few dozen"
            )
        if isinstance(value, dict):
            stack += [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple, set)):
            stack += list(value)


def _arguments(
    path: str, data: Mapping[Any, Any], release: str, switches: frozenset[str]
) -> list[str]:
    """The arguments the release's merger writes for the file's options, in its order."""
    booleans = release_key(release) >= release_key(BOOLEAN_VALUES_FROM)
    mappings_as_json = release_key(release) >= release_key(MAPPINGS_AS_JSON_FROM)
    arguments: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str):
            raise LaunchFileError(f"{CONFIG_FLAG} {path}: the key {key!r} is not a flag name")
        flag = f"--{key}"
        if isinstance(value, bool):
            # SGLang tells a switch by its argparse dest (the key, `-` read as `_`).
            is_switch = "--" + key.replace("_", "-") in switches
            if booleans and not is_switch:
                arguments += [flag, str(value).lower()]
            elif value:
                arguments.append(flag)
        elif isinstance(value, list):
            if value:
                arguments += [flag, *(_text(path, key, item) for item in value)]
        elif isinstance(value, dict) and mappings_as_json:
            try:
                arguments += [flag, json.dumps(value)]
            except (TypeError, ValueError) as error:
                raise LaunchFileError(f"{CONFIG_FLAG} {path}: {key}: {error}") from None
        else:
            arguments += [flag, _text(path, key, value)]
    return arguments
