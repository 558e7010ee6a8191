"""Read the flags the guard models out of a whole SGLang launch command."""

from __future__ import annotations

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
    """Modeled flags that are missing their value."""


def parse_launch_command(tokens: Sequence[str]) -> LaunchFlags:
    """Pick the modeled flags out of `python3 -m sglang.launch_server --flag value ...`.

    The program and module come before the first flag and are skipped. `--flag=value`
    and `--flag value` are both understood; a flag followed by another flag is a switch.
    """
    values: dict[str, str] = {}
    ignored: list[str] = []
    model_path: str | None = None
    problems: list[str] = []
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
    return LaunchFlags(values, model_path, tuple(ignored), tuple(problems))
