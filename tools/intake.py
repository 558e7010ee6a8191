"""Intake of a new SGLang release: what its code changed, as a maintainer's to-do list.

    python tools/intake.py 0.5.24            # the newest modelled release's rules, as 0.5.24
    python tools/intake.py --write 0.5.24    # ... and record it when nothing changed
    python tools/intake.py --rules 0.5.22 0.5.23   # a doctored history: 0.5.22's rules

The release's wheel is fetched with `pip download --no-deps` (cached with the conformance
wheels); its parser's flags are compared with the previous release's list (tools/flags.py's
machinery); its `--attention-backend` and `--kv-cache-dtype` choices and its attention
registry with the previous release's; then the whole conformance grid and the model zoo run
through its own start-up code, and the guard answers each launch with the previous
release's rules labelled as the new release (`compat.releases.stand_in`). A disagreement
that the release before already has on the same launch (run through its own code) is a gap
of the model, not a change: it is counted apart. Every other one is grouped by the SGLang
function and `file:line` that raised, or that last wrote the backend or page-size field.

Exit 0: the previous rules already agree (`--write` then records the release as
`RELEASE = Release("X")` with its flag list); 1: there is something to model; 2: invalid
input or no wheel. A release already modelled is checked against its own rules.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.wheel import WheelUnavailableError, source_root
from intake_report import FlagDelta, Mismatch, NameDelta, Section, section_lines, todo

ROOT = Path(__file__).resolve().parents[1]
_REGISTERED = re.compile(r"register_attention_backend\(\s*[\"'](\w+)[\"']")


def registry(version: str) -> tuple[str, ...]:
    """The backends SGLang `version` registers (`@register_attention_backend("name")`)."""
    root = source_root(version)
    names: dict[str, None] = {}
    for path in sorted((root / "sglang").rglob("*.py")):
        names.update(dict.fromkeys(_REGISTERED.findall(path.read_text(encoding="utf-8"))))
    return tuple(names)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python tools/intake.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("release", help="the SGLang release to take in, e.g. 0.5.24")
    parser.add_argument(
        "--rules",
        metavar="RELEASE",
        help="answer with this modelled release's rules (default: the newest modelled, or "
        "the release's own when it is modelled)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="when nothing disagrees, record the release: compat/releases/vX.py holding "
        "RELEASE = Release(X), and its flag list",
    )
    parser.add_argument("--workers", type=int, default=2, help="parallel interpreters")
    parser.add_argument(
        "--machines", type=_names, metavar="A,B", help="only these machines (H200, B200, ...)"
    )
    parser.add_argument("--models", type=_names, metavar="A,B", help="only these models")
    parser.add_argument("--no-zoo", action="store_true", help="the grid alone, no model zoo")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    # Only the release list is imported before stand_in(): the guard reads it on import.
    from compat import releases

    release = args.release
    modelled = release in releases.ENTRIES
    rules_of = args.rules or (release if modelled else releases.NEWEST)
    problem = _release_problem(releases, release, rules_of, args)
    if problem:
        print(f"intake: {problem}", file=sys.stderr)
        return 2
    labelled = rules_of != release
    baseline = _baseline(releases.RELEASE_NAMES, release, rules_of)
    try:
        source_root(release)
        from conformance.flags import release_flags_in_subprocess
        from conformance.grid import backends, kv_dtypes

        flags = release_flags_in_subprocess(release)
        choices, kv = backends(release), kv_dtypes(release)
        registered, registered_before = registry(release), registry(rules_of)
    except WheelUnavailableError as error:
        print(f"intake: {error}", file=sys.stderr)
        return 2
    from compat.engine.parser import encoding, lookup

    committed = encoding.committed_releases()
    delta = FlagDelta.between(lookup.release_flags(rules_of), flags)
    if labelled:
        releases.stand_in(release, rules_of=rules_of)
        lookup.stand_in(release, flags, after=rules_of)
    rules = releases.RELEASES[release]
    lines = [
        f"intake of SGLang {release}: its own start-up code, against "
        + (f"the rules of {rules_of} labelled {release}" if labelled else "its own rules"),
        "",
        f"flags (SGLang {release}'s parser against the list of {rules_of}):",
        *delta.lines(),
        "backends and KV dtypes:",
        NameDelta.between(
            _against("--attention-backend choices", rules_of), rules.backend_choices, choices
        ).line(),
        NameDelta.between(
            f"attention registry (against SGLang {rules_of}'s)", registered_before, registered
        ).line(),
        NameDelta.between(
            _against("--kv-cache-dtype choices", rules_of), rules.kv_choices, kv
        ).line(),
        "",
        "launches through SGLang's own start-up code:",
    ]
    sections = [_section("conformance grid", release, baseline, args, zoo=False)]
    if not args.no_zoo:
        sections.append(_section("model zoo", release, baseline, args, zoo=True))
    lines += [section_lines(section, release, baseline or "-") for section in sections]
    found = sum(len(section.found) for section in sections)
    lines.append("")
    if found:
        lines.append(f"to do: {found:,} disagreements, grouped by where SGLang {release} decided:")
        lines += todo(sections, release, rules_of, baseline or "-")
    else:
        known = sum(section.known for section in sections)
        lines.append(
            f"nothing to model: the rules of {rules_of} agree with SGLang {release} on every "
            + ("launch" if not known else f"launch where they agree with SGLang {baseline}")
            + "."
        )
        lines += _record(release, modelled, rules_of, committed, flags, args)
    lines.append(f"({time.perf_counter() - started:.0f} s)")
    print("\n".join(lines))
    return 1 if found else 0


def _against(what: str, rules_of: str) -> str:
    return f"{what} (against the rules of {rules_of})"


def _baseline(names: Sequence[str], release: str, rules_of: str) -> str | None:
    """The release whose own code and rules tell a gap of the model from a change: the one
    whose rules answer, or for a modelled release judged by its own, the one before it."""
    if rules_of != release:
        return rules_of
    index = names.index(release)
    return names[index - 1] if index else None


def _release_problem(releases: Any, release: str, rules_of: str, args: Any) -> str | None:
    """Why the command cannot run, or None."""
    key, newest = releases.release_key(release), releases.release_key(releases.NEWEST)
    if key is None:
        return f"{release!r} is not a release name such as {releases.NEWEST}"
    if release not in releases.ENTRIES and key <= newest:
        return (
            f"SGLang {release} is not modelled and not newer than the newest modelled release "
            f"({releases.NEWEST}): intake takes in a newer one, or checks a modelled one"
        )
    if rules_of not in releases.ENTRIES:
        return f"--rules {rules_of}: not a modelled release ({', '.join(releases.ENTRIES)})"
    if rules_of != release and releases.release_key(rules_of) >= key:
        return f"--rules {rules_of} must be a release before {release}"
    if args.write and (release in releases.ENTRIES or rules_of != releases.NEWEST):
        return "--write records a release newer than the newest modelled, with that one's rules"
    return None


def _section(name: str, release: str, baseline: str | None, args: Any, *, zoo: bool) -> Section:
    """One part of the run: SGLang `release` on every launch, judged; the disagreements
    the baseline release has too on the same launch (its own code, its own rules) apart."""
    from conformance.compare import disagreements

    rows = _rows(release, args, zoo)
    found = disagreements(rows)
    before = _baseline_outcomes(baseline, [item.row for item in found], args, zoo)
    earlier = {_key(item.row): item for item in disagreements(before.values())}
    new = [
        Mismatch(item, before[_key(item.row)]["outcome"] if _key(item.row) in before else None)
        for item in found
        if not _same(earlier.get(_key(item.row)), item)
    ]
    return Section(name, len(rows), tuple(new), len(found) - len(new))


def _key(row: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    return row["gpu"], row["model"], tuple(row["argv"])


def _same(earlier: Any, item: Any) -> bool:
    """The same disagreement on both releases: SGLang's verdict and the rules' answer."""
    if earlier is None:
        return False

    def answer(found: Any) -> object:
        return found.product.key() if found.product else ("raised", found.raised)

    return bool(earlier.sglang.key() == item.sglang.key() and answer(earlier) == answer(item))


def _rows(release: str, args: Any, zoo: bool) -> list[dict[str, Any]]:
    """SGLang `release`'s outcome on every launch (the whole grid or zoo is cached)."""
    from conformance.dump import rows

    if not _filtered(args):
        return rows(release, workers=args.workers, cache=True, zoo=zoo)
    launches = [launch for launch in _launches(release, zoo) if _chosen(launch, args)]
    return _run(release, launches, args.workers, zoo)


