"""Which SGLang release a configuration is judged for: the one named, else
`COMPAT_SGLANG_VERSION`, else the installed sglang, else the newest modelled."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from compat.engine.rules import ReleaseRules
from compat.inputs.checks import InputProblem
from compat.inputs.installed import UnreadableMetadataError, installed_sglang_version
from compat.releases import NEWEST, RELEASES, UnknownReleaseError, answering_rules, release_rules

if TYPE_CHECKING:
    from compat.engine.models.lookup import ModelKnowledge

# Names the release to predict when `sglang_version` is not given (before the installed one).
VERSION_VARIABLE = "COMPAT_SGLANG_VERSION"


def chosen_release(version: str | None) -> tuple[ReleaseRules, str, str | None]:
    """The rules to predict with, where the release came from, and the release asked for
    when it is newer than the newest modelled.

    A release named explicitly (`version`) must be modelled: UnknownReleaseError otherwise.
    One read from `COMPAT_SGLANG_VERSION` or the installed sglang may be newer than the
    newest modelled: the newest modelled release answers for it, and the third value names
    it, so that every answer can say so. An older one, or a name that is not a release,
    raises UnknownReleaseError wherever it comes from.
    """
    if version is not None:
        return _rules(version), "given", None
    # Blank is unset, as for COMPAT_POLICY: `COMPAT_SGLANG_VERSION= cmd` clears it.
    chosen = os.environ.get(VERSION_VARIABLE, "").strip()
    if chosen:
        return _with_source(chosen, VERSION_VARIABLE)
    try:
        installed = installed_sglang_version()
    except UnreadableMetadataError as error:  # reported as a release that cannot be told
        raise UnknownReleaseError(
            f"{error}; name the release with {VERSION_VARIABLE} or --sglang-version"
        ) from None
    if installed is not None:
        return _with_source(installed, "installed")
    return RELEASES[NEWEST], "newest modelled", None


def release_models(version: str | None) -> ModelKnowledge | None:
    """What the release `version` chooses knows about models; None for a release that is
    not modelled, which the configuration's own validation then reports."""
    try:
        return chosen_release(version)[0].models
    except (UnknownReleaseError, KeyError):
        return None


def _rules(version: str) -> ReleaseRules:
    # A release's own name is the common case (a lookup); release_rules reads the others.
    return RELEASES.get(version) or release_rules(version)


def _with_source(version: str, source: str) -> tuple[ReleaseRules, str, str | None]:
    """A release that was not named explicitly: one newer than modelled is answered for."""
    rules = RELEASES.get(version)
    if rules is not None:
        return rules, source, None
    try:
        rules, newer = answering_rules(version)
    except UnknownReleaseError as error:
        where = "the installed sglang" if source == "installed" else source
        raise UnknownReleaseError(f"{error.reason} (from {where})") from None
    return rules, source, newer


def checked_release(
    problems: list[InputProblem], version: object
) -> tuple[ReleaseRules, str, str | None] | None:
    """The release `version` names (with where it came from, and the release asked for when
    it is newer than modelled), or None and the problem."""
    flag = "--sglang-version"
    if version is not None and not isinstance(version, str):
        problems.append(InputProblem(flag, version, f"expected a string, got {version!r}"))
        return None
    try:
        return chosen_release(version)
    except UnknownReleaseError as error:
        problems.append(InputProblem(flag, version, error.reason, tuple(RELEASES)))
        return None
