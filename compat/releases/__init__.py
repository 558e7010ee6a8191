"""SGLang's releases, each read from its own code: the start-up rules and the page, per release.

One module per release (`v0_5_7.py`, `v0_5_8.py`, ...): 0.5.7 states the start-up rules in
full and the page of PR #14467; every later release lists only what changed since the one
before, each change with where it was read. The list of releases is the list of those
modules, so modelling a new release is adding its file. A release's rules and its page are
folded from the baseline on first use, so a guard loads only what it predicts.

The start-up rules (`compat.engine`) and the page (`compat.claim`) are folded apart: no
start-up rule is ever computed from a documented cell.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from functools import cache
from operator import attrgetter
from typing import Any, cast

from msgspec.structs import replace

from compat.claim.cells import Cell
from compat.claim.matrix import Matrix, Row
from compat.engine.rules import ReleaseRules
from compat.releases.build import build_rules
from compat.releases.entry import Change, DocChange, Release
from compat.releases.image import image_cuda, rocm_image
from compat.releases.kernels import kernel_rules
from compat.releases.shapes import shape_rules
from compat.releases.sub_startup import sub_refusals
from compat.releases.verify import verify_rules
from compat.releases.versions import SortKey, parse_version
from compat.vocab.evidence import Evidence

__all__ = [
    "ENTRIES",
    "NEWEST",
    "RELEASES",
    "RELEASE_NAMES",
    "Change",
    "DocChange",
    "Release",
    "UnknownReleaseError",
    "answering_rules",
    "doc_changes_of",
    "modelled_release",
    "newer_than_modelled",
    "release_key",
    "release_matrix",
    "release_rules",
    "releases_accepting",
    "stand_in",
]

ChoicesOf = Callable[[ReleaseRules], Collection[str]]
"""A release's choices for one flag, read from its rules."""

_MODULE = re.compile(r"^v(\d+)_(\d+)_(\d+)$")


def _discover() -> dict[str, Release]:
    """Every release module of this package, oldest first."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        match = _MODULE.match(module.name)
        if match is not None:
            found.append((tuple(map(int, match.groups())), module.name))
    entries = {}
    for _, name in sorted(found):
        release: Release = importlib.import_module(f"{__name__}.{name}").RELEASE
        entries[release.name] = release
    return entries


ENTRIES: Mapping[str, Release] = _discover()
"""Release name -> its entry, oldest first."""
RELEASE_NAMES: tuple[str, ...] = tuple(ENTRIES)
BASELINE: str = RELEASE_NAMES[0]
NEWEST: str = RELEASE_NAMES[-1]


def _baseline() -> Any:
    return importlib.import_module(f"{__name__}.v{BASELINE.replace('.', '_')}")


class _Releases(Mapping[str, ReleaseRules]):
    """Release -> start-up rules, folded from the baseline on first use."""

    def __init__(self) -> None:
        self._folded: dict[str, ReleaseRules] = {}

    def __getitem__(self, release: str) -> ReleaseRules:
        rules = self._folded.get(release)
        if rules is None:
            if release not in ENTRIES:
                raise KeyError(release)
            if release == BASELINE:
                baseline = _baseline().RULES
                rules = replace(
                    baseline,
                    build=build_rules(BASELINE, baseline.build),
                    sub_refusals=sub_refusals(BASELINE, ()),
                    kernels=kernel_rules(BASELINE, baseline.kernels),
                    verify=verify_rules(
                        BASELINE, baseline.verify, baseline.ngram, baseline.eagle_family
                    ),
                    shapes=shape_rules(BASELINE, baseline.shapes),
                )
            else:
                before = self[RELEASE_NAMES[RELEASE_NAMES.index(release) - 1]]
                rules = _apply(before, ENTRIES[release])
            self._folded[release] = rules
        return rules

    def __iter__(self) -> Iterator[str]:
        return iter(RELEASE_NAMES)

    def __len__(self) -> int:
        return len(RELEASE_NAMES)

    def __contains__(self, release: object) -> bool:
        return release in ENTRIES

    def forget(self) -> None:
        """Fold again on next use (the release list changed: `stand_in`)."""
        self._folded.clear()


def _apply(before: ReleaseRules, entry: Release) -> ReleaseRules:
    updates: dict[str, Any] = {"release": entry.name}
    updates["build"] = build_rules(entry.name, before.build)
    updates["sub_refusals"] = sub_refusals(entry.name, before.sub_refusals)
    updates["kernels"] = kernel_rules(entry.name, before.kernels)
    updates["verify"] = verify_rules(
        entry.name, before.verify, before.ngram, before.eagle_family
    )
    updates["shapes"] = shape_rules(entry.name, before.shapes)
    updates["image_cuda"] = image_cuda(entry.name, before.image_cuda)
    updates["rocm_image"] = rocm_image(entry.name, before.rocm_image)
    for change in entry.changes:
        for name, value in change.updates.items():
            current = updates.get(name, getattr(before, name))
            updates[name] = value(current) if callable(value) else value
    return replace(before, **updates)


RELEASES: Mapping[str, ReleaseRules] = _Releases()

class UnknownReleaseError(ValueError):
    """A release this package does not model; `reason` says why, without the known list."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{reason}; known releases: {', '.join(RELEASES)}")


