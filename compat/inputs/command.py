"""Read the flags the guard models out of a whole SGLang launch command.

The command is read as the release's own parser reads it: every flag must be one the
release declares (a typo is refused, with a did-you-mean), and each flag takes as many
values as it is declared with, so a flag's value is never mistaken for another flag.
SGLang's own `--config FILE` is read as the release reads it (`compat.inputs.launch_file`).

A command pasted as one argument is read as a shell reads it: split into words, with
backslash line continuations joined; so is a flag quoted together with its value.
"""

from __future__ import annotations

import shlex
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from compat.engine.parser.lookup import RELEASE, UnknownFlagError, canonical_flag, release_flags
from compat.inputs.checks import SHOWN_CHARS, shown
from compat.inputs.config import chosen_release
from compat.inputs.flags import FLAGS
from compat.inputs.launch_file import CONFIG_FLAG, LaunchFile, LaunchFileError, merge_config_file
from compat.vocab.spelling import UNICODE_DASHES, ascii_spelling, did_you_mean

MODELED_FLAGS = {option: flag.field for flag in FLAGS for option in flag.options}
SWITCH_GIVEN = "true"
"""What a modelled switch of the launch command (`--trust-remote-code`) is read as."""
# Flags of the launch command that say where the model is; used to find its config.json.
MODEL_PATH_FLAGS = ("--model-path", "--model")
# The draft model of speculative decoding: SGLang reads its own config (`ModelConfig` with
# `is_draft_model=True`) and builds the draft's backends for its architecture.
DRAFT_MODEL_PATH_FLAGS = ("--speculative-draft-model-path", "--speculative-draft-model")
# What starts an SGLang server: `python -m sglang.launch_server`, the script itself, or the
# `sglang serve` command (every release from 0.5.7).
LAUNCH_MODULE = "sglang.launch_server"
LAUNCH_SCRIPT = "sglang/launch_server.py"
SERVE_COMMAND = ("sglang", "serve")
# At most this many distinct problems are listed; the rest are counted.
LISTED_PROBLEMS = 5


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
    words: tuple[str, ...] = ()
    """The command as a shell would pass it: pasted text split, continuations joined."""
    config_file: LaunchFile | None = None
    """The `--config` file SGLang reads, when the command names one."""
    from_config_file: frozenset[str] = frozenset()
    """The flags the config file sets (the command line's own value wins over it)."""
    draft_model_path: str | None = None
    """`--speculative-draft-model-path`, as written."""

    @property
    def sglang_launch(self) -> bool:
        """Whether the command starts an SGLang server (empty: flags alone, no program)."""
        return is_sglang_launch(self.words)


def summarized(problems: Sequence[str]) -> str:
    """The problems on one line: each distinct one once, with its count, the first few."""
    counts = Counter(problems)
    listed = [
        text if count == 1 else f"{text} ({count} times)"
        for text, count in list(counts.items())[:LISTED_PROBLEMS]
    ]
    rest = len(counts) - len(listed)
    if rest:
        listed.append(f"and {rest} more problem{'s' * (rest != 1)}")
    return "; ".join(listed)


def launch_release(version: str | None) -> str:
    """The release whose flags a launch command is read with: the one the guard predicts.

    It is the guard's own choice (`compat.config.chosen_release`): the version given, else
    `COMPAT_SGLANG_VERSION`, else the installed sglang, else the newest modelled. Raises
    `UnknownReleaseError` (a ValueError, naming the known releases) for one not modelled.
    """
    rules, _, _ = chosen_release(version)
    return rules.release


def is_sglang_launch(words: Sequence[str]) -> bool:
    """Whether the program part of `words` (before the first flag) starts an SGLang server.

    A command of flags alone (no program) is one: `compat check` reads bare flags.
    """
    program = list(words[: first_flag(words)])
    if not program:
        return True
    for index, word in enumerate(program):
        if word == LAUNCH_MODULE or word.endswith(LAUNCH_SCRIPT):
            return True
        name = word.rsplit("/", 1)[-1]
        if (name, *program[index + 1 : index + 2]) == SERVE_COMMAND:
            return True
    return False


