"""The launch's environment: `--env NAME=VALUE`, or the process's own, checked per release.

Only the variables the release's start-up code reads where it decides attention and that
the replay models are taken (`compat.engine.environment.modelled`); a name it does not
read is refused, naming the ones it does, so that a typo never passes for "unset".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from compat.engine.environment import MODELLED, modelled, read_on, releases_reading
from compat.inputs.checks import InputProblem, echoed, named_pairs
from compat.vocab.terms import Platform

if TYPE_CHECKING:
    from compat.engine.rules import ReleaseRules


def also_read(rules: ReleaseRules) -> tuple[str, ...]:
    """The variables `rules` read outside the files `env_data` scans (the preshuffle check's)."""
    return () if rules.preshuffle is None else rules.preshuffle.variables


def names(rules: ReleaseRules) -> tuple[str, ...]:
    """Every variable the release's start-up reads that the replay models, sorted."""
    return modelled(rules.release, also_read(rules))


def _reading(name: str) -> tuple[str, ...]:
    """The releases whose start-up reads `name` (the error path only: it folds them all)."""
    from compat.releases import RELEASE_NAMES, release_rules

    scanned = releases_reading(name)
    return scanned or tuple(r for r in RELEASE_NAMES if name in also_read(release_rules(r)))


OPTION = "--env"


def check_environment(
    problems: list[InputProblem], environment: object, rules: ReleaseRules
) -> None:
    """Append a problem for each pair of `environment` that is not (a name the release reads,
    a string), or for a value that is no tuple of pairs."""
    valid = names(rules)

    def unknown(name: object) -> str:
        reason = (
            f"sglang {rules.release}'s start-up reads no variable {name!r} where it decides "
            "attention (or the package does not model it yet)"
        )
        if name in MODELLED:  # a release that predates (or outlives) the variable
            reading = _reading(str(name))
            reason += f"; {name} is read by sglang {reading[0]} to {reading[-1]}"
        elif not valid:
            reason += "; it reads none the package models"
        return reason

    def bad_value(name: str, value: object) -> str | None:
        return None if isinstance(value, str) else f"{name}: expected a string, got {echoed(value)}"

    named_pairs(problems, OPTION, environment, valid, unknown, bad_value)


def parse_assignments(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`NAME=VALUE` strings as pairs; ValueError naming the item without `=`."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise ValueError(f"{OPTION} {item!r}: expected NAME=VALUE")
        pairs.append((name, value))
    return tuple(pairs)


def read_process(environ: Mapping[str, str], rules: ReleaseRules) -> tuple[tuple[str, str], ...]:
    """The variables the release reads that `environ` (the process's environment) sets."""
    return tuple((name, environ[name]) for name in names(rules) if name in environ)


def assumed(
    environment: tuple[tuple[str, str], ...], rules: ReleaseRules, platform: Platform
) -> tuple[tuple[str, str | None], ...]:
    """The variables the release reads on `platform` that `environment` does not give, with
    the value the answer took: the official ROCm image's where it sets one, else None
    (unset): those that could have changed the answer."""
    given = {name for name, _ in environment}
    image = dict(rules.rocm_image.environment) if rules.rocm_image is not None else {}
    if platform is not Platform.ROCM:
        image = {}
    read = read_on(rules.release, platform, also_read(rules))
    return tuple((name, image.get(name)) for name in read if name not in given)
