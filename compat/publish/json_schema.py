"""JSON Schema (draft 2020-12) derived from typed declarations, in pydantic's spirit.

The export's shape is declared once, as `TypedDict` classes and type aliases
(`compat.publish.export_shapes`); mypy checks the builders against them and this module turns the
same declarations into the schema, so the schema cannot drift from what is built.

What maps to what:

- `str`, `int`, `float`, `bool`, `None`: `{"type": ...}`; `Literal[v]`: `{"const": v}`.
- `X | None` (any union): `anyOf`, in the union's order.
- `list[X]`: an array of `X`.
- a `TypedDict`: an object with exactly its keys (`additionalProperties: false`), all
  required except those declared `NotRequired` (or left optional by `total=False`).
- `dict[K, V]`: an object whose values are `V`. A key type carrying `OneOf` limits the key
  names (`propertyNames`), with `EveryKey` on the dict all of them are required; a key type
  carrying a `pattern` facet gives `patternProperties` and forbids other names.

`typing.Annotated` carries the rest: `Facet`s (keywords such as `minLength`, written with
the helpers below), `OneOf` (an enum's values instead of the bare type), `Def` (emit once
under `$defs` and refer to it), `Title` and `Doc` (the schema's own words).

Words come from `Title` and `Doc` markers, not from docstrings: a class docstring says why
a shape is as it is, for whoever maintains the code, and stays out of the published schema,
which carries exactly the words a marker gives it.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

JSON = dict[str, Any]
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

_PRIMITIVES: dict[object, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
# The TypedDict qualifiers, by name: `typing` and `typing_extensions` spell them apart.
_QUALIFIERS = frozenset({"Required", "NotRequired", "ReadOnly"})


@dataclass(frozen=True)
class Facet:
    """One JSON Schema keyword added to the schema of the annotated type."""

    keyword: str
    value: int | str | bool


def min_length(length: int) -> Facet:
    return Facet("minLength", length)


def minimum(bound: int) -> Facet:
    return Facet("minimum", bound)


def pattern(regex: str) -> Facet:
    """A string's pattern; on a dict's key type, the pattern every key name matches."""
    return Facet("pattern", regex)


def min_items(count: int) -> Facet:
    return Facet("minItems", count)


def max_items(count: int) -> Facet:
    return Facet("maxItems", count)


UNIQUE_ITEMS = Facet("uniqueItems", True)


@dataclass(frozen=True)
class OneOf:
    """The annotated value (or dict key) is one of `values`: `{"enum": [...]}`."""

    values: tuple[str, ...]

    @classmethod
    def of(cls, enum_type: type[enum.Enum]) -> OneOf:
        """An enum's values, in its declaration order."""
        return cls(tuple(member.value for member in enum_type))


@dataclass(frozen=True)
class EveryKey:
    """On a dict whose key type carries `OneOf`: every one of those values is a key."""


EVERY_KEY = EveryKey()


@dataclass(frozen=True)
class Def:
    """Emit the annotated type once, as `$defs/<name>`, and refer to it with `$ref`.

    Every marker of the annotated type describes the definition, not the reference.
    """

    name: str


@dataclass(frozen=True)
class Title:
    text: str


@dataclass(frozen=True)
class Doc:
    """The `description` the schema gives the annotated type."""

    text: str


def json_schema(root: object, *, definitions: Iterable[object] = ()) -> JSON:
    """The schema document of `root`.

    `definitions` are `Def`-marked aliases whose `$defs` entries come first, in this order
    (so the document keeps a stable, chosen order); others follow as the walk meets them.
    """
    generator = SchemaGenerator(definitions)
    body = generator.schema(root)
    words: JSON = {key: body.pop(key) for key in ("title", "description") if key in body}
    defs = generator.definitions()
    return {"$schema": DRAFT_2020_12, **words, **({"$defs": defs} if defs else {}), **body}


