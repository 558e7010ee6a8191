"""A launch command corrected: the flags a suggested fix sets put in place, those it drops
removed, every other word as the operator wrote it (a runnable shell command)."""

from __future__ import annotations

from collections.abc import Sequence

from compat.engine.parser.lookup import RELEASE, UnknownFlagError, canonical_flag, release_flags
from compat.inputs.command import first_flag


def corrected_command(
    tokens: Sequence[str],
    sets: Sequence[tuple[str, str]],
    removes: Sequence[str],
    release: str = RELEASE,
) -> list[str]:
    """The launch command with flags set (`sets`) and dropped (`removes`).

    A flag the command already has keeps its place and gets the new value; a new one is
    appended (after a `--config` file's flags, so it wins over them, as in SGLang).
    `tokens` must be the words of a command that parses without problems with `release`'s
    flags (`LaunchFlags.words`); a flag `release` does not know (a newer release's, listed
    as not modelled) keeps its place and every word up to the next flag.
    """
    arities = release_flags(release)
    setting = dict(sets)
    dropping = set(removes)
    out: list[str] = []
    index = first_flag(tokens)
    out += tokens[:index]
    while index < len(tokens):
        token = tokens[index]
        index += 1
        written, has_inline, _ = token.partition("=")
        try:
            flag = canonical_flag(written, release)
            arity = arities[flag]
        except UnknownFlagError:  # a newer release's flag (listed, not modelled): kept whole
            flag, arity = written, "list"
        span = [token]
        if not has_inline and arity != "switch":
            while index < len(tokens) and not tokens[index].startswith("--"):
                span.append(tokens[index])
                index += 1
                if arity in ("value", "optional"):
                    break
        if flag in dropping:
            continue
        if flag in setting:
            span = [flag, setting.pop(flag)]
        out += span
    for flag, value in setting.items():
        out += [flag, value]
    return out