def _launches(release: str, zoo: bool) -> list[Any]:
    if zoo:
        from conformance.zoo import zoo as zoo_launches

        return zoo_launches(release)
    from conformance.grid import grid

    return grid(release)


def _chosen(launch: Any, args: Any) -> bool:
    return (not args.machines or launch.gpu in args.machines) and (
        not args.models or launch.model in args.models
    )


def _run(release: str, launches: Sequence[Any], workers: int, zoo: bool) -> list[dict[str, Any]]:
    from conformance.harness import run_many

    outcomes = run_many(release, launches, workers=workers, zoo=zoo) if launches else []
    return [
        {
            "version": release,
            "gpu": launch.gpu,
            "model": launch.model,
            "argv": list(launch.argv),
            "outcome": outcome.to_json(),
        }
        for launch, outcome in zip(launches, outcomes, strict=True)
    ]


# Beyond this many launches to run again, the baseline's whole table is run (and cached).
_WHOLE_TABLE = 1_000


def _baseline_outcomes(
    baseline: str | None, rows: list[dict[str, Any]], args: Any, zoo: bool
) -> dict[tuple[str, str, tuple[str, ...]], dict[str, Any]]:
    """The baseline release's own outcome on each launch of `rows`: from its cached whole
    table when there is one (or when many launches are wanted), else run now."""
    if baseline is None or not rows:
        return {}
    from conformance.dump import _cache_file
    from conformance.dump import rows as table_of
    from conformance.harness import Launch

    wanted = {_key(row) for row in rows}
    if _cache_file(baseline, zoo).is_file() or (len(wanted) > _WHOLE_TABLE and not _filtered(args)):
        whole = table_of(baseline, workers=args.workers, cache=True, zoo=zoo)
        found = {_key(row): row for row in whole if _key(row) in wanted}
    else:
        found = {}
    missing = [Launch(*key[:2], key[2]) for key in sorted(wanted - set(found))]
    for row in _run(baseline, missing, args.workers, zoo):
        found[_key(row)] = row
    return found


