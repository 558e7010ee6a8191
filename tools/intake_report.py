"""The intake's to-do report: what a new SGLang release changed, grouped by where.

`tools/intake.py` (conformance/intake.py) runs a new release's own start-up code with the
previous release's rules labelled as the new one; this module turns what it found into the
maintainer's to-do list: the flags added, removed and changed; the backends and KV dtypes
added to or removed from the choices and the registry; every disagreement, grouped by the
SGLang function and `file:line` that raised or chose differently, with one example each.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from conformance.compare import Disagreement, Verdict

# The compared fields (compare.Verdict) and the ServerArgs fields that decide them.
_WRITERS = {
    "prefill": ("prefill_attention_backend", "attention_backend"),
    "decode": ("decode_attention_backend", "attention_backend"),
    "page": ("page_size",),
}


@dataclass(frozen=True)
class FlagDelta:
    """The new release's parser against the previous release's flag list."""

    added: Mapping[str, str]
    """Flag -> its arity (switch, value, optional, list)."""
    removed: tuple[str, ...]
    changed: Mapping[str, tuple[str, str]]
    """Flag -> (arity before, arity now)."""

    @classmethod
    def between(cls, before: Mapping[str, str], after: Mapping[str, str]) -> FlagDelta:
        return cls(
            {flag: arity for flag, arity in sorted(after.items()) if flag not in before},
            tuple(sorted(set(before) - set(after))),
            {
                flag: (before[flag], arity)
                for flag, arity in sorted(after.items())
                if flag in before and before[flag] != arity
            },
        )

    def lines(self) -> list[str]:
        counts = f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)}"
        out = [f"  {counts} changed"]
        out += _listed("added", [f"{f} ({a})" for f, a in self.added.items()])
        out += _listed("removed", self.removed)
        out += _listed("changed", [f"{f} ({a} -> {b})" for f, (a, b) in self.changed.items()])
        return out


def _listed(title: str, items: Sequence[str]) -> list[str]:
    """`title: a, b, ...` wrapped at 100 columns (none for no items)."""
    if not items:
        return []
    text = f"{title}: {', '.join(items)}"
    return textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="    ",
                         break_on_hyphens=False, break_long_words=False)  # fmt: skip


@dataclass(frozen=True)
class NameDelta:
    """Names (backends, KV dtypes) one list has that another lacks, and the reverse."""

    what: str
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @classmethod
    def between(cls, what: str, before: Iterable[str], after: Iterable[str]) -> NameDelta:
        old, new = list(dict.fromkeys(before)), list(dict.fromkeys(after))
        return cls(
            what, tuple(n for n in new if n not in old), tuple(n for n in old if n not in new)
        )

    def line(self) -> str:
        if not (self.added or self.removed):
            return f"  {self.what}: unchanged"
        parts = [f"added {', '.join(self.added)}"] * bool(self.added)
        parts += [f"removed {', '.join(self.removed)}"] * bool(self.removed)
        return f"  {self.what}: {'; '.join(parts)}"


@dataclass(frozen=True)
class Mismatch:
    """One disagreement of the new release, with the launch the previous release ran."""

    item: Disagreement
    before: Mapping[str, object] | None = None
    """The previous (baseline) release's SGLang outcome for the same launch, when run."""


def _where_raised(outcome: Mapping[str, object]) -> str:
    error = str(outcome.get("error") or "")
    if error.startswith("argparse"):
        return "its argument parser"
    return str(outcome.get("raised_at") or "an unknown line")


def _where_chosen(outcome: Mapping[str, object], fields: Sequence[str]) -> str:
    chosen = outcome.get("chosen_at") or {}
    assert isinstance(chosen, dict)
    places = []
    for name in fields:
        writer = next((chosen[f] for f in _WRITERS[name] if f in chosen), None)
        if writer is not None and writer not in places:
            places.append(writer)
    return ", ".join(places) or "an unknown line"


