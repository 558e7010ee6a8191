"""Which config type each architecture a release registers is written for, read from its wheel.

SGLang's backend build keys on the model's config class (`hybrid_gdn_config`'s isinstance
test, MiniCPM's sparse backends); a launch given only `--model-architecture` has no
config.json to say which. The release's own code says it: each module of
`sglang/srt/models/` registers its `EntryClass`, whose `__init__` takes `config: SomeConfig`.
That class is SGLang's own (`sglang/srt/configs/*.py`, whose `model_type = "..."` is the
type) or one of the transformers the release pins (its `model_type`, read from that wheel).

Read statically (nothing is imported):

- the class's own `__init__` only: a subclass that inherits its parent's (InternS2Preview on
  Qwen3.5 MoE) may be served with a config class of its own, so it is not guessed;
- an annotation naming one class; none (`config`), a base class (`PretrainedConfig`), a
  union, or a class whose type cannot be read leave the architecture out;
- an architecture two modules register with different config types is left out.

`python tools/arch_types.py` writes `compat/engine/models/config_type_data.py`: for every release,
the architectures whose config type the engine's build checks read (the union of the
types in every release's build rules), each with where it was read. The rest is left out
to keep the package's data small; `architecture_types(version)` returns all of it.
"""

from __future__ import annotations

import ast
import functools
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.hf_configs import pinned_transformers, transformers_wheel
from conformance.wheel import source_root

_MODELS = "sglang/srt/models"
# Classes that name no config type of their own.
_GENERIC = frozenset({"PretrainedConfig", "PreTrainedConfig", "Any", "object"})


@dataclass(frozen=True, order=True)
class ArchType:
    """One architecture, the config class its model takes and that class's `model_type`."""

    architecture: str
    model_type: str
    model_file: str
    """The models module (relative to the wheel's root) whose class takes the config."""
    model_line: int
    """The line of the class's `__init__`."""
    config_class: str
    config_file: str
    """`sglang/srt/configs/....py`, or `transformers X.Y.Z:transformers/models/...py`."""
    config_line: int
    """The line of the config class's `model_type = ...`."""


@dataclass(frozen=True)
class _Found:
    """One registered class and what its `__init__` annotates `config` with."""

    model_file: str
    model_line: int
    annotation: ast.expr | None
    module: Path


class _Tree:
    """The parsed modules of one release's source tree (each parsed once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[Path, ast.Module] = {}

    def parse(self, path: Path) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = ast.parse(path.read_text(encoding="utf-8-sig"))
        return self._trees[path]

    def module_file(self, module: str) -> Path | None:
        base = self.root.joinpath(*module.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def find(self, path: Path, name: str, depth: int = 0) -> tuple[Path, ast.ClassDef] | str | None:
        """Where class `name` as seen from module `path` is defined: (module, class) in
        SGLang, the class name in transformers (a str), or None."""
        tree = self.parse(path)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return path, node
        for imported in ast.walk(tree):  # imports under `if TYPE_CHECKING:` and `try:` too
            if not isinstance(imported, ast.ImportFrom) or not imported.module:
                continue
            module = imported.module
            for alias in imported.names:
                if (alias.asname or alias.name) != name:
                    continue
                if module.split(".")[0] == "transformers":
                    return alias.name
                target = self.module_file(module) if module.startswith("sglang") else None
                if target is not None and depth < 8:
                    return self.find(target, alias.name, depth + 1)
        return None


def _entry_classes(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
        ):
            value = node.value
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            yield from (item.id for item in items if isinstance(item, ast.Name))


def _own_init(tree: _Tree, path: Path, cls: ast.ClassDef) -> _Found | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            config = next((a for a in arguments if a.arg == "config"), None)
            annotation = None if config is None else config.annotation
            return _Found(tree.relative(path), node.lineno, annotation, path)
    return None


def _class_names(annotation: ast.expr | None) -> list[str]:
    """The classes an annotation names: `X`, `"X"`, `Optional[X]`, `X | None`, a union."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _class_names(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(annotation, ast.Name):
        return [] if annotation.id == "None" else [annotation.id]
    if isinstance(annotation, ast.Attribute):
        return [annotation.attr]
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _class_names(annotation.left) + _class_names(annotation.right)
    if isinstance(annotation, ast.Subscript):
        inner = annotation.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return [name for item in items for name in _class_names(item)]
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return []
    return ["?"]  # something else: no single class


