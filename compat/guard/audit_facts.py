"""What the audit finds: a disputed cell, the launches that show it, the code's verdict.

The data of `compat.guard.audit` (which computes it) and its words: the summary a page's
tooltip shows, the JSON `compat audit --json` prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.claim.columns import ColumnId
from compat.engine.sites import raised_at
from compat.guard.report import Finding
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, Term


class CodeVerdict(Term):
    """What the release's code does with a cell's launch."""

    REFUSES = "refuses at start-up"
    FAILS = "fails at backend build"
    RUNS = "runs"


@dataclass(frozen=True)
class Launch:
    """One isolating launch: SGLang flags on a machine, and what the engine found."""

    flags: tuple[tuple[str, str], ...]
    machine: str
    setting: str
    """The column's setting as a finding quotes it (`--kv-cache-dtype nvfp4`)."""
    findings: tuple[Finding, ...]
    """The engine's errors (start-up or backend build); none when the code runs it."""
    values: tuple[tuple[str, object], ...] = ()
    """The AttentionConfig fields that set the column's value (`column_values`)."""

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(part for pair in self.flags for part in pair)

    @property
    def command(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class Dispute:
    """One documented cell that its release's own code contradicts."""

    release: str
    arch: Arch
    backend: str
    display_name: str
    column: ColumnId
    header: str
    documented: str
    """The cell as the page shows it (✅ or ❌)."""
    page_evidence: Evidence
    verdict: CodeVerdict
    launches: tuple[Launch, ...]
    """The isolating launches that show it: refused ones for a ✅, running ones for a ❌."""
    site: str | None
    """Where the release's code raised (for a ❌: the check that accepts this backend),
    `file:line (function)`; None when no record of it is kept."""
    evidence_launch: Launch
    """The launch whose refusal is the code's evidence: this cell's own for a ✅; for a ❌,
    another backend's that the same check refuses while naming this one as accepted."""
    accepted_by: tuple[Finding, ...] = ()
    """For a ❌: the code's refusal of another backend whose allowed list names this one."""

    @property
    def launch(self) -> Launch:
        return self.launches[0]

    @property
    def refusals(self) -> tuple[Launch, ...]:
        """The cell's own launches the code refuses or fails (none for a disputed ❌)."""
        return () if self.verdict is CodeVerdict.RUNS else self.launches

    @property
    def sites(self) -> tuple[tuple[Launch, str | None], ...]:
        """Each launch that is evidence, with where the release's code raised on it."""
        launches = self.refusals or (self.evidence_launch,)
        return tuple((launch, _site(launch, self.release, self.arch)) for launch in launches)

    @property
    def code_says(self) -> str:
        """What the code does, in words, with where."""
        if self.verdict is CodeVerdict.RUNS:
            where = f" at {self.site}" if self.site else ""
            refused = self.evidence_launch.findings[0].backend
            return (
                f"runs it with {self.launch.setting}: the check{where}, which refuses "
                f"{refused}, accepts {self.backend}"
            )
        parts = [
            f"{launch.setting}: " + (site or "no record of the line") for launch, site in self.sites
        ]
        return f"{self.verdict.value} ({'; '.join(parts)})"

    @property
    def summary(self) -> str:
        """One line for a tooltip: the page's word and the code's."""
        return f"Disputed: the page says {self.documented}; SGLang {self.release} {self.code_says}"

    def to_dict(self) -> dict[str, object]:
        return {
            "release": self.release,
            "table": self.arch.label,
            "backend": self.backend,
            "column": self.column.value,
            "header": self.header,
            "page_says": self.documented,
            "code_does": self.verdict.value,
            "site": self.site,
            "sites": [{"setting": launch.setting, "site": site} for launch, site in self.sites],
            "launches": [
                {
                    "flags": launch.command,
                    "machine": launch.machine,
                    "setting": launch.setting,
                    "findings": [f.to_dict() for f in launch.findings],
                }
                for launch in self.launches
            ],
            "page_evidence": {"source": self.page_evidence.source, "url": self.page_evidence.url},
        }


def _site(launch: Launch, release: str, arch: Arch) -> str | None:
    """Where the code raised on `launch`: the backend build's own line (the engine holds it),
    else the start-up line recorded from the release's code (`tools/audit_sites.py`)."""
    built = next((f.raised_at for f in launch.findings if f.raised_at is not None), None)
    return built or raised_at(release, launch.machine, arch, launch.argv)
