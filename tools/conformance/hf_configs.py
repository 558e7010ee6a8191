"""What a release's transformers knows about a `config.json`, as facts read from its wheel.

SGLang reads a model's config through `transformers.AutoConfig` (and falls back to its
own loaders when transformers refuses it, e.g. a `deepseek_v32` checkpoint under
transformers 4.57.1). To run SGLang's own loader faithfully, the zoo needs, for the
transformers version a release pins (its wheel's `Requires-Dist`):

- the model types that version knows (`CONFIG_MAPPING_NAMES` of
  `transformers/models/auto/`), so an unknown type is refused the way transformers
  refuses it and SGLang's fallback runs;
- each config class's literal defaults and sub-configs (`text_config`, `vision_config`,
  ...), so the attribute object SGLang receives carries what the class would fill in.

Both are read from the transformers wheel (`pip download --no-deps`, cached next to the
SGLang wheels), never imported. The same reader takes SGLang's own config classes
(`sglang/srt/configs/*.py`) from a release's source tree. What these facts leave out:
values computed in a class's `__init__`/`__post_init__` beyond plain assignments
(derived layer lists, rope normalisation), and remote code (`auto_map`), for which the
config's own fields are all there is.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.wheel import FRESH, WheelUnavailableError, cache_dir, wheel_path

# Class-level names that are class constants, not config fields.
_NOT_FIELDS = frozenset(
    {
        "model_type", "keys_to_ignore_at_inference", "base_model_tp_plan",
        "base_model_pp_plan", "base_model_ep_plan", "attribute_map", "sub_configs",
        "base_config_key", "default_theta", "has_no_defaults_at_init", "is_composition",
    }
)  # fmt: skip
_BASE_CLASSES = frozenset({"PretrainedConfig", "PreTrainedConfig"})


@dataclass(frozen=True)
class ConfigClass:
    """One config class as its source declares it."""

    name: str
    model_type: str | None
    bases: tuple[str, ...]
    defaults: dict[str, Any]  # literal defaults of its fields
    sub_configs: dict[str, str]  # attribute -> class name ("AutoConfig": by model_type)
    attribute_map: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigFacts:
    """The config classes of one source (a transformers version, or an SGLang release)."""

    origin: str
    model_types: dict[str, str]  # model_type -> class name (transformers: CONFIG_MAPPING_NAMES)
    classes: dict[str, ConfigClass]

    def resolved_defaults(self, name: str) -> dict[str, Any]:
        """The literal defaults of `name`, its bases' first."""
        found = self.classes.get(name)
        if found is None:
            return {}
        merged: dict[str, Any] = {}
        for base in found.bases:
            if base not in _BASE_CLASSES and base != name:
                merged.update(self.resolved_defaults(base))
        merged.update(found.defaults)
        return merged

    def model_type_of(self, name: str) -> str | None:
        found = self.classes.get(name)
        while found is not None:
            if found.model_type is not None:
                return found.model_type
            parents = [b for b in found.bases if b in self.classes and b != found.name]
            found = self.classes[parents[0]] if parents else None
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "model_types": self.model_types,
            "classes": {
                name: {
                    "model_type": c.model_type,
                    "bases": list(c.bases),
                    "defaults": c.defaults,
                    "sub_configs": c.sub_configs,
                    "attribute_map": c.attribute_map,
                }
                for name, c in self.classes.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConfigFacts:
        classes = {
            name: ConfigClass(
                name, c["model_type"], tuple(c["bases"]), c["defaults"], c["sub_configs"],
                c["attribute_map"],
            )
            for name, c in data["classes"].items()
        }  # fmt: skip
        return cls(data["origin"], data["model_types"], classes)


# -- reading sources ------------------------------------------------------------------


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None:
        return False, None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def _name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _assigned_from_argument(init: ast.FunctionDef) -> set[str]:
    """Fields `__init__` sets straight from the argument of the same name."""
    names: set[str] = set()
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Name):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and target.attr == node.value.id
            ):
                names.add(target.attr)
    return names


