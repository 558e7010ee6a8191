"""The checks of single configuration values, and the problems they report.

Each check returns at once for a well-formed value (a type test and a lookup: every
AttentionConfig construction runs them) and words the problem only for a bad one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import cache
from operator import attrgetter

import msgspec

from compat.engine.rules import ReleaseRules
from compat.releases import RELEASES, ChoicesOf, releases_accepting
from compat.vocab.hardware import ComputeCapability
from compat.vocab.spelling import closest, did_you_mean

SHOWN_CHARS = 60
"""A value quoted in a message is cut to this many characters (a pasted 100 KB argument)."""


def shown(value: object) -> str:
    """`value`'s repr for a one-line message, cut to SHOWN_CHARS characters."""
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
    return f"{text[: SHOWN_CHARS - 3]}... ({size})"


def echoed(value: object) -> str:
    """`value` as a report line shows it: plain printable text of at most SHOWN_CHARS
    characters as it is (`llama`), anything else as `shown` writes it, escaped and cut (a
    config.json's `model_type` may hold terminal escapes, line breaks or megabytes)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= SHOWN_CHARS and text.isprintable():
        return text
    return shown(value)


# What a terminal acts on rather than shows: control characters (ESC, CR, LF, ...), line
# and paragraph separators, and the bidirectional overrides that reorder what follows.
_UNSHOWABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_text(line: str) -> str:
    """`line` with every character a terminal would act on escaped as `shown` escapes it
    (ESC as `\\x1b`): the last guard of each printed line, whatever value reached it."""
    return _UNSHOWABLE.sub(lambda match: repr(match.group())[1:-1], line)


def terminal_lines(text: str) -> str:
    """`text`'s lines, each through `terminal_text`: a message of several lines."""
    return "\n".join(map(terminal_text, text.split("\n")))


class InputProblem(msgspec.Struct, frozen=True):
    """One invalid field: which flag, the value given, and what would have been valid."""

    flag: str
    value: object
    reason: str
    choices: tuple[str, ...] = ()
    did_you_mean: str | None = None

    def __str__(self) -> str:
        text = f"{self.flag}: {self.reason}{did_you_mean(self.did_you_mean)}"
        if self.choices:
            text += f" (valid choices: {', '.join(self.choices)})"
        return text


class InvalidConfigError(ValueError):
    """The configuration cannot be checked: a value is of the wrong type or not a known choice."""

    def __init__(self, problems: Iterable[InputProblem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"invalid attention configuration:\n{lines}")


# The values reach the checks as plain str and int: `AttentionConfig` stores subclasses as the
# plain values they hold first, so `type(value) is str` is the whole type test.


def choice(
    problems: list[InputProblem], flag: str, value: object, choices: Collection[str]
) -> None:
    """`value` must be one of `choices`; record why not, with the closest choice."""
    if type(value) is str and value in choices:
        return
    options = tuple(choices)
    if not isinstance(value, str):
        # wrong types are named with their type
        reason = f"expected a string, got {type(value).__name__} {shown(value)}"
        problems.append(InputProblem(flag, value, reason, options))
        return
    lowered = {option.lower(): option for option in options}
    typed = value.strip().lower()
    # A prefix of several choices (`fp8` for fp8_e5m2 and fp8_e4m3) names them all.
    starting = [lowered[option] for option in lowered if option.startswith(typed)] if typed else []
    close = closest(typed, lowered)
    suggestion = None if close is None else lowered[close]
    if len(starting) > 1:
        suggestion = " or ".join(starting)
    problems.append(InputProblem(flag, value, f"unknown value {shown(value)}", options, suggestion))


def release_choice(
    problems: list[InputProblem],
    flag: str,
    value: object,
    rules: ReleaseRules,
    attribute: str | ChoicesOf,
    accepted: Collection[str],
) -> None:
    """`value` must be in `accepted`, the release's `attribute` (or what a function of its
    rules answers); say which releases take it."""
    if type(value) is str and value in accepted:
        return
    choices_of = attrgetter(attribute) if isinstance(attribute, str) else attribute
    choices = tuple(choices_of(rules))
    accepting = releases_accepting(attribute, value) if isinstance(value, str) else ()
    if not accepting:
        choice(problems, flag, value, choices)
        return
    order = list(RELEASES)
    here = order.index(rules.release)
    later = [r for r in accepting if order.index(r) > here]
    if later:
        reason = f"{shown(value)} is not in SGLang {rules.release}: added in {later[0]}"
    else:
        removed = order[order.index(accepting[-1]) + 1]
        reason = f"{shown(value)} was removed in SGLang {removed} (this is {rules.release})"
        instead = rules.replacements.get(str(value))
        if instead:
            reason += f"; use {' or '.join(instead)}"
    problems.append(InputProblem(flag, value, reason, choices))


def positive_ints(
    problems: list[InputProblem], flags: Sequence[str], values: Sequence[object]
) -> None:
    """Each value must be None or an integer of at least 1 (a bool is not one)."""
    for flag, value in zip(flags, values, strict=True):
        if value is None or (type(value) is int and value >= 1):
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            reason = f"expected a positive integer, got {shown(value)}"
        else:
            reason = f"must be a positive integer, got {value}"
        problems.append(InputProblem(flag, value, reason))


def class_name(problems: list[InputProblem], flag: str, value: object) -> None:
    """`value` must be None or a Python class name (a model's `architectures[0]`)."""
    if value is None or (type(value) is str and value.isidentifier()):
        return
    reason = f"expected a class name such as LlamaForCausalLM, got {shown(value)}"
    problems.append(InputProblem(flag, value, reason))


def strings(problems: list[InputProblem], flags: Sequence[str], values: Sequence[object]) -> None:
    """Each value must be None or a string (a fact read from a model's config.json)."""
    for flag, value in zip(flags, values, strict=True):
        if value is not None and type(value) is not str:
            problems.append(InputProblem(flag, value, f"expected a string, got {value!r}"))


def booleans(problems: list[InputProblem], flags: Sequence[str], values: Sequence[object]) -> None:
    """Each value must be True or False."""
    if _BOOL.issuperset(map(type, values)):
        return  # the common case, tested at C speed
    for flag, value in zip(flags, values, strict=True):
        if type(value) is not bool:
            problems.append(
                InputProblem(flag, value, f"expected True or False, got {shown(value)}")
            )


_BOOL = frozenset({bool})
_CAPABILITY_FLAG = "--compute-capability"


def capability(problems: list[InputProblem], value: object) -> ComputeCapability | None:
    """A compute capability from (major, minor), `10.0`, `sm100` or a ComputeCapability."""
    if value is None:
        return None
    if type(value) is tuple and len(value) == 2 and _is_plausible(value[0], value[1]):
        return _capability_of(value[0], value[1])
    if isinstance(value, ComputeCapability):
        return _plausible(problems, value, value)
    if isinstance(value, str):
        try:
            return _plausible(problems, ComputeCapability.parse(value), value)
        except ValueError as error:
            problems.append(InputProblem(_CAPABILITY_FLAG, value, str(error)))
            return None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(part, int) and not isinstance(part, bool) for part in value)
    ):
        return _plausible(problems, ComputeCapability(value[0], value[1]), value)
    reason = f"expected (major, minor), '10.0' or 'sm100', got {shown(value)}"
    problems.append(InputProblem(_CAPABILITY_FLAG, value, reason))
    return None