def _model_type_line(cls: ast.ClassDef) -> tuple[str, int] | None:
    """The class's own `model_type = "..."` (or `model_type: str = "..."`) and its line."""
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if (
            isinstance(target, ast.Name)
            and target.id == "model_type"
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            return value.value, node.lineno
    return None


class _Transformers:
    """The config classes of the transformers a release pins: where each sets `model_type`."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.classes: dict[str, tuple[str, str, int, tuple[str, ...]]] = {}
        with zipfile.ZipFile(transformers_wheel(version)) as archive:
            for name in archive.namelist():
                if not (name.startswith("transformers/models/") and "/configuration_" in name):
                    continue
                try:
                    module = ast.parse(archive.read(name).decode())
                except SyntaxError:
                    continue
                for node in module.body:
                    if isinstance(node, ast.ClassDef) and node.name not in self.classes:
                        found = _model_type_line(node)
                        bases = tuple(b.id for b in node.bases if isinstance(b, ast.Name))
                        kind, line = found if found else ("", 0)
                        self.classes[node.name] = (kind, name, line, bases)

    def model_type(self, name: str, depth: int = 0) -> tuple[str, str, int] | None:
        found = self.classes.get(name)
        if found is None or depth > 8:
            return None
        kind, file, line, bases = found
        if kind:
            return kind, f"transformers {self.version}:{file}", line
        parents = [base for base in bases if base in self.classes and base not in _GENERIC]
        return self.model_type(parents[0], depth + 1) if len(parents) == 1 else None


def _sglang_type(
    tree: _Tree, path: Path, cls: ast.ClassDef, depth: int = 0
) -> tuple[str, str, int] | None:
    """An SGLang config class's `model_type`: its own, else its one SGLang base's."""
    found = _model_type_line(cls)
    if found is not None:
        return found[0], tree.relative(path), found[1]
    bases = [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id not in _GENERIC]
    if len(bases) != 1 or depth > 8:
        return None
    parent = tree.find(path, bases[0])
    if isinstance(parent, tuple):
        return _sglang_type(tree, *parent, depth + 1)
    return None


def architecture_types(version: str) -> list[ArchType]:
    """Every architecture `version` registers whose model takes one config class with a
    readable `model_type`, sorted by architecture."""
    tree = _Tree(source_root(version))
    transformers = _Transformers(pinned_transformers(version))
    found: dict[str, set[ArchType | None]] = {}
    for path in sorted((tree.root / _MODELS).glob("*.py")):
        for name in _entry_classes(tree.parse(path)):
            found.setdefault(name, set()).add(_arch_type(tree, transformers, path, name))
    unique = (next(iter(kinds)) for kinds in found.values() if len(kinds) == 1)
    return sorted(kind for kind in unique if kind is not None)


def _arch_type(tree: _Tree, transformers: _Transformers, path: Path, name: str) -> ArchType | None:
    where = tree.find(path, name)
    if not isinstance(where, tuple):
        return None
    init = _own_init(tree, *where)
    if init is None:
        return None
    names = _class_names(init.annotation)
    if len(names) != 1 or names[0] in _GENERIC:
        return None
    config = tree.find(init.module, names[0])
    if isinstance(config, str):
        typed = transformers.model_type(config)
    elif config is not None:
        typed = _sglang_type(tree, *config)
    else:
        typed = None
    if typed is None:
        return None
    kind, file, line = typed
    return ArchType(name, kind, init.model_file, init.model_line, names[0], file, line)


@functools.cache
def engine_model_types() -> frozenset[str]:
    """Every config type a release's build checks read (hybrid GDN, model families)."""
    from compat.releases import RELEASES

    types: set[str] = set()
    for rules in RELEASES.values():
        build = rules.build
        if build.hybrid_gdn is not None:
            types |= build.hybrid_gdn.model_types
        for check in build.checks:
            types |= check.model_types
    return frozenset(types)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from compat.engine.models import config_types
    from compat.releases import RELEASE_NAMES

    if args not in ([], ["--all"]):
        print("usage: python tools/arch_types.py [--all]", file=sys.stderr)
        return 2
    kept = engine_model_types()
    data: dict[str, list[config_types.Row]] = {}
    for release in RELEASE_NAMES:
        every = architecture_types(release)
        data[release] = [row(kind) for kind in every if kind.model_type in kept]
        print(f"{release}: {len(every)} architectures typed, {len(data[release])} kept",
              file=sys.stderr)  # fmt: skip
    config_types.DATA_MODULE.write_text(config_types.render(data), encoding="utf-8")
    print(f"wrote {config_types.DATA_MODULE.name}")
    return 0


def row(kind: ArchType) -> tuple[str, str, str, int, str, str, int]:
    """The stored form of one architecture's type (`compat.engine.models.config_types.Row`)."""
    return (kind.architecture, kind.model_type, kind.model_file, kind.model_line,
            kind.config_class, kind.config_file, kind.config_line)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
