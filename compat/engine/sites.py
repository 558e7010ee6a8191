"""Where a release's own code raised on a launch: `file:line (function)`, per release.

The record is taken from each release's code, never typed: `tools/audit_sites.py` runs the
audit's isolating launches through the release's own start-up code (the conformance
harness) and writes `compat/engine/sites_data.py`. A launch is keyed by the machine, the
model's architecture and its SGLang flags, as the audit writes them.
"""

from __future__ import annotations

from compat.engine.sites_data import SITES
from compat.vocab.terms import Arch


def raised_at(release: str, machine: str, arch: Arch, argv: tuple[str, ...]) -> str | None:
    """Where `release`'s code raised on this launch, or None when no record of it is kept."""
    return SITES.get(release, {}).get(site_key(machine, arch, argv))


def site_key(machine: str, arch: Arch, argv: tuple[str, ...]) -> str:
    """The record's key of one launch: one line, as a reader would type it."""
    return f"{machine} {arch.value}: {' '.join(argv)}"