def parse_launch_command(
    tokens: Sequence[str], release: str = RELEASE, *, unknown_listed: bool = False
) -> LaunchFlags:
    """Pick the modeled flags out of `python3 -m sglang.launch_server --flag value ...`.

    The program and module come before the first flag and are skipped. `--flag=value`
    and `--flag value` are both understood. A whole command pasted as one argument
    (`-- "python3 -m ... --flag value"`) is split with shell rules, and a note says so;
    so is a flag quoted with its value. `--config FILE` adds the file's flags, the command
    line's winning, as in SGLang. A flag `release` does not know is a problem, unless
    `unknown_listed` (the command is for a newer release than `release`, which answers for
    it): then it is listed with the flags not modelled, with a did-you-mean where one fits.
    """
    arities = release_flags(release)
    words, notes, problems = _shell_words(tokens, release)
    start = _program_end(words)
    switches = frozenset(flag for flag, arity in arities.items() if arity == "switch")
    try:
        argv, config_file = merge_config_file(words[start:], release, switches)
    except LaunchFileError as error:
        problems.append(str(error))
        argv, config_file = list(words[start:]), None
    from_file = len(config_file.arguments) if config_file else 0
    source = f" (from {config_file.path})" if config_file else ""
    values: dict[str, str] = {}
    ignored: list[str] = []
    used: list[str] = []
    file_flags: set[str] = set()
    model_path: str | None = None
    draft_model_path: str | None = None
    index = 0
    while index < len(argv):
        token = argv[index]
        in_file = index < from_file
        where = f"{CONFIG_FLAG} {config_file.path}: " if in_file and config_file else ""
        index += 1
        if not token.startswith("--"):
            problems.append(
                f"{where}unexpected argument {shown(token)} in the launch command"
                f"{_typeset_hint(token)}"
            )
            continue
        written, has_inline, inline = token.partition("=")
        try:
            flag = _canonical(written, release)
        except UnknownFlagError as error:
            first_value = index
            while index < len(argv) and not argv[index].startswith("--"):
                index += 1  # its values: one error per unknown flag is enough
            if unknown_listed:
                spelled = [written, *([inline] if has_inline else []), *argv[first_value:index]]
                hint = did_you_mean(error.did_you_mean)
                ignored.append(
                    f"{' '.join(spelled)}{source * in_file} (not a flag of SGLang {release}{hint})"
                )
            else:
                problems.append(where + _unknown(error, written, release))
            continue
        taken: list[str] = [inline] if has_inline else []
        arity = arities[flag]
        if not has_inline and arity != "switch":
            while index < len(argv) and not argv[index].startswith("--"):
                taken.append(argv[index])
                index += 1
                if arity in ("value", "optional"):
                    break
        if arity == "value" and not taken:
            problems.append(f"{where}{flag} in the launch command has no value")
            continue
        if flag == CONFIG_FLAG and token != CONFIG_FLAG:
            notes.append(
                f"SGLang {release} reads a config file only from `{CONFIG_FLAG} FILE`, as two "
                f"arguments: {shown(token)} is accepted and the file is never read"
            )
        shown_flag = " ".join((written, *taken)) + source * in_file
        if in_file:
            file_flags.add(flag)
        if flag in MODELED_FLAGS:
            values[MODELED_FLAGS[flag]] = taken[0] if taken else SWITCH_GIVEN
            used.append(shown_flag)
        elif flag in MODEL_PATH_FLAGS:
            model_path = taken[0]
            used.append(shown_flag)
        elif flag in DRAFT_MODEL_PATH_FLAGS and taken:
            draft_model_path = taken[0]
            used.append(shown_flag)
        elif flag != CONFIG_FLAG or token != CONFIG_FLAG:
            ignored.append(shown_flag)
    if config_file is not None:
        notes.append(
            f"read {CONFIG_FLAG} {config_file.path} as SGLang {release} does: its flags come "
            "first, so the command line's own flags win over them"
        )
    return LaunchFlags(
        values,
        model_path,
        tuple(ignored),
        tuple(problems),
        tuple(used),
        tuple(notes),
        tuple(words),
        config_file,
        frozenset(file_flags),
        draft_model_path,
    )


def _canonical(flag: str, release: str) -> str:
    """`canonical_flag`, its refusals remembered: a pasted command may repeat an unknown
    flag 30,000 times, and each miss looks for the closest flag."""
    found = _lookup(flag, release)
    if isinstance(found, UnknownFlagError):
        raise found.with_traceback(None)
    return found


@lru_cache(maxsize=256)
def _lookup(flag: str, release: str) -> str | UnknownFlagError:
    try:
        return canonical_flag(flag, release)
    except UnknownFlagError as error:
        return error