class SchemaGenerator:
    """Walks declarations into schemas, collecting the named definitions it meets."""

    def __init__(self, definitions: Iterable[object] = ()) -> None:
        self._defs: dict[str, JSON] = {}
        for declaration in definitions:
            name = _def_name(_unwrap(declaration)[1])
            if name is None:
                raise TypeError(f"{declaration!r} carries no Def marker")
            self._defs[name] = {}
        self._built: set[str] = set()

    def definitions(self) -> JSON:
        """The `$defs` met so far; a listed definition that nothing used is an error."""
        unused = [name for name in self._defs if name not in self._built]
        if unused:
            raise ValueError(f"definitions listed but used by no declaration: {unused}")
        return dict(self._defs)

    def schema(self, declaration: object) -> JSON:
        """The schema of one declaration (a `$ref` when it is a named definition)."""
        bare, markers = _unwrap(declaration)
        name = _def_name(markers)
        if name is None:
            return self._annotated(bare, markers)
        if name not in self._built:
            self._built.add(name)  # before the walk: a shape may refer to itself
            self._defs[name] = self._annotated(bare, markers)
        return {"$ref": f"#/$defs/{name}"}

    def _annotated(self, bare: object, markers: tuple[object, ...]) -> JSON:
        words: JSON = {}
        for marker in markers:
            if isinstance(marker, Title):
                words["title"] = marker.text
            elif isinstance(marker, Doc):
                words["description"] = marker.text
        facets = {m.keyword: m.value for m in markers if isinstance(m, Facet)}
        return {**words, **self._bare(bare, markers), **facets}

    def _bare(self, bare: Any, markers: tuple[object, ...]) -> JSON:
        one_of = _one_of(markers)
        if one_of is not None:
            return {"enum": list(one_of.values)}
        origin = get_origin(bare)
        if origin is Literal:
            values = list(get_args(bare))
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin in (Union, types.UnionType):
            return {"anyOf": [self.schema(member) for member in get_args(bare)]}
        if origin is list:
            return {"type": "array", "items": self.schema(get_args(bare)[0])}
        if origin is dict:
            key, value = get_args(bare)
            return self._mapping(key, value, every_key=EVERY_KEY in markers)
        if _is_typed_dict(bare):
            return self._object(bare)
        if bare in _PRIMITIVES:
            return {"type": _PRIMITIVES[bare]}
        raise TypeError(f"no JSON Schema for {bare!r}")

    def _object(self, shape: type) -> JSON:
        hints = get_type_hints(shape, include_extras=True)
        properties = {name: self.schema(hint) for name, hint in hints.items()}
        required = [name for name, hint in hints.items() if _is_required(shape, name, hint)]
        return {
            "type": "object",
            "properties": properties,
            **({"required": required} if required else {}),
            "additionalProperties": False,
        }

    def _mapping(self, key: object, value: object, *, every_key: bool) -> JSON:
        key_type, key_markers = _unwrap(key)
        if key_type is not str:
            raise TypeError(f"JSON object keys are strings, not {key_type!r}")
        values = self.schema(value)
        regex = _pattern(key_markers)
        if regex is not None:
            return {
                "type": "object",
                "additionalProperties": False,
                "patternProperties": {regex: values},
            }
        names = _one_of(key_markers)
        if names is None:
            return {"type": "object", "additionalProperties": values}
        keys = list(names.values)
        mapping = {
            "type": "object",
            "propertyNames": {"enum": keys},
            "additionalProperties": values,
        }
        return {**mapping, "required": keys} if every_key else mapping


def _unwrap(declaration: object) -> tuple[object, tuple[object, ...]]:
    """The bare type under `Annotated` and the TypedDict qualifiers, with its markers."""
    markers: tuple[object, ...] = ()
    while True:
        if get_origin(declaration) is Annotated:
            markers += declaration.__metadata__  # type: ignore[attr-defined]
            declaration = get_args(declaration)[0]
        elif _qualifier(declaration) is not None:
            declaration = get_args(declaration)[0]
        else:
            return declaration, markers


def _qualifier(declaration: object) -> str | None:
    name = getattr(get_origin(declaration), "_name", None)
    return name if name in _QUALIFIERS else None


def _is_required(shape: type, name: str, hint: object) -> bool:
    """Whether a TypedDict key is required.

    Read from the hint as well as `__required_keys__`: under postponed annotations, Python
    3.10 and 3.11 cannot see a `NotRequired` written in a string annotation.
    """
    while True:
        qualifier = _qualifier(hint)
        if qualifier in ("Required", "NotRequired"):
            return qualifier == "Required"
        if get_origin(hint) is not Annotated and qualifier is None:
            return name in getattr(shape, "__required_keys__", ())
        hint = get_args(hint)[0]


def _is_typed_dict(declaration: object) -> bool:
    # Duck-typed: `typing.is_typeddict` misses typing_extensions' TypedDicts on 3.10.
    return (
        isinstance(declaration, type)
        and issubclass(declaration, dict)
        and hasattr(declaration, "__required_keys__")
    )


def _def_name(markers: tuple[object, ...]) -> str | None:
    return next((m.name for m in markers if isinstance(m, Def)), None)


def _pattern(markers: tuple[object, ...]) -> str | None:
    return next(
        (str(m.value) for m in markers if isinstance(m, Facet) and m.keyword == "pattern"), None
    )


def _one_of(markers: tuple[object, ...]) -> OneOf | None:
    return next((m for m in markers if isinstance(m, OneOf)), None)
