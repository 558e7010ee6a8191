"""Read the flags the guard models out of a whole SGLang launch command."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from compat.config import FLAG_FIELDS, flag_of

MODELED_FLAGS = {flag_of(name): name for name in FLAG_FIELDS}
# Flags of the launch command that say where the model is; used to find its config.json.
MODEL_PATH_FLAGS = ("--model-path", "--model")


@dataclass(frozen=True)
class LaunchFlags:
    values: dict[str, str]
    """AttentionConfig field name -> the value as written in the command."""
    model_path: str | None
    ignored: tuple[str, ...]
    """Flags of the command the guard does not model, with their values."""
    problems: tuple[str, ...] = ()
    """Modeled flags that are missing their value, or a command that cannot be split."""
    notes: tuple[str, ...] = ()
    """What was done to read the command, e.g. splitting a pasted one-argument command."""


def parse_launch_command(tokens: Sequence[str]) -> LaunchFlags:
    """Pick the modeled flags out of `python3 -m sglang.launch_server --flag value ...`.

    The program and module come before the first flag and are skipped. `--flag=value`
    and `--flag value` are both understood; a flag followed by another flag is a switch.
    A whole command pasted as one argument (`-- "python3 -m ... --flag value"`) is split
    with shell rules, and a note says so.
    """
    tokens, notes, problems = _split_pasted(tokens)
    values: dict[str, str] = {}
    ignored: list[str] = []
    model_path: str | None = None
    index = 0
    while index < len(tokens) and not tokens[index].startswith("--"):
        index += 1
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("--"):
            ignored.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        value: str | None = inline if has_inline else None
        if value is None and index < len(tokens) and not tokens[index].startswith("--"):
            value = tokens[index]
            index += 1
        if flag in MODELED_FLAGS:
            if value is None:
                problems.append(f"{flag} in the launch command has no value")
            else:
                values[MODELED_FLAGS[flag]] = value
        elif flag in MODEL_PATH_FLAGS and value is not None:
            model_path = value
            ignored.append(f"{flag} {value}")
        else:
            ignored.append(flag if value is None else f"{flag} {value}")
    return LaunchFlags(values, model_path, tuple(ignored), tuple(problems), tuple(notes))


def _split_pasted(tokens: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """Split a token that holds a whole command (or several flags) at shell word boundaries.

    Only tokens in the place of a program or a flag are split: a flag's value may hold
    spaces (`--chat-template "a b"`). Returns the tokens, the notes and the problems.
    """
    result: list[str] = []
    notes: list[str] = []
    problems: list[str] = []
    value_expected = False
    for token in tokens:
        is_flag = token.startswith("--")
        if value_expected and not is_flag:
            result.append(token)
            value_expected = False
            continue
        # `--flag=a b` is one flag with a spaced value; `--flag a` and `prog --flag a` are not.
        if any(c.isspace() for c in token.strip()) and not (
            is_flag and "=" in token.split(None, 1)[0]
        ):
            try:
                words = shlex.split(token)
            except ValueError as error:
                problems.append(f"cannot split the launch command {token!r}: {error}")
                continue
            shown = token if len(token) <= 60 else token[:57] + "..."
            notes.append(f"split the one-argument launch command {shown!r} with shlex")
            result += words
            value_expected = bool(words) and words[-1].startswith("--") and "=" not in words[-1]
            continue
        result.append(token)
        value_expected = is_flag and "=" not in token
    return result, notes, problems
