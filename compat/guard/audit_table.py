"""The audit as a Markdown table a maintainer can paste into an upstream issue."""

from __future__ import annotations

from compat.guard.audit_facts import CodeVerdict, Dispute

HEADERS = (
    "Table", "Backend", "Column", "Page says", "SGLang's code", "Where (file:line)",
    "Isolating launch", "Page's evidence",
)  # fmt: skip


def audit_rows(disputes: tuple[Dispute, ...]) -> tuple[tuple[str, ...], ...]:
    """One row of cells per dispute, in `HEADERS` order."""
    return tuple(_row(dispute) for dispute in disputes)


def _row(dispute: Dispute) -> tuple[str, ...]:
    where = "<br>".join(
        f"`{launch.setting}`: `{site}`" if site else f"`{launch.setting}`: no record"
        for launch, site in dispute.sites
    )
    if dispute.verdict is CodeVerdict.RUNS:
        refused = dispute.evidence_launch.findings[0].backend
        code = f"runs it: the check that refuses `{refused}` accepts `{dispute.backend}`"
    else:
        rules = ", ".join(f"`{r}`" for r in dict.fromkeys(
            f.rule for launch in dispute.launches for f in launch.findings))  # fmt: skip
        code = f"{dispute.verdict.value} ({rules})"
    launch = dispute.launch
    evidence = dispute.page_evidence
    cited = f"[{evidence.source}]({evidence.url})" if evidence.url else evidence.source
    return (
        dispute.arch.label,
        f"{dispute.display_name} (`{dispute.backend}`)",
        dispute.header,
        dispute.documented,
        code,
        where,
        f"`{launch.command}` on {launch.machine}",
        cited,
    )


def audit_markdown(release: str, disputes: tuple[Dispute, ...]) -> str:
    """The audit of `release` as Markdown: a heading line and the table (or "none")."""
    if not disputes:
        return (
            f"SGLang {release}: no documented cell is contradicted by the release's own code "
            "(every ✅ the code can isolate starts, no ❌ is accepted by its own check)."
        )
    count = len(disputes)
    lines = [
        f"SGLang {release}: {count} documented cell{'s' * (count != 1)} that the release's "
        "own code contradicts.",
        "",
        f"| {' | '.join(HEADERS)} |",
        "|" + "---|" * len(HEADERS),
        *(f"| {' | '.join(cells)} |" for cells in audit_rows(disputes)),
    ]
    return "\n".join(lines)
