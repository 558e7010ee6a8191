"""Where the page's changes were read, and the cells they bring, for the release entries.

A documented change names its source: a commit of SGLang's documentation, the page of a
release's tag, or a line of a release's wheel (for a row the page never had, read from the
backend's code). These functions build that evidence and the cells that carry it.
"""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.cells import Cell, CellKind
from compat.vocab.evidence import Evidence

SGLANG = "https://github.com/sgl-project/sglang"
# The last copy of the page that could be read: later than the v0.5.18 tag (it holds a note of
# PR #38758, opened in September 2026); its tables equal those of v0.5.18, cell for cell.
LAST_KNOWN_COPY = "0350f48f1b7298206bf2101ca51a8bc94d760f97"

LATER_RELEASES = Evidence(
    source="SGLang 0.5.12 to 0.5.23 wheels: attention backend registry and start-up checks",
    url="https://pypi.org/project/sglang/#history",
    note="Backends and KV dtypes added after the baseline, and what they need.",
)


def wheel(release: str, file: str, function: str, line: int, shows: str) -> Evidence:
    """A line of a release's code: the file and function it sits in, and what it shows."""
    return Evidence(source=f"sglang {release} wheel, {file}, {function} (line {line})", note=shows)


def read_from_code(evidence: Evidence) -> bool:
    """Whether `evidence` is a place in a release's code (as `wheel` and `shared.code` say)."""
    return evidence.source.startswith("sglang ") and " wheel, " in evidence.source


def commit(sha: str, pr: int, date: str, title: str) -> Evidence:
    """A commit of SGLang's documentation that changed the page."""
    return Evidence(
        source=f"SGLang docs commit {sha[:10]} (PR #{pr}, {date})",
        url=f"{SGLANG}/commit/{sha}",
        note=title,
    )


def tagged_page(release: str, path: str) -> Evidence:
    """The attention backend page as the release's tag holds it."""
    return Evidence(
        source=f"SGLang {release}'s attention backend page (tag v{release})",
        url=f"{SGLANG}/blob/v{release}/{path}",
    )


def unread_page(release: str) -> Evidence:
    """The page of a release whose tag could not be read: the last known copy stands in for
    it. The link's text names what it opens (the copy); that the tag could not be read is
    the change's own sentence."""
    return Evidence(
        source=f"SGLang's attention backend page, the last known copy (for {release})",
        url=f"{SGLANG}/blob/{LAST_KNOWN_COPY}/docs/docs/advanced_features/attention_backend.mdx",
        note=(
            "The page's history past August 2026 is not reachable. The last known copy (this "
            "link, from September 2026 or later) has tables equal, cell for cell, to those of "
            "0.5.18: no change of the tables is known for this release, and none is ruled out."
        ),
    )


def backed(cell: Cell, evidence: Evidence) -> Cell:
    """`cell`, read from `evidence`."""
    return replace(cell, evidence=evidence)


def not_stated(evidence: Evidence, why: str) -> Cell:
    """A cell the code read does not settle, and why."""
    note = f"{evidence.note}. Not settled: {why}."
    return Cell(CellKind.NOT_STATED, evidence=replace(evidence, note=note))