def config_classes(source: str) -> Iterator[ConfigClass]:
    """Every class of `source` that looks like a config class (a `*Config` name or a
    `model_type`), with its declared defaults."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = tuple(name for name in map(_name_of, node.bases) if name)
        model_type: str | None = None
        defaults: dict[str, Any] = {}
        sub_configs: dict[str, str] = {}
        attribute_map: dict[str, str] = {}
        for item in node.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1:
                target = item.targets[0]
                if not isinstance(target, ast.Name):
                    continue
                if target.id == "model_type":
                    ok, value = _literal(item.value)
                    model_type = value if ok and isinstance(value, str) else None
                elif target.id == "sub_configs" and isinstance(item.value, ast.Dict):
                    for key, value in zip(item.value.keys, item.value.values, strict=True):
                        ok, attribute = _literal(key)
                        name = _name_of(value)
                        if ok and isinstance(attribute, str) and name:
                            sub_configs[attribute] = name
                elif target.id == "attribute_map":
                    ok, value = _literal(item.value)
                    if ok and isinstance(value, dict):
                        attribute_map = value
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                # transformers 5: config fields are annotated class attributes.
                name = item.target.id
                if name in _NOT_FIELDS or name.startswith("_"):
                    continue
                ok, value = _literal(item.value)
                if ok:
                    defaults[name] = value
            elif isinstance(item, ast.FunctionDef) and item.name == "__init__":
                # transformers 4 (and SGLang's classes): keyword defaults of __init__
                # that it stores under the same name.
                stored = _assigned_from_argument(item)
                arguments = item.args
                positional = arguments.args[len(arguments.args) - len(arguments.defaults) :]
                pairs = [*zip(positional, arguments.defaults, strict=True)]
                pairs += [
                    (arg, default)
                    for arg, default in zip(
                        arguments.kwonlyargs, arguments.kw_defaults, strict=True
                    )
                    if default is not None
                ]
                for arg, default in pairs:
                    ok, value = _literal(default)
                    if ok and arg.arg in stored:
                        defaults[arg.arg] = value
        if model_type is None and not node.name.endswith("Config"):
            continue
        yield ConfigClass(node.name, model_type, bases, defaults, sub_configs, attribute_map)


def _pairs_in(node: ast.AST) -> dict[str, str]:
    """(model_type, class name) pairs written in a CONFIG_MAPPING_NAMES construct."""
    out: dict[str, str] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Tuple) and len(sub.elts) == 2:
            ok_key, key = _literal(sub.elts[0])
            ok_value, value = _literal(sub.elts[1])
            if ok_key and ok_value and isinstance(key, str) and isinstance(value, str):
                out[key] = value
        elif isinstance(sub, ast.Dict):
            for key_node, value_node in zip(sub.keys, sub.values, strict=True):
                ok_key, key = _literal(key_node)
                ok_value, value = _literal(value_node)
                if ok_key and ok_value and isinstance(key, str) and isinstance(value, str):
                    out[key] = value
        elif isinstance(sub, ast.Call):
            for keyword in sub.keywords:
                ok, value = _literal(keyword.value)
                if keyword.arg and ok and isinstance(value, str):
                    out[keyword.arg] = value
    return out


def config_mapping_names(sources: Iterable[str]) -> dict[str, str]:
    """transformers' CONFIG_MAPPING_NAMES, from the files that assign or update it
    (`models/auto/configuration_auto.py`, from 5.6 also `models/auto/auto_mappings.py`)."""
    names: dict[str, str] = {}
    for source in sources:
        for node in ast.parse(source).body:
            target: ast.AST | None = None
            if (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Name) and t.id == "CONFIG_MAPPING_NAMES" for t in node.targets
                )
            ) or (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == "CONFIG_MAPPING_NAMES"
            ):
                target = node.value
            if target is not None:
                names.update(_pairs_in(target))
    return names


# -- transformers, per version --------------------------------------------------------

_MAPPING_FILES = (
    "transformers/models/auto/auto_mappings.py",
    "transformers/models/auto/configuration_auto.py",
)


def transformers_wheel(version: str) -> Path:
    """The cached `transformers==version` wheel, downloaded (no dependencies) if absent."""
    directory = cache_dir() / "transformers"
    found = sorted(directory.glob(f"transformers-{version}-*.whl"))
    if found:
        return found[0]
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "-q", f"transformers=={version}", "-d", str(directory),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    found = sorted(directory.glob(f"transformers-{version}-*.whl"))
    if result.returncode != 0 or not found:
        detail = (result.stderr or result.stdout).strip().splitlines()[-2:]
        raise WheelUnavailableError(
            f"cannot fetch the transformers=={version} wheel into {directory}: "
            + (" / ".join(detail) or "no wheel written")
        )
    return found[0]


@functools.cache
def transformers_facts(version: str) -> ConfigFacts:
    """What transformers `version` knows: its model types and config classes."""
    cached = cache_dir() / "transformers" / f"facts-{version}.json"
    if cached.is_file() and not os.environ.get(FRESH):
        return ConfigFacts.from_json(json.loads(cached.read_text()))
    with zipfile.ZipFile(transformers_wheel(version)) as archive:
        names = archive.namelist()
        mapping = config_mapping_names(
            archive.read(name).decode() for name in _MAPPING_FILES if name in names
        )
        classes: dict[str, ConfigClass] = {}
        for name in names:
            if name.startswith("transformers/models/") and "/configuration_" in name:
                for found in config_classes(archive.read(name).decode()):
                    classes.setdefault(found.name, found)
    facts = ConfigFacts(f"transformers {version}", mapping, classes)
    tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(facts.to_json()))
    tmp.replace(cached)
    return facts


@functools.cache
def pinned_transformers(sglang_version: str) -> str:
    """The transformers version SGLang `sglang_version` pins (its wheel's Requires-Dist)."""
    with zipfile.ZipFile(wheel_path(sglang_version)) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        for line in archive.read(metadata).decode().splitlines():
            if line.startswith("Requires-Dist: transformers=="):
                return line.split("==", 1)[1].split(";")[0].strip()
    raise LookupError(f"sglang {sglang_version} pins no transformers version")


@functools.cache
def sglang_config_facts(source_root: Path) -> ConfigFacts:
    """SGLang's own config classes (`sglang/srt/configs/*.py`) of one release."""
    classes: dict[str, ConfigClass] = {}
    for file in sorted((source_root / "sglang/srt/configs").rglob("*.py")):
        for found in config_classes(file.read_text()):
            classes.setdefault(found.name, found)
    types = {c.model_type: c.name for c in classes.values() if c.model_type}
    return ConfigFacts(f"sglang {source_root.name}", types, classes)
