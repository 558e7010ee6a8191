"""What changed between SGLang releases, in words: one function per sentence.

Used by the site (a page per release, the "What changed" page) and by `compat diff`, so
both say the same thing about start-up. Everything is computed from `compat.releases`; the
page's changes are worded in `compat.publish.page_changes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from compat.claim.words import codes
from compat.publish.page_changes import PageNews, page_news
from compat.releases import RELEASE_NAMES, RELEASES, Change, changes_of, doc_changes_of


@dataclass(frozen=True)
class ReleaseNews:
    """One release's changes: its own words, and the accepted values that moved."""

    release: str
    changes: tuple[Change, ...]
    values: tuple[str, ...]
    """Computed: accepted values added or removed since the release before."""
    page: tuple[PageNews, ...] = ()
    """What changed on the page, each change in words."""


def value_changes(before: str, after: str, changes: tuple[Change, ...] = ()) -> Iterator[str]:
    """Accepted values that differ between two releases, as sentences: those that none of
    `changes` (the later release's own) already names."""
    old, new = RELEASES[before], RELEASES[after]
    for label, attribute in (
        ("--attention-backend (and the phase flags)", "backend_choices"),
        ("--kv-cache-dtype", "kv_choices"),
        ("--speculative-algorithm", "algorithm_choices"),
    ):
        was, now = getattr(old, attribute), getattr(new, attribute)
        said = _named_by(changes, attribute)
        added = [v for v in now if v not in was and v not in said]
        removed = [v for v in was if v not in now and v not in said]
        if added:
            yield f"`{label}` accepts {codes(added)} too"
        if removed:
            yield f"`{label}` no longer accepts {codes(removed)}"


def _named_by(changes: tuple[Change, ...], attribute: str) -> frozenset[str]:
    """The words of the summaries of the changes that update `attribute`: a value one of
    them names is said once, there."""
    words: set[str] = set()
    for change in changes:
        if attribute in change.updates:
            words.update(re.findall(r"[\w.-]+", change.summary))
    return frozenset(words)


def news(release: str) -> ReleaseNews:
    index = RELEASE_NAMES.index(release)
    changes = changes_of(release)
    values = tuple(value_changes(RELEASE_NAMES[index - 1], release, changes)) if index else ()
    return ReleaseNews(release, changes, values, page_news(release))


def between(first: str, last: str) -> tuple[ReleaseNews, ...]:
    """The news of every release after `first` up to `last` (in either order)."""
    a, b = sorted((RELEASE_NAMES.index(first), RELEASE_NAMES.index(last)))
    return tuple(n for n in (news(r) for r in RELEASE_NAMES[a + 1 : b + 1]) if n.changes)


def releases_with_changes() -> tuple[str, ...]:
    """The baseline and every release whose start-up rules or page changed."""
    return (
        RELEASE_NAMES[0],
        *(r for r in RELEASE_NAMES[1:] if changes_of(r) or doc_changes_of(r)),
    )


def same_as(release: str) -> str:
    """The release whose rules `release` shares (itself when it changed something)."""
    index = RELEASE_NAMES.index(release)
    while index and not changes_of(RELEASE_NAMES[index]):
        index -= 1
    return RELEASE_NAMES[index]
