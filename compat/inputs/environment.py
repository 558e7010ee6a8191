"""The launch's environment: `--env NAME=VALUE`, or the process's own, checked per release.

Only the variables the release's start-up code reads where it decides attention and that
the replay models are taken (`compat.engine.environment.modelled`); a name it does not
read is refused, naming the ones it does, so that a typo never passes for "unset".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from compat.engine.environment import MODELLED, modelled, read_on, releases_reading
from compat.inputs.checks import InputProblem, echoed
from compat.vocab.terms import Platform

OPTION = "--env"


def check_environment(problems: list[InputProblem], environment: object, release: str) -> None:
    """Append a problem for each pair of `environment` that is not (a name `release` reads,
    a string), or for a value that is no tuple of pairs."""
    if not isinstance(environment, tuple):
        got = f"expected (name, value) pairs, got {echoed(environment)}"
        problems.append(InputProblem(OPTION, environment, got))
        return
    valid = modelled(release)
    seen: set[str] = set()
    for pair in environment:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            got = f"expected a (name, value) pair, got {echoed(pair)}"
            problems.append(InputProblem(OPTION, pair, got))
            continue
        name, value = pair
        if name not in valid:
            reason = (
                f"sglang {release}'s start-up reads no variable {name!r} where it decides "
                "attention (or the package does not model it yet)"
            )
            if name in MODELLED:  # a release that predates (or outlives) the variable
                reading = releases_reading(name)
                reason += f"; {name} is read by sglang {reading[0]} to {reading[-1]}"
            elif not valid:
                reason += "; it reads none the package models"
            problems.append(InputProblem(OPTION, name, reason, valid))
        elif not isinstance(value, str):
            got = f"{name}: expected a string, got {echoed(value)}"
            problems.append(InputProblem(OPTION, value, got))
        elif name in seen:
            problems.append(InputProblem(OPTION, name, f"{name} is given twice"))
        seen.add(str(name))


def parse_assignments(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`NAME=VALUE` strings as pairs; ValueError naming the item without `=`."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise ValueError(f"{OPTION} {item!r}: expected NAME=VALUE")
        pairs.append((name, value))
    return tuple(pairs)


def read_process(environ: Mapping[str, str], release: str) -> tuple[tuple[str, str], ...]:
    """The variables `release` reads that `environ` (the process's environment) sets."""
    return tuple((name, environ[name]) for name in modelled(release) if name in environ)


def assumed_unset(
    environment: tuple[tuple[str, str], ...], release: str, platform: Platform
) -> tuple[str, ...]:
    """The variables `release` reads on `platform` that `environment` leaves unset (assumed
    so): those that could have changed the answer."""
    given = {name for name, _ in environment}
    return tuple(name for name in read_on(release, platform) if name not in given)