def _filtered(args: Any) -> bool:
    return bool(args.machines or args.models)


def _record(
    release: str,
    modelled: bool,
    rules_of: str,
    committed: dict[str, dict[str, str]],
    flags: dict[str, str],
    args: Any,
) -> list[str]:
    """What to do now that nothing disagrees: record the release as unchanged."""
    if modelled:
        return [f"SGLang {release} is modelled already (compat/releases/{_module(release)})."]
    entry = ROOT / "compat" / "releases" / _module(release)
    if not args.write:
        return [
            f"record it as unchanged: compat/releases/{entry.name} holding "
            f'RELEASE = Release("{release}"), with its flag list; '
            f"`python tools/intake.py --write {release}` writes both, then run "
            "`compat docs && compat export`."
        ]
    from compat.engine.parser import encoding

    entry.write_text(
        f'"""SGLang {release}: no change to the start-up rules or the page since {rules_of} '
        '(tools/intake.py ran its wheel)."""\n\n'
        "from __future__ import annotations\n\n"
        "from compat.releases.entry import Release\n\n"
        f'RELEASE = Release("{release}")\n',
        encoding="utf-8",
    )
    encoding.DATA_MODULE.write_text(
        encoding.render_data({**committed, release: flags}), encoding="utf-8"
    )
    return [
        f"wrote compat/releases/{entry.name} and the flag list of {release} "
        f"({encoding.DATA_MODULE.relative_to(ROOT)}); now run `compat docs && compat export` "
        "and commit them with the regenerated pages."
    ]


def _module(release: str) -> str:
    return "v" + release.replace(".", "_") + ".py"


if __name__ == "__main__":
    sys.exit(main())
