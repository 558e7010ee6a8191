"""The finder's files for a site build: each part (a release and a model option) read from
the build cache under its own key (`compat.publish.finder_keys`), the missing ones computed
side by side and stored as each is done.

So modelling a new release, or editing one release's file, computes only the parts whose
data changed; a build that offers fewer releases reads the parts it shares with a bigger
one. The index of the releases is cheap and always made afresh.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, closing, nullcontext
from pathlib import Path

from compat.publish import finder, finder_cache
from compat.publish.finder import INDEX_PATH, data_path
from compat.publish.finder_cache import PARTS
from compat.publish.finder_keys import part_key
from compat.publish.finder_options import offered_models, offered_releases
from compat.publish.finder_progress import Part

Say = Callable[[str], None]
LOCK = ".parts.lock"
"""The lock held while a build reads, computes and stores parts: a second build started
beside it waits, then reads what the first stored."""


class _Store:
    """Where parts are read from and written to; reports in one line why it is not used."""

    def __init__(self, say: Say) -> None:
        self.say, self.told = say, False
        self.root: Path | None = None
        if os.environ.get(finder_cache.DISABLE_VARIABLE):
            return
        try:
            self.root = finder_cache.cache_dir()
        except finder_cache.NoCacheDirectory as error:
            self.tell(f"finder cache not used: {error}")

    def tell(self, line: str) -> None:
        if not self.told:  # one line per build, however many parts it concerns
            self.say(line)
            self.told = True

    def locked(self) -> AbstractContextManager[None]:
        if self.root is None:
            return nullcontext()
        return finder_cache.computing(self.root, LOCK, finder_cache.PARTS)

    def read(self, part: Part) -> str | None:
        if self.root is None:
            return None
        name = data_path(*part)
        try:
            found = finder_cache.read_entry(self.root, part_key(*part), (name,), PARTS)
        except finder_cache.Untrusted as error:
            self.tell(f"finder cache not used: {error}; computing that part afresh")
            return None
        return None if found is None else found[0][1]

    def write(self, part: Part, content: str) -> None:
        if self.root is None:
            return
        try:
            key, files = part_key(*part), [(data_path(*part), content)]
            finder_cache.write_entry(self.root, key, files, PARTS, finder_cache.PARTS_KEEP)
        except (OSError, finder_cache.Untrusted) as error:
            self.tell(f"finder cache not written: {error}")


def site_files(say: Say) -> list[tuple[str, str]]:
    """The finder's files this build offers (`offered_releases`, `offered_models`): the
    index, then each part's data file; `say` gets a line at once, then one per part."""
    releases, models = offered_releases(), offered_models()
    parts = [(release, model) for release in releases for model in models]
    say(
        f"finder: {len(parts)} parts to publish ({len(releases)} release(s): "
        f"{', '.join(releases)}; {len(models)} models); looking in the build cache"
    )
    store, start = _Store(say), time.perf_counter()
    with store.locked():
        found = {part: text for part in parts if (text := store.read(part)) is not None}
        missing = [part for part in parts if part not in found]
        if missing:
            say(
                f"finder: {len(found)} of {len(parts)} parts read from the build cache; "
                f"computing {len(missing)}"
            )
        # Each part is stored as soon as it is done (its rows are dropped then): a build
        # stopped on the way keeps what it finished.
        with closing(finder.stream_rows(missing, say)) as stream:
            for part, rows in stream:
                found[part] = finder.part_script(part, rows)
                store.write(part, found[part])
    say(f"finder: {len(parts)} parts ready in {time.perf_counter() - start:.0f} s")
    index = finder.index_script(releases, models)
    return [(INDEX_PATH, index), *((data_path(*part), found[part]) for part in parts)]


OFFERED_MARKER = "<!-- compat:offered-releases -->"
"""Where the finder's page says which releases this build offers."""


def name_offered(markdown: str) -> str:
    """The finder page's Markdown with the marker replaced by the releases this build
    offers; ValueError when the page lost its marker (the page would not say it)."""
    if OFFERED_MARKER not in markdown:
        raise ValueError(f"the finder's page has no {OFFERED_MARKER} to name its releases")
    releases = offered_releases()
    named = ", ".join(f"SGLang {release}" for release in releases)
    return markdown.replace(OFFERED_MARKER, f"This build offers {named}.")