def group_of(finding: Mismatch, release: str, rules_of: str) -> str:
    """The to-do item a disagreement belongs to: what differs, and where SGLang decided."""
    item, outcome = finding.item, finding.item.row["outcome"]
    if item.product is None:
        return f"the rules of {rules_of} raise {item.raised}"[:160]
    sglang, product = item.sglang, item.product
    if sglang.refused and not product.refused:
        return f"SGLang {release} refuses, raised at {_where_raised(outcome)}"
    if product.refused:
        reasons = product.reasons
        if reasons and reasons[0] == "invalid input":
            detail = reasons[1] if len(reasons) > 1 else "?"
            return f"SGLang {release} accepts what the rules of {rules_of} call invalid: {detail}"[
                :200
            ]
        before = finding.before
        if before is not None and before.get("refused"):
            where = f"SGLang {rules_of} raised at {_where_raised(before)}"
        else:
            where = f"the rules of {rules_of} say: {(reasons or ('?',))[0][:100]}"
        return f"SGLang {release} starts where {where}"
    fields = [
        name
        for name, a, b in (
            ("prefill", sglang.prefill, product.prefill),
            ("decode", sglang.decode, product.decode),
            ("page", sglang.page, product.page),
        )
        if a != b
    ]
    where = _where_chosen(outcome, fields)
    return f"both start; SGLang {release} runs another {'+'.join(fields)}, chosen at {where}"


def _example(finding: Mismatch, release: str, rules_of: str, baseline: str) -> list[str]:
    item = finding.item
    row = item.row
    lines = [
        f"    e.g. {row['gpu']} {row['model']} {' '.join(row['argv']) or '(no flags)'}",
        f"      SGLang {release}: {_described(item.sglang, row['outcome'])}",
        "      the rules of "
        + f"{rules_of}: {item.product.describe() if item.product else 'raise ' + str(item.raised)}",
    ]
    if finding.before is not None:
        before = finding.before
        verdict = Verdict(
            bool(before["refused"]),
            _text(before.get("prefill_backend")),
            _text(before.get("decode_backend")),
            _int(before.get("page_size")),
            (str(before["error"]),) if before.get("error") else (),
        )
        lines.append(f"      SGLang {baseline}: {_described(verdict, before)}")
    return lines


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _described(verdict: Verdict, outcome: Mapping[str, object]) -> str:
    text = verdict.describe()[:220]
    if verdict.refused:
        return f"{text} (at {_where_raised(outcome)})"
    return f"{text} (chosen at {_where_chosen(outcome, ('prefill', 'decode', 'page'))})"


@dataclass(frozen=True)
class Section:
    """One part of the run: its launches, the new disagreements, those the baseline has."""

    name: str
    launches: int
    found: tuple[Mismatch, ...]
    known: int
    """Disagreements the baseline release has too on the same launch: not changes."""


def todo(sections: Sequence[Section], release: str, rules_of: str, baseline: str) -> list[str]:
    """Every new disagreement, grouped, the largest group first, one example launch each."""
    groups: dict[str, list[Mismatch]] = {}
    for section in sections:
        for finding in section.found:
            groups.setdefault(group_of(finding, release, rules_of), []).append(finding)
    lines: list[str] = []
    ordered = sorted(groups.items(), key=lambda pair: (-len(pair[1]), pair[0]))
    for number, (name, members) in enumerate(ordered, 1):
        launches = "launch" if len(members) == 1 else "launches"
        lines.append(f"{number}. {name} [{len(members)} {launches}]")
        lines += _example(members[0], release, rules_of, baseline)
    return lines


def section_lines(section: Section, release: str, baseline: str) -> str:
    agreed = section.launches - len(section.found) - section.known
    text = (
        f"  {section.name}: {section.launches:,} launches: {agreed:,} agree, "
        f"{len(section.found):,} disagree"
    )
    if section.known:
        text += (
            f", {section.known:,} disagree on {baseline} as well (gaps of the model, not "
            f"changes of {release}: not counted)"
        )
    return text