def _unknown(error: UnknownFlagError, written: str, release: str) -> str:
    """The unknown-flag problem, with a long flag cut for the message."""
    hint = _typeset_hint(written)
    if hint:
        return f"SGLang {release} has no flag {shown(written)}{hint}"
    if len(written) <= SHOWN_CHARS:
        return str(error)
    return f"SGLang {release} has no flag {shown(written)}"


def _typeset_hint(word: str) -> str:
    """A did-you-mean with the ASCII spelling of a word holding a Unicode dash or quote
    (a command pasted from a document), with why; nothing for any other word."""
    spelled = ascii_spelling(word)
    if spelled is None:
        return ""
    return (
        f"{did_you_mean(shown(spelled))} (it holds a typographic dash or quote, which "
        "neither a shell nor SGLang reads as one)"
    )


def _program_end(words: Sequence[str]) -> int:
    """Where the program ends and SGLang's arguments begin.

    After an SGLang launch's module, script or `sglang serve`, every word is SGLang's (it
    takes no positional argument), so a word there that is not a flag is refused, not read
    as more of the program. Otherwise the program runs up to the first flag, or up to a
    word that starts with a Unicode dash: a flag whose `--` a document typeset.
    """
    first = first_flag(words)
    for index, word in enumerate(words[:first]):
        if word == LAUNCH_MODULE or word.endswith(LAUNCH_SCRIPT):
            return index + 1
        name = word.rsplit("/", 1)[-1]
        if (name, *words[index + 1 : index + 2]) == SERVE_COMMAND:
            return index + 2
        if word.startswith(tuple(UNICODE_DASHES)):
            return index
    return first


def first_flag(words: Sequence[str]) -> int:
    """The index of the first flag: the program and its module come before it."""
    return next((i for i, word in enumerate(words) if word.startswith("--")), len(words))


def _shell_words(tokens: Sequence[str], release: str) -> tuple[list[str], list[str], list[str]]:
    """The command as a shell would have passed it; the notes and the problems.

    Split with shell rules: the first token when it holds a whole command, and a token in
    the place of a flag (`"--attention-backend fa3"`); never a flag's value, which may hold
    spaces (`--chat-template "a b"`), nor a program's own arguments (`sh -c "a b"`).
    `--flag=a b` is one flag with a spaced value.
    """
    arities = release_flags(release)
    words: list[str] = []
    notes: list[str] = []
    problems: list[str] = []
    queue = deque((token, True) for token in tokens)  # (token, may be split)
    first = True
    values = 0  # values the previous flag still takes; -1: any number
    while queue:
        token, splittable = queue.popleft()
        is_flag = token.startswith("--")
        if values and not is_flag:
            words.append(token)
            values -= values > 0
            continue
        values = 0
        head = token.split(None, 1)[0] if token.strip() else ""
        first_token, first = first, False
        if splittable and (first_token or (is_flag and "=" not in head)) and _spaced(token):
            try:
                split = shlex.split(_joined_lines(token))
            except ValueError as error:
                problems.append(f"cannot split the launch command {shown(token)}: {error}")
                continue
            notes.append(
                f"split the one-argument launch command {shown(token)} with shell rules (shlex)"
                if first_token
                else f"read the quoted {shown(token)} as the words a shell splits it into "
                "(SGLang's own parser refuses a flag and its value as one argument)"
            )
            queue.extendleft((word, False) for word in reversed(split))
            continue
        words.append(token)
        if is_flag and "=" not in token:
            values = _values_taken(token, arities, release)
    return words, notes, problems


def _spaced(token: str) -> bool:
    return any(c.isspace() for c in token.strip())


def _values_taken(flag: str, arities: dict[str, str], release: str) -> int:
    """How many of the next words are `flag`'s values: 0, 1, or -1 for all up to a flag."""
    try:
        arity = arities[_canonical(flag, release)]
    except UnknownFlagError:
        return -1  # the parser skips an unknown flag's values: they are never split
    return {"switch": 0, "value": 1, "optional": 1}.get(arity, -1)


def _joined_lines(text: str) -> str:
    """`text` with backslash-newline pairs removed outside single quotes, as a shell does."""
    if "\\\n" not in text and "\\\r\n" not in text:
        return text
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            following = text[index + 1 : index + 3]
            skip = 2 if following.startswith("\n") else 3 if following == "\r\n" else 0
            if skip:
                index += skip
                continue
            out.append(text[index : index + 2])
            index += 2
            continue
        elif char in "'\"":
            quote = char if not quote else "" if quote == char else quote
        out.append(char)
        index += 1
    return "".join(out)
