"""The JSON export of every release's matrix: valid, deterministic, complete, committed fresh."""

from __future__ import annotations

import copy
import json
import shutil
import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import pytest
from cells import fp4_partner_candidate, opposite, with_cell
from jsonschema import Draft202012Validator
from typing_extensions import NotRequired, Required

from compat.claim.baseline import MATRIX
from compat.claim.cells import CellKind
from compat.claim.columns import ColumnId
from compat.cli import main
from compat.publish.export import (
    EXPORT_PATH,
    SCHEMA_PATH,
    export_matrix,
    matrix_export,
    render_export,
    render_schema,
)
from compat.publish.export_shapes import MatrixJson
from compat.publish.outputs import project_root
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform

ROOT = project_root()
BASELINE = RELEASE_NAMES[0]


def _documented(exported: dict[str, Any], release: str) -> dict[str, Any]:
    documented: dict[str, Any] = exported["releases"][release]["documented"]
    return documented


def _committed_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ROOT / SCHEMA_PATH).read_text(encoding="utf-8"))
    return schema


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = _committed_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_export_validates_against_the_committed_schema() -> None:
    validator = Draft202012Validator(_committed_schema())
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(export_matrix())]
    assert errors == []


def test_the_schema_rejects_a_broken_export() -> None:
    validator = Draft202012Validator(_committed_schema())
    broken: dict[str, Any] = dict(export_matrix())
    _documented(broken, NEWEST)["tables"][0]["rows"][0]["cells"]["fp4_kv"]["kind"] = "maybe"
    assert not validator.is_valid(broken)
    broken = dict(export_matrix())
    del _documented(broken, BASELINE)["backends"][0]["phases"]
    assert not validator.is_valid(broken)
    broken = dict(export_matrix())
    _documented(broken, NEWEST)["rules"][0]["facts"]["nested"] = {"not": "a fact"}
    assert not validator.is_valid(broken)


def test_render_is_deterministic() -> None:
    first, second = render_export(), render_export()
    assert first == second
    assert first.endswith("}\n")
    assert json.loads(first) == export_matrix()
    assert render_schema() == render_schema()


def test_committed_files_are_fresh() -> None:
    assert (ROOT / EXPORT_PATH).read_text(encoding="utf-8") == render_export(), (
        "docs/matrix.json is stale: run `compat export`"
    )
    assert (ROOT / SCHEMA_PATH).read_text(encoding="utf-8") == render_schema(), (
        "docs/matrix.schema.json is stale: run `compat export`"
    )


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_cell_of_every_release_appears_with_its_symbol_and_source(release: str) -> None:
    exported = export_matrix()
    evidence = exported["evidence"]
    tables = {table["arch"]: table for table in _documented(dict(exported), release)["tables"]}
    matrix = release_matrix(release)
    for table in matrix.tables:
        rows = {row["backend"]: row for row in tables[table.arch.value]["rows"]}
        assert list(rows) == [row.backend for row in table.rows]
        assert tables[table.arch.value]["columns"] == [c.value for c in table.columns]
        for row in table.rows:
            assert rows[row.backend]["display_name"] == row.display_name
            for column_id, cell in row.cells.items():
                out = rows[row.backend]["cells"][column_id.value]
                assert out["symbol"] == cell.symbol
                assert out["kind"] == cell.kind.value
                assert out.get("page_sizes", []) == list(cell.page_sizes)
                source = matrix.evidence_for(table.arch, row.backend, column_id)
                assert evidence[out["evidence"]]["source"] == source.source


