"""Read the flags the guard models out of a whole SGLang launch command.

The command is read as the release's own parser reads it: every flag must be one the
release declares (a typo is refused, with a did-you-mean), and each flag takes as many
values as it is declared with, so a flag's value is never mistaken for another flag.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from compat.engine.parser.lookup import RELEASE, UnknownFlagError, canonical_flag, release_flags
from compat.inputs.config import chosen_release
from compat.inputs.flags import FLAGS, flag_of

MODELED_FLAGS = {option: flag.field for flag in FLAGS for option in flag.options}
SWITCH_GIVEN = "true"
"""What a modelled switch of the launch command (`--trust-remote-code`) is read as."""
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
    """Unknown flags, modeled flags missing their value, stray arguments."""
    used: tuple[str, ...] = ()
    """The flags the guard reads (the modeled ones and the model path), as written."""
    notes: tuple[str, ...] = ()
    """What was done to read the command, e.g. splitting a pasted one-argument command."""


def launch_release(version: str | None) -> str:
    """The release whose flags a launch command is read with: the one the guard predicts.

    It is the guard's own choice (`compat.config.chosen_release`): the version given, else
    `COMPAT_SGLANG_VERSION`, else the installed sglang, else the newest modelled. Raises
    `UnknownReleaseError` (a ValueError, naming the known releases) for one not modelled.
    """
    rules, _ = chosen_release(version)
    return rules.release


def parse_launch_command(tokens: Sequence[str], release: str = RELEASE) -> LaunchFlags:
    """Pick the modeled flags out of `python3 -m sglang.launch_server --flag value ...`.

    The program and module come before the first flag and are skipped. `--flag=value`
    and `--flag value` are both understood. A whole command pasted as one argument
    (`-- "python3 -m ... --flag value"`) is split with shell rules, and a note says so.
    """
    arities = release_flags(release)
    values: dict[str, str] = {}
    ignored: list[str] = []
    used: list[str] = []
    model_path: str | None = None
    tokens, notes, problems = _split_pasted(tokens)
    index = 0
    while index < len(tokens) and not tokens[index].startswith("--"):
        index += 1
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("--"):
            problems.append(f"unexpected argument {token!r} in the launch command")
            continue
        written, has_inline, inline = token.partition("=")
        try:
            flag = canonical_flag(written, release)
        except UnknownFlagError as error:
            problems.append(str(error))
            while index < len(tokens) and not tokens[index].startswith("--"):
                index += 1  # its values: one error per unknown flag is enough
            continue
        taken: list[str] = [inline] if has_inline else []
        arity = arities[flag]
        if not has_inline and arity != "switch":
            while index < len(tokens) and not tokens[index].startswith("--"):
                taken.append(tokens[index])
                index += 1
                if arity in ("value", "optional"):
                    break
        if arity == "value" and not taken:
            problems.append(f"{flag} in the launch command has no value")
            continue
        shown = " ".join((written, *taken))
        if flag in MODELED_FLAGS:
            values[MODELED_FLAGS[flag]] = taken[0] if taken else SWITCH_GIVEN
            used.append(shown)
        elif flag in MODEL_PATH_FLAGS:
            model_path = taken[0]
            used.append(shown)
        else:
            ignored.append(shown)
    return LaunchFlags(
        values, model_path, tuple(ignored), tuple(problems), tuple(used), tuple(notes)
    )


def corrected_command(
    tokens: Sequence[str],
    sets: Sequence[tuple[str, str]],
    removes: Sequence[str],
    release: str = RELEASE,
) -> list[str]:
    """The launch command with flags set (`sets`) and dropped (`removes`).

    A flag the command already has keeps its place and gets the new value; a new one is
    appended. `tokens` must parse without problems with `release`'s flags.
    """
    arities = release_flags(release)
    setting = dict(sets)
    dropping = set(removes)
    out: list[str] = []
    index = 0
    while index < len(tokens) and not tokens[index].startswith("--"):
        out.append(tokens[index])
        index += 1
    while index < len(tokens):
        token = tokens[index]
        index += 1
        written, has_inline, _ = token.partition("=")
        flag = canonical_flag(written, release)
        span = [token]
        if not has_inline and arities[flag] != "switch":
            while index < len(tokens) and not tokens[index].startswith("--"):
                span.append(tokens[index])
                index += 1
                if arities[flag] in ("value", "optional"):
                    break
        if flag in dropping:
            continue
        if flag in setting:
            span = [flag, setting.pop(flag)]
        out += span
    for flag, value in setting.items():
        out += [flag, value]
    return out


def model_config_conflicts(
    explicit: dict[str, object], derived: dict[str, object], reasons: dict[str, str]
) -> list[dict[str, object]]:
    """Explicit flags that contradict what the model config implies (the flag wins)."""
    return [
        {
            "flag": flag_of(name),
            "given": value,
            "model_config": derived[name],
            "why": reasons.get(name, ""),
        }
        for name, value in explicit.items()
        if value is not None and name in derived and derived[name] != value
    ]


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
