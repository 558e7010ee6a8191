"""The releases are their entries: the list, the rules and the page each follow from files."""

from __future__ import annotations

import re
from pathlib import Path

from msgspec.structs import replace

import compat.releases as releases
from compat.releases import ENTRIES, NEWEST, RELEASE_NAMES, RELEASES, release_matrix

PACKAGE = Path(releases.__file__).parent


def _version(name: str) -> tuple[int, ...]:
    return tuple(map(int, name.split(".")))


def test_the_release_list_is_the_list_of_entry_files_in_version_order() -> None:
    files = sorted(p.stem for p in PACKAGE.glob("v*.py") if re.fullmatch(r"v\d+_\d+_\d+", p.stem))
    names = [f.removeprefix("v").replace("_", ".") for f in files]
    assert sorted(names, key=_version) == list(RELEASE_NAMES)
    assert tuple(sorted(RELEASE_NAMES, key=_version)) == RELEASE_NAMES
    assert RELEASE_NAMES[-1] == NEWEST
    for name in RELEASE_NAMES:
        assert ENTRIES[name].name == name, f"v{name.replace('.', '_')}.py names another release"


def test_every_change_says_where_it_was_read() -> None:
    for entry in ENTRIES.values():
        for change in (*entry.changes, *entry.doc_changes):
            assert change.summary and change.evidence.source, (entry.name, change)
            if change in entry.changes:
                assert change.evidence.source.startswith(f"sglang {entry.name} wheel, ")


def test_a_release_without_changes_has_the_rules_and_page_of_the_one_before() -> None:
    # Every modelled release changed its start-up rules; fold an empty entry to prove the rule
    # (a release the registry table of compat/releases/build.py has no row for: 0.5.13's holds).
    previous = RELEASES["0.5.13"]
    rules = releases._apply(previous, releases.Release("0.5.99"))
    assert rules.release == "0.5.99"
    assert replace(rules, release=previous.release) == previous
    assert releases._apply_doc(release_matrix("0.5.13"), ()) == release_matrix("0.5.13")
    # A release whose page moved no table keeps its predecessor's rows, cell for cell.
    moves = ("removed", "backends", "rows", "cells", "aliases", "columns", "requirements")
    quiet = [
        r
        for r in RELEASE_NAMES[1:]
        if not any(getattr(c, m) for c in ENTRIES[r].doc_changes for m in moves)
    ]
    assert quiet, "no release kept its predecessor's tables"
    for name in quiet:
        before = RELEASE_NAMES[RELEASE_NAMES.index(name) - 1]
        rows = [[(t.arch, r) for r in t.rows] for t in release_matrix(name).tables]
        assert rows == [[(t.arch, r) for r in t.rows] for t in release_matrix(before).tables]


def test_an_update_applies_to_the_previous_release_only_from_its_own_on() -> None:
    assert "dsv4" not in RELEASES["0.5.11"].backend_choices
    assert "dsv4" in RELEASES["0.5.12"].backend_choices
    assert "cutlass_mla" in RELEASES["0.5.19"].backend_choices
    assert "cutlass_mla" not in RELEASES["0.5.20"].backend_choices
    assert not RELEASES["0.5.18"].resolve_once and RELEASES["0.5.19"].resolve_once
    assert "dsv4" not in release_matrix("0.5.11").backend_names
    assert "dsv4" in release_matrix("0.5.12").backend_names


def test_the_baseline_page_is_the_pr_14467_matrix_and_the_rows_read_from_its_code() -> None:
    from compat.claim.baseline import MATRIX

    baseline = release_matrix(RELEASE_NAMES[0])
    added = [(new.arch, new.row) for c in ENTRIES[RELEASE_NAMES[0]].doc_changes for new in c.rows]
    assert added, "0.5.7 reads nsa's row from its code"
    for table, upstream in zip(baseline.tables, MATRIX.tables, strict=True):
        rows = [r for r in table.rows if (table.arch, r) not in added]
        assert rows == list(upstream.rows), table.arch
        assert len(rows) + sum(arch is table.arch for arch, _ in added) == len(table.rows)


def test_each_release_matrix_speaks_of_exactly_the_backends_it_accepts() -> None:
    for name in RELEASE_NAMES:
        matrix = release_matrix(name)
        spoken = {*matrix.backend_names, *matrix.aliases}
        assert spoken == set(RELEASES[name].backend_choices), name
        for alias, backend in matrix.aliases.items():
            assert backend in matrix.backend_names, (name, alias)


_WHEEL = re.compile(r"^sglang (\d+\.\d+\.\d+) wheel, sglang/srt/\S+\.py, \S.* \(line \d+\)$")


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(map(int, name.split(".")))


def test_a_cell_read_from_code_names_its_wheel_file_function_and_line() -> None:
    read = 0
    for name in RELEASE_NAMES:
        for table in release_matrix(name).tables:
            for row in table.rows:
                for cell in row.cells.values():
                    evidence = cell.evidence
                    if evidence is None or " wheel, " not in evidence.source:
                        continue
                    match = _WHEEL.match(evidence.source)
                    assert match, evidence.source
                    assert _version_key(match.group(1)) <= _version_key(name)
                    assert evidence.note, f"{evidence.source} says what it shows"
                    read += 1
    assert read > 0


def test_a_page_change_before_its_release_is_tagged_with_an_earlier_release() -> None:
    tagged = [
        (name, change.tagged_in)
        for name in RELEASE_NAMES
        for change in ENTRIES[name].doc_changes
        if change.tagged_in is not None
    ]
    assert tagged, "the two cells merged before the 0.5.7 tag are recorded as such"
    for name, tag in tagged:
        assert tag in RELEASE_NAMES and _version_key(tag) < _version_key(name)
