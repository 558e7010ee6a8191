"""The kernel packages' versions a launch runs with: `--package NAME==VERSION`, or the
installed ones (`enforce()`, the plugin), checked per release.

Only a package the release's start-up reads is taken (Triton, for DeepSeek sparse
attention's page size on ROCm from 0.5.12: `compat.engine.preshuffle`); another name is
refused naming the ones it reads, and a version must be a PEP 440 one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from compat.engine.package_versions import is_version
from compat.engine.preshuffle import TRITON
from compat.inputs.checks import InputProblem, echoed, named_pairs
from compat.inputs.environment import check_environment
from compat.inputs.installed import UnreadableMetadataError
from compat.inputs.release_choice import chosen_release
from compat.releases import UnknownReleaseError
from compat.vocab.terms import Platform

if TYPE_CHECKING:
    from compat.engine.rules import ReleaseRules

OPTION = "--package"
DISTRIBUTIONS = {TRITON: ("triton", "triton-rocm")}
"""The distributions that install each package's module (torch 2.11's ROCm builds name
Triton's `triton-rocm`)."""


def read_by(rules: ReleaseRules) -> tuple[str, ...]:
    """The packages `rules`' start-up reads the version of."""
    return (TRITON,) if rules.preshuffle is not None else ()


def read_on(rules: ReleaseRules, platform: Platform) -> tuple[str, ...]:
    """Those it reads on `platform` (Triton's version matters on ROCm only)."""
    return read_by(rules) if platform is Platform.ROCM else ()


def check_packages(problems: list[InputProblem], packages: object, rules: ReleaseRules) -> None:
    """Append a problem for each pair that is not (a package `rules` reads, a PEP 440
    version), or for a value that is no tuple of pairs."""
    valid = read_by(rules)

    def unknown(name: object) -> str:
        return (
            f"sglang {rules.release}'s start-up reads the version of no package "
            f"{echoed(name)}" + ("" if valid else " (it reads none)")
        )

    def bad_value(name: str, version: object) -> str | None:
        if isinstance(version, str) and is_version(version):
            return None
        return f"{name}: expected a PEP 440 version (3.5.0), got {echoed(version)}"

    named_pairs(problems, OPTION, packages, valid, unknown, bad_value, kind="(name, version)")


def check_environment_and_packages(
    problems: list[InputProblem],
    environment: object,
    packages: object,
    rules: ReleaseRules,
) -> None:
    """The launch's variables (`--env`) and kernel package versions (`--package`), each
    where the launch gives any."""
    if environment != ():
        check_environment(problems, environment, rules)
    if packages != ():
        check_packages(problems, packages, rules)


def parse_pins(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`NAME==VERSION` strings as pairs; ValueError naming the item without `==`."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, equals, version = item.partition("==")
        if not equals or not name.strip():
            raise ValueError(f"{OPTION} {item!r}: expected NAME==VERSION (triton==3.5.0)")
        pairs.append((name.strip().lower(), version.strip()))
    return tuple(pairs)


def read_installed(
    rules: ReleaseRules, platform: Platform, version_of: Callable[[str], str | None]
) -> tuple[tuple[str, str], ...]:
    """The installed versions of the packages `rules` reads on `platform` (`version_of`:
    `compat.inputs.installed.installed_version`); one not installed is left out (unknown)."""
    pairs = []
    for name in read_on(rules, platform):
        for distribution in DISTRIBUTIONS[name]:
            try:
                version = version_of(distribution)
            except UnreadableMetadataError:  # unknown, as not given
                continue
            if version is not None:
                pairs.append((name, version))
                break
    return tuple(pairs)


def add_packages(
    pins: Iterable[str],
    installed_version: Callable[[str], str | None] | None,
    fields: dict[str, Any],
    problems: list[str],
) -> None:
    """The launch's kernel package versions into `fields`: the installed ones the release
    reads on the machine (`installed_version`), then the `--package` pins over them."""
    pairs: dict[str, str] = {}
    if installed_version is not None:
        try:
            rules = chosen_release(fields.get("sglang_version"))[0]
            platform = Platform(fields.get("platform", "cuda"))
        except (UnknownReleaseError, ValueError):
            pass  # the config's own checks name the release or the platform
        else:
            pairs.update(read_installed(rules, platform, installed_version))
    try:
        pairs.update(parse_pins(pins))
    except ValueError as error:
        problems.append(str(error))
    if pairs:
        fields["packages"] = tuple(sorted(pairs.items()))
