"""The architectures a release's model-specific start-up code names, read from its wheel.

SGLang special-cases models in three shapes, all keyed on `hf_config.architectures[0]`:
branches of `ServerArgs._handle_model_specific_adjustments` (`if model_arch == "X"`, or
`in` a list), from 0.5.15 declarations in `arg_groups/overrides.py` (`MODEL_OVERRIDES`,
`@_register_for(...)`, `@register_model_override(...)`), from 0.5.19 the same under
`arg_groups/model_overrides/`. Any of them may write or check the fields the attention
start-up reads. This module walks the source (no code runs) and returns every
architecture whose branch touches one of those fields, with where the branch is, so the
family axis (`conformance.family_axis.launches`) never depends on a typed list.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from conformance.wheel import source_root

# An architecture name as configs spell them (`Gemma4ForConditionalGeneration`).
_ARCHITECTURE = re.compile(r"^[A-Z][A-Za-z0-9_]*For[A-Z][A-Za-z0-9_]*$")
# The fields the attention start-up reads: a branch naming one (as an attribute, a
# string key, a keyword or part of a helper's name) touches attention.
_ATTENTION_WORDS = ("attention_backend", "deterministic", "speculative_")
_ATTENTION_FIELDS = frozenset({"page_size", "kv_cache_dtype"})
_REGISTRARS = frozenset({"_register_for", "register_model_override"})
_SCANNED = ("sglang/srt/server_args.py", "sglang/srt/arg_groups")


def _touches_attention(nodes: list[ast.AST]) -> bool:
    for node in nodes:
        for inner in ast.walk(node):
            words: list[str] = []
            if isinstance(inner, ast.Attribute):
                words.append(inner.attr)
            elif isinstance(inner, ast.Name):
                words.append(inner.id)
            elif isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                words.append(inner.value)
            elif isinstance(inner, ast.keyword) and inner.arg:
                words.append(inner.arg)
            for word in words:
                if word in _ATTENTION_FIELDS or any(w in word for w in _ATTENTION_WORDS):
                    return True
    return False


def _names(node: ast.AST, constants: dict[str, frozenset[str]]) -> set[str]:
    """Architecture names a test or an argument list spells, through module constants."""
    found: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            if _ARCHITECTURE.match(inner.value):
                found.add(inner.value)
        elif isinstance(inner, ast.Name) and inner.id in constants:
            found |= constants[inner.id]
    return found


def _constants(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Module-level lists and sets of architecture names (`_DEEPSEEK_FAMILY_ARCHS`)."""
    found: dict[str, frozenset[str]] = {}
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign)
            else [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
        )  # fmt: skip
        value = getattr(node, "value", None)
        if value is None:
            continue
        names = _names(value, {})
        for target in targets:
            if isinstance(target, ast.Name) and names and not isinstance(value, ast.Dict):
                found[target.id] = frozenset(names)
    return found


def _branches(file: Path, relative: str) -> Iterator[tuple[str, str]]:
    """(architecture, "file:line (function)") for each attention-touching branch."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    constants = _constants(tree)

    def where(node: ast.AST, function: str) -> str:
        return f"{relative}:{getattr(node, 'lineno', 0)} ({function})"

    for node in tree.body:
        # MODEL_OVERRIDES = {"Arch": {"attention_backend": ...}}: pure-constant declarations.
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if key is not None and value is not None and _touches_attention([value]):
                    for name in _names(key, {}):
                        yield name, where(key, "MODEL_OVERRIDES")
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for decorator in function.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and getattr(decorator.func, "id", getattr(decorator.func, "attr", None))
                in _REGISTRARS
                and _touches_attention(list(function.body))
            ):
                for name in _names(decorator, constants):
                    yield name, where(function, function.name)
        for branch in ast.walk(function):
            if isinstance(branch, ast.If) and _touches_attention(list(branch.body)):
                for name in _names(branch.test, constants):
                    yield name, where(branch, function.name)


@functools.cache
def special_cased(version: str) -> dict[str, tuple[str, ...]]:
    """Architecture -> where `version`'s model-specific branches that touch the attention
    fields name it, sorted by architecture."""
    root = source_root(version)
    files: list[Path] = []
    for entry in _SCANNED:
        path = root / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path] * path.is_file()
    found: dict[str, list[str]] = {}
    for file in files:
        relative = file.relative_to(root).as_posix()
        for name, place in _branches(file, relative):
            found.setdefault(name, [])
            if place not in found[name]:
                found[name].append(place)
    return {name: tuple(found[name]) for name in sorted(found)}