def release_key(version: str) -> SortKey | None:
    """The PEP 440 order of a release name, or None for a name that is not a version."""
    parsed = parse_version(version)
    return None if parsed is None else parsed.key


def modelled_release(version: str) -> str | None:
    """The modelled release `version` is: its own name, or one it is a pre, post, dev or
    local version of (0.5.23.post1, 0.5.23+cu128, 0.5.23.0); None when there is none."""
    if version in ENTRIES:
        return version
    parsed = parse_version(version)
    if parsed is None:
        return None
    for name in RELEASE_NAMES:
        known = parse_version(name)
        if known is not None and known.public == parsed.public:
            return name
    return None


def newer_than_modelled(version: str) -> bool:
    """Whether `version` is a release after the newest one modelled (0.5.24, 0.5.23.1, 0.6,
    1.0, 0.6.0rc1), by PEP 440; a post or local version of the newest is that release."""
    key, newest = release_key(version), release_key(NEWEST)
    if key is None or newest is None or modelled_release(version) is not None:
        return False
    return key > newest


def release_rules(version: str) -> ReleaseRules:
    """The rules of `version` (a post, local, pre or dev version shares its release's rules).

    Raises UnknownReleaseError for a release not modelled: one newer than the newest
    modelled (naming it, and how to ask for it), one older than the oldest, or a name
    that is not a release.
    """
    name = modelled_release(version)
    if name is not None:
        return RELEASES[name]
    if newer_than_modelled(version):
        raise UnknownReleaseError(
            f"SGLang {version} is newer than the newest release modelled ({NEWEST}): "
            f"--sglang-version {NEWEST} asks for its answers"
        )
    key, oldest = release_key(version), release_key(BASELINE)
    if key is not None and oldest is not None and key < oldest:
        raise UnknownReleaseError(
            f"SGLang {version} is older than the oldest release modelled ({BASELINE})"
        )
    raise UnknownReleaseError(f"SGLang {version} is not modelled")


def answering_rules(version: str) -> tuple[ReleaseRules, str | None]:
    """The rules that answer for `version`, and `version` itself when it is newer than the
    newest release modelled: then the newest modelled release answers (an installed SGLang
    is often a release ahead of this package). Any other release not modelled raises
    UnknownReleaseError, as `release_rules` does."""
    if newer_than_modelled(version):
        return RELEASES[NEWEST], version
    return release_rules(version), None


@cache
def release_matrix(release: str) -> Matrix:
    """The page's matrix as of `release`: the baseline with every documented change since."""
    if release not in ENTRIES:
        raise KeyError(release)
    if release == BASELINE:
        before: Matrix = _baseline().DOCUMENTED
    else:
        before = release_matrix(RELEASE_NAMES[RELEASE_NAMES.index(release) - 1])
    changes = ENTRIES[release].doc_changes
    return _apply_doc(before, changes) if changes else before


