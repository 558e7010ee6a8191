"""The JSON Schema generator on small declarations: each typing form and marker it maps."""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

import pytest
from jsonschema import Draft202012Validator
from typing_extensions import NotRequired, Required

from compat.publish.json_schema import (
    EVERY_KEY,
    Def,
    Doc,
    OneOf,
    SchemaGenerator,
    Title,
    json_schema,
    min_length,
    pattern,
)

Name = Annotated[str, min_length(1), Def("name")]
Colour = Annotated[str, OneOf(("red", "blue"))]


class Part(TypedDict):
    name: Name
    size: NotRequired[int | None]
    kind: Literal["a", "b"]
    version: Literal[2]


class Loose(TypedDict, total=False):
    note: str
    must: Required[bool]


class Whole(TypedDict):
    parts: list[Part]
    by_colour: Annotated[dict[Colour, Name], EVERY_KEY]
    some_colours: dict[Colour, float]
    named: dict[Annotated[str, pattern("^x")], Loose]


def test_generator_maps_each_declaration() -> None:
    schema = json_schema(Annotated[Whole, Title("Whole"), Doc("All of it.")], definitions=[Name])
    assert list(schema)[:4] == ["$schema", "title", "description", "$defs"]
    assert (schema["title"], schema["description"]) == ("Whole", "All of it.")
    assert schema["$defs"] == {"name": {"type": "string", "minLength": 1}}
    part = schema["properties"]["parts"]["items"]
    assert part["required"] == ["name", "kind", "version"]
    assert part["properties"] == {
        "name": {"$ref": "#/$defs/name"},
        "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "kind": {"enum": ["a", "b"]},
        "version": {"const": 2},
    }
    properties = schema["properties"]
    assert properties["by_colour"] == {
        "type": "object",
        "propertyNames": {"enum": ["red", "blue"]},
        "additionalProperties": {"$ref": "#/$defs/name"},
        "required": ["red", "blue"],
    }
    assert "required" not in properties["some_colours"]
    named = properties["named"]
    assert named["additionalProperties"] is False
    assert named["patternProperties"]["^x"]["required"] == ["must"]
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    part_value = {"name": "n", "kind": "a", "version": 2}
    good = {
        "parts": [part_value, {**part_value, "size": None}],
        "by_colour": {"red": "r", "blue": "b"},
        "some_colours": {"red": 1.5},
        "named": {"x1": {"must": True}},
    }
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "named": {"y": {"must": True}}})
    assert not validator.is_valid({**good, "by_colour": {"red": "r"}})
    assert not validator.is_valid({**good, "parts": [{**part_value, "version": 3}]})


def test_generator_refuses_what_it_cannot_express() -> None:
    with pytest.raises(TypeError, match="no JSON Schema"):
        SchemaGenerator().schema(set[int])
    with pytest.raises(TypeError, match="keys are strings"):
        SchemaGenerator().schema(dict[int, str])
    with pytest.raises(TypeError, match="no Def marker"):
        SchemaGenerator([str])
    generator = SchemaGenerator([Name])
    with pytest.raises(ValueError, match="used by no declaration"):
        generator.definitions()