def test_evidence_is_listed_once_and_every_reference_resolves() -> None:
    exported = export_matrix()
    evidence = exported["evidence"]
    assert [entry["index"] for entry in evidence] == list(range(len(evidence)))
    keys = [json.dumps({k: v for k, v in e.items() if k != "index"}) for e in evidence]
    assert len(set(keys)) == len(keys)
    references: list[int] = []

    def collect(node: object, key: str = "") -> None:
        if isinstance(node, dict):
            for child_key, child in node.items():
                collect(child, child_key)
        elif isinstance(node, list):
            for child in node:
                collect(child, key)
        elif key == "evidence" and isinstance(node, int):
            references.append(node)

    collect({k: v for k, v in exported.items() if k != "evidence"})
    assert references
    assert all(0 <= ref < len(evidence) for ref in references)
    fp4 = _documented(dict(exported), BASELINE)["tables"][0]["rows"][0]["cells"]["fp4_kv"]
    assert "14467" in evidence[fp4["evidence"]]["source"]
    # A row read from the code names the wheel, the file and the function of each cell.
    mha = _documented(dict(exported), NEWEST)["tables"][0]
    read = [
        evidence[cell["evidence"]]["source"]
        for row in mha["rows"]
        for cell in row["cells"].values()
        if cell["kind"] == CellKind.NOT_STATED.value
    ]
    assert read and all(" wheel, sglang/srt/" in source for source in read)


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_backends_columns_and_rules_come_from_the_release_matrix(release: str) -> None:
    exported = export_matrix()
    documented = _documented(dict(exported), release)
    matrix = release_matrix(release)
    assert [b["name"] for b in documented["backends"]] == list(matrix.backend_names)
    assert documented["aliases"] == dict(matrix.aliases)
    for backend in matrix.backends:
        out = next(b for b in documented["backends"] if b["name"] == backend.name)
        assert out["phases"] == [p.value for p in Phase if p in backend.phases]
    assert [c["id"] for c in documented["columns"]] == [c.id.value for c in matrix.columns]
    fp4 = next(c for c in documented["columns"] if c["id"] == ColumnId.FP4_KV.value)
    assert fp4["kv_cache_dtypes"] == [d.value for d in matrix.column(ColumnId.FP4_KV).dtypes]
    rule_ids = [r["id"] for r in documented["rules"]]
    assert rule_ids == [
        *(r.rule_id for r in matrix.dtype_requirements),
        *(r.id for r in matrix.cross_field_rules),
    ]
    (rule,) = matrix.pairing_rules
    partners = documented["views"]["decode_partners"][rule.id]
    assert partners == {arch.value: list(matrix.decode_partners(rule, arch)) for arch in Arch}
    pairing = next(r for r in documented["rules"] if r["id"] == rule.id)
    assert pairing["kind"] == "pairing"
    assert pairing["facts"]["prefill_backend"] == rule.prefill_backend
    assert pairing["facts"]["excluded_decode"] == sorted(rule.excluded_decode)
    phase_only = [p["backend"] for p in documented["views"]["phase_only"]]
    assert phase_only == [b.name for b in matrix.phase_only_backends()]
    startup = exported["releases"][release]
    assert len(startup["defaults"]) == len(RELEASES[release].defaults)
    assert startup["backends"] == list(RELEASES[release].backend_choices)


def test_the_baseline_and_the_newest_release_differ_as_their_pages_do() -> None:
    exported = export_matrix()
    assert list(exported["releases"]) == list(RELEASE_NAMES)
    assert exported["baseline"]["release"] == BASELINE and exported["newest"] == NEWEST
    old, new = _documented(dict(exported), BASELINE), _documented(dict(exported), NEWEST)
    fa4 = {
        name: next(b for b in d["backends"] if b["name"] == "fa4")
        for name, d in (("old", old), ("new", new))
    }
    assert fa4["old"]["phase_rule_id"] == "fa4-prefill-only"
    assert fa4["new"]["phase_rule_id"] is None
    assert "cutlass_mla" in [b["name"] for b in old["backends"]]
    assert "cutlass_mla" not in [b["name"] for b in new["backends"]]
    assert exported["releases"][BASELINE]["page_changes"] == []
    tagged = [c for c in exported["releases"]["0.5.8"]["page_changes"] if c["tagged_in"]]
    assert {c["tagged_in"] for c in tagged} == {BASELINE}


def test_flipping_one_cell_changes_the_export() -> None:
    # One FP4 cell that decides whether its backend is an MLA decode partner of the pairing
    # rule, picked from the live matrix and flipped whichever way it points today.
    row = fp4_partner_candidate(Arch.MLA)
    old = row.cells[ColumnId.FP4_KV]
    flipped = with_cell(MATRIX, Arch.MLA, row.backend, ColumnId.FP4_KV, opposite(old))
    before, after = matrix_export(MATRIX), matrix_export(flipped)
    (rule,) = MATRIX.pairing_rules

    def cell(data: Any) -> str:
        mla = next(t for t in data["documented"]["tables"] if t["arch"] == "mla")
        exported = next(r for r in mla["rows"] if r["backend"] == row.backend)
        return str(exported["cells"]["fp4_kv"]["symbol"])

    assert (cell(before), cell(after)) == (old.symbol, opposite(old).symbol)
    partners = {
        name: data["documented"]["views"]["decode_partners"][rule.id]["mla"]
        for name, data in (("before", before), ("after", after))
    }
    supported_now = old.kind is CellKind.SUPPORTED
    assert (row.backend in partners["before"]) is supported_now
    assert (row.backend in partners["after"]) is not supported_now
    assert set(partners["before"]) ^ set(partners["after"]) == {row.backend}
    documented = {"$defs": ROOT_SCHEMA["$defs"], **_release_schema()["properties"]["documented"]}
    Draft202012Validator(documented).validate(after["documented"])