def _apply_doc(matrix: Matrix, changes: tuple[DocChange, ...]) -> Matrix:
    """`matrix` with each of `changes` applied, in order (`DocChange` lists what moves);
    one matrix per release, validated once."""
    backends = {b.name: b for b in matrix.backends}
    rows = {t.arch: {r.backend: r for r in t.rows} for t in matrix.tables}
    page = matrix.tables[0].evidence
    aliases = dict(matrix.aliases)
    columns = {c.id: c for c in matrix.columns}
    requirements = {r.dtype: r for r in matrix.dtype_requirements}
    sources = dict.fromkeys(matrix.sources)
    for change in changes:
        gone = frozenset(change.removed)
        for name in gone:
            del backends[name]
            for table_rows in rows.values():
                table_rows.pop(name, None)
        aliases = {a: b for a, b in aliases.items() if a not in gone and b not in gone}
        aliases.update(change.aliases)
        for backend in change.backends:
            backends[backend.name] = backend
            if backend.evidence is not None:
                sources.setdefault(backend.evidence)
        for new in change.rows:
            rows[new.arch][new.row.backend] = _sourced_row(new.row, change.evidence)
        for cell_change in change.cells:
            row = rows[cell_change.arch][cell_change.backend]
            cell = _sourced(cell_change.cell, change.evidence)
            rows[cell_change.arch][row.backend] = replace(
                row, cells={**row.cells, cell_change.column: cell}
            )
        page = change.page or page
        columns.update({c.id: c for c in change.columns})
        requirements.update({r.dtype: r for r in change.requirements})
        for dtype in change.dropped_dtypes:
            del requirements[dtype]
    return replace(
        matrix,
        backends=tuple(backends.values()),
        tables=tuple(
            replace(t, rows=tuple(rows[t.arch].values()), evidence=page) for t in matrix.tables
        ),
        columns=tuple(columns.values()),
        dtype_requirements=tuple(requirements.values()),
        aliases=aliases,
        sources=tuple(sources),
    )


def _sourced(cell: Cell, evidence: Evidence) -> Cell:
    """A changed cell keeps its own evidence, else takes its change's."""
    return cell if cell.evidence is not None else replace(cell, evidence=evidence)


def _sourced_row(row: Row, evidence: Evidence) -> Row:
    return replace(row, cells={c: _sourced(cell, evidence) for c, cell in row.cells.items()})


# The layers that read the release list when they are imported (NEWEST, RELEASE_NAMES).
_READERS = ("compat.inputs", "compat.guard", "compat.publish", "compat.cli", "compat.sglang_plugin")


def stand_in(name: str, rules_of: str | None = None) -> Release:
    """For `tools/intake.py` only: model release `name` as one that changed nothing since
    `rules_of` (default: the newest modelled), for the rest of this process.

    `RELEASES[name]` is then `rules_of`'s rules and page, labelled `name`, exactly as a file
    holding `RELEASE = Release(name)` would make them; releases after `rules_of` are set
    aside (so 0.5.22's rules can stand in for 0.5.23). This answers "do the previous rules
    already hold for a new release?". Call it before any module that reads the release
    list is imported; RuntimeError otherwise.
    """
    global RELEASE_NAMES, NEWEST
    loaded = sorted(m for m in sys.modules if m.startswith(_READERS))
    if loaded:
        raise RuntimeError(f"stand_in() must come before importing {', '.join(loaded[:3])}")
    base = NEWEST if rules_of is None else rules_of
    key, base_key = release_key(name), release_key(base)
    if base not in ENTRIES or base_key is None:
        raise UnknownReleaseError(f"SGLang {base} is not modelled")
    if key is None or key <= base_key:
        raise UnknownReleaseError(f"SGLang {name} is not a release after {base}")
    entry = Release(name)
    kept = {r: ENTRIES[r] for r in RELEASE_NAMES[: RELEASE_NAMES.index(base) + 1]}
    entries = cast(dict[str, Release], ENTRIES)
    entries.clear()
    entries.update(kept)
    entries[name] = entry
    RELEASE_NAMES = tuple(entries)
    NEWEST = name
    cast(_Releases, RELEASES).forget()
    release_matrix.cache_clear()
    return entry


def releases_accepting(attribute: str | ChoicesOf, value: str) -> tuple[str, ...]:
    """The releases whose `attribute` (e.g. kv_choices, or a function of the release's
    rules that answers its choices) holds `value`."""
    choices_of = attrgetter(attribute) if isinstance(attribute, str) else attribute
    return tuple(r for r, rules in RELEASES.items() if value in choices_of(rules))


def changes_of(release: str) -> tuple[Change, ...]:
    """What changed in `release`'s start-up rules (nothing for the baseline)."""
    return ENTRIES[release].changes


def doc_changes_of(release: str) -> tuple[DocChange, ...]:
    """What changed on `release`'s page (nothing for the baseline)."""
    return ENTRIES[release].doc_changes