@cache
def _capability_of(major: int, minor: int) -> ComputeCapability:
    """One shared object per plausible pair (at most 99 x 10): building one costs a dataclass."""
    return ComputeCapability(major, minor)


def _is_plausible(major: object, minor: object) -> bool:
    return type(major) is int and type(minor) is int and 1 <= major <= 99 and 0 <= minor <= 9


def _plausible(
    problems: list[InputProblem], capability: ComputeCapability, given: object
) -> ComputeCapability | None:
    if _is_plausible(capability.major, capability.minor):
        return capability
    reason = f"{shown(given)} is not a CUDA compute capability"
    problems.append(InputProblem(_CAPABILITY_FLAG, given, reason))
    return None


def cuda_version(problems: list[InputProblem], value: object) -> tuple[int, int] | None:
    """A CUDA version as (major, minor) of non-negative integers."""
    if value is None:
        return None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(
            isinstance(part, int) and not isinstance(part, bool) and part >= 0 for part in value
        )
    ):
        return (value[0], value[1])
    problems.append(
        InputProblem("cuda_version", value, f"expected (major, minor), got {shown(value)}")
    )
    return None


def named_pairs(
    problems: list[InputProblem],
    option: str,
    given: object,
    valid: tuple[str, ...],
    unknown: Callable[[object], str],
    bad_value: Callable[[str, object], str | None],
    kind: str = "(name, value)",
) -> None:
    """Append a problem for each pair of `given` whose name is not in `valid` (`unknown`
    says why) or whose value `bad_value` refuses, for a name given twice, and for a value
    that is no tuple of pairs (`--env NAME=VALUE`, `--package NAME==VERSION`)."""
    if not isinstance(given, tuple):
        problems.append(InputProblem(option, given, f"expected {kind} pairs, got {echoed(given)}"))
        return
    seen: set[str] = set()
    for pair in given:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            got = f"expected a {kind} pair, got {echoed(pair)}"
            problems.append(InputProblem(option, pair, got))
            continue
        name, value = pair
        if name not in valid:
            problems.append(InputProblem(option, name, unknown(name), valid))
        elif (why := bad_value(name, value)) is not None:
            problems.append(InputProblem(option, value, why))
        elif name in seen:
            problems.append(InputProblem(option, name, f"{name} is given twice"))
        seen.add(str(name))