# -- the schema covers exactly the declared shapes --------------------------------------------

Found = dict[type, list[tuple[dict[str, Any], dict[str, Any]]]]


def _bare(declaration: Any) -> Any:
    """The type under `Annotated` and `NotRequired`, read independently of the generator."""
    while get_origin(declaration) is Annotated or get_origin(declaration) in (
        NotRequired,
        Required,
    ):
        declaration = get_args(declaration)[0]
    return declaration


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    return schema


def _walk(value: Any, declaration: Any, schema: dict[str, Any], found: Found) -> None:
    """Pair every object of the export with its declared shape and its part of the schema."""
    declaration, schema = _bare(declaration), _resolve(schema, ROOT_SCHEMA)
    origin = get_origin(declaration)
    if origin in (Union, types.UnionType):
        if value is None:
            return
        members = [m for m in get_args(declaration) if m is not type(None)]
        options = [s for s in schema["anyOf"] if s != {"type": "null"}]
        assert len(members) == len(options)
        if len(members) > 1:  # a rule's fact: names, numbers and lists of them, no object
            assert not any(_declared_shapes(member, set()) for member in members)
            return
        _walk(value, members[0], options[0], found)
    elif origin is list:
        for item in value:
            _walk(item, get_args(declaration)[0], schema["items"], found)
    elif origin is dict:
        values = schema["additionalProperties"] or next(iter(schema["patternProperties"].values()))
        for item in value.values():
            _walk(item, get_args(declaration)[1], values, found)
    elif isinstance(declaration, type) and issubclass(declaration, dict):
        found.setdefault(declaration, []).append((value, schema))
        hints = get_type_hints(declaration, include_extras=True)
        for key, item in value.items():
            if key in hints:
                _walk(item, hints[key], schema["properties"][key], found)


def _declared_shapes(declaration: Any, seen: set[type]) -> set[type]:
    """Every TypedDict reachable from `declaration`."""
    declaration = _bare(declaration)
    if isinstance(declaration, type) and issubclass(declaration, dict):
        if declaration not in seen:
            seen.add(declaration)
            for hint in get_type_hints(declaration, include_extras=True).values():
                _declared_shapes(hint, seen)
    else:
        for argument in get_args(declaration):
            _declared_shapes(argument, seen)
    return seen


ROOT_SCHEMA = _committed_schema()


@pytest.fixture(scope="module")
def found() -> Found:
    shapes: Found = {}
    _walk(export_matrix(), MatrixJson, ROOT_SCHEMA, shapes)
    return shapes


def test_every_declared_shape_is_exported(found: Found) -> None:
    declared = _declared_shapes(MatrixJson, set())
    assert {shape.__name__ for shape in declared} == {shape.__name__ for shape in found}
    assert len(declared) > 20


def _required_keys(shape: type) -> list[str]:
    hints = get_type_hints(shape, include_extras=True)
    required = getattr(shape, "__required_keys__", frozenset(hints))
    return [
        key
        for key, hint in hints.items()
        if get_origin(hint) is not NotRequired and key in required
    ]


def test_exported_objects_have_exactly_their_declared_keys(found: Found) -> None:
    for shape, instances in found.items():
        declared = set(get_type_hints(shape))
        for instance, _ in instances:
            assert set(_required_keys(shape)) <= set(instance) <= declared, shape.__name__
        # A declared key that no exported object carries is declared for nothing.
        produced = set().union(*(set(instance) for instance, _ in instances))
        assert produced == declared, shape.__name__


def test_the_schema_covers_every_declared_key(found: Found) -> None:
    for shape, instances in found.items():
        schema = instances[0][1]
        assert list(schema["properties"]) == list(get_type_hints(shape)), shape.__name__
        assert schema.get("required", []) == _required_keys(shape), shape.__name__
        assert schema["additionalProperties"] is False, shape.__name__


def _rejections_first(schema: Any) -> Any:
    """The same schema with `required` and `additionalProperties: false` first in every object.

    A JSON Schema's meaning does not depend on the order of its keywords, but the validator
    tries them in order and `is_valid` stops at the first failure: a key added to or removed
    from the whole export is then refused at once, not after a walk of the other 600 KB.
    """
    if isinstance(schema, list):
        return [_rejections_first(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    first = [
        k
        for k in ("required", "additionalProperties")
        if k in schema and (k == "required" or schema[k] is False)
    ]
    rest = [k for k in schema if k not in first]
    return {k: _rejections_first(schema[k]) for k in first + rest}


def test_the_reordered_schema_is_the_committed_one() -> None:
    """Equal as JSON (an object's keys have no order), and its `required` does come first."""
    reordered = _rejections_first(ROOT_SCHEMA)
    assert reordered == ROOT_SCHEMA
    assert list(reordered["$defs"]["cell"])[:2] == ["required", "additionalProperties"]
    assert list(ROOT_SCHEMA["$defs"]["cell"])[:2] != ["required", "additionalProperties"]


def test_the_schema_rejects_an_undeclared_or_a_missing_key(found: Found) -> None:
    """Per shape: its first exported object validates; with a key added or removed it fails."""
    defs = _rejections_first(ROOT_SCHEMA["$defs"])
    for shape, instances in found.items():
        instance, schema = instances[0]
        validator = Draft202012Validator({"$defs": defs, **_rejections_first(schema)})
        assert validator.is_valid(instance), shape.__name__
        assert not validator.is_valid({**instance, "undeclared": None}), shape.__name__
        for key in instance:
            smaller = copy.copy(instance)
            del smaller[key]
            assert not validator.is_valid(smaller), (shape.__name__, key)


def _release_schema() -> dict[str, Any]:
    releases = ROOT_SCHEMA["properties"]["releases"]["patternProperties"]
    (schema,) = releases.values()
    return dict(schema)


def test_value_sets_come_from_the_vocabulary() -> None:
    defs = ROOT_SCHEMA["$defs"]
    assert defs["cell"]["properties"]["kind"] == {"enum": [kind.value for kind in CellKind]}
    documented = _release_schema()["properties"]["documented"]["properties"]
    backend = documented["backends"]["items"]
    assert backend["properties"]["requires_features"]["items"] == {
        "enum": [feature.value for feature in ModelFeature]
    }
    platforms = backend["properties"]["platforms"]
    assert platforms["propertyNames"] == {"enum": [platform.value for platform in Platform]}
    vocabulary = ROOT_SCHEMA["properties"]["vocabulary"]["properties"]
    assert vocabulary["kv_cache_dtypes"]["additionalProperties"] == {
        "enum": [dtype.value for dtype in KvDtype]
    }
    assert vocabulary["attention_archs"]["required"] == [arch.value for arch in Arch]


# -- the command ------------------------------------------------------------------------------


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the committed export files in a scratch checkout."""
    for relative in (EXPORT_PATH, SCHEMA_PATH):
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, target)
    return tmp_path


def test_check_passes_when_fresh(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--check", "--root", str(checkout)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_fails_after_a_hand_edit(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = checkout / EXPORT_PATH
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"symbol": "✅"', '"symbol": "❌"', 1), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert main(["export", "--check", "--root", str(checkout)]) == 1
    out = capsys.readouterr().out
    assert "compat export" in out and "stale" in out
    removed = [line for line in out.splitlines() if line.startswith("-") and "symbol" in line]
    added = [line for line in out.splitlines() if line.startswith("+") and "symbol" in line]
    assert len(removed) == len(added) == 1
    assert removed[0].endswith('"❌",') and added[0].endswith('"✅",')
    assert path.read_text(encoding="utf-8") == before, "--check must not write"
    assert "Traceback" not in out


def test_export_writes_then_reports_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--check", "--root", str(tmp_path)]) == 1
    assert "does not exist" in capsys.readouterr().out
    assert main(["export", "--root", str(tmp_path)]) == 0
    assert "wrote docs/matrix.json" in capsys.readouterr().out
    assert (tmp_path / EXPORT_PATH).read_text(encoding="utf-8") == render_export()
    assert main(["export", "--root", str(tmp_path)]) == 0
    assert "docs/matrix.json is up to date" in capsys.readouterr().out
    assert main(["export", "--check", "--root", str(tmp_path)]) == 0


def test_output_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--output", "-"]) == 0
    assert capsys.readouterr().out == render_export()


def test_bad_root_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--check", "--root", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "is not a directory" in err and "Traceback" not in err
