"""Which config type each architecture a release registers is written for, read from its wheel.

SGLang's backend build keys on the model's config class (`hybrid_gdn_config`'s isinstance
test, MiniCPM's sparse backends), and its start-up on the class's defaults (GLM-5's config
class defaults `index_topk`, which makes the model DeepSeek sparse attention); a launch
given only `--model-architecture` has no config.json to say which. The release's own
code says it: each module of `sglang/srt/models/` registers its `EntryClass`, whose
`__init__` takes `config: SomeConfig`. That class is SGLang's own
(`sglang/srt/configs/*.py`, whose `model_type = "..."` is the type) or one of the
transformers the release pins (its `model_type`, read from that wheel).

Read statically (nothing is imported):

- the class's own `__init__`, with an annotation naming one class; a union, or a class
  whose type cannot be read, leaves the architecture out;
- where the class has no `__init__` of its own, or annotates `config` with a base class
  (`PretrainedConfig`), the checkpoint's config.json decides: the pinned transformers' auto
  mappings register the architecture for one model type, whose config class (SGLang's
  own of that type where it has one) stands in; an architecture registered for several
  types, or for none (InternS2Preview, which SGLang serves on its parent's `__init__`), is
  left out;
- an architecture two modules register with different config types is left out.

`python tools/arch_types.py` writes `compat/engine/models/config_type_data.py`: for every
release, the architectures whose config type the engine's build checks read (the union of
the types in every release's build rules) or whose config class defaults `index_topk`,
each with where it was read. The rest is left out to keep the package's data small;
`architecture_types(version)` returns all of it.
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
from generated import write_or_check
from wheel_facts import cached_facts

_MODELS = "sglang/srt/models"
_CONFIGS = "sglang/srt/configs"
# Classes that name no config type of their own.
_GENERIC = frozenset({"PretrainedConfig", "PreTrainedConfig", "Any", "object"})


@dataclass(frozen=True, order=True)
class ArchType:
    """One architecture, the config class its model takes and that class's `model_type`."""

    architecture: str
    model_type: str
    model_file: str
    """The models module (relative to the wheel's root) whose class takes the config; or,
    where it names no class of its own, `transformers X.Y.Z:` its auto mappings."""
    model_line: int
    """The line of the class's `__init__`, or of the mapping's (type, architecture) entry."""
    config_class: str
    config_file: str
    """`sglang/srt/configs/....py`, or `transformers X.Y.Z:transformers/models/...py`."""
    config_line: int
    """The line of the config class's `model_type = ...`."""
    indexer_line: int = 0
    """The line where the config class (or its base) defaults `index_topk` to a value,
    which makes the model DeepSeek sparse attention wherever its architecture can be: 0
    where it defaults to none."""


@dataclass(frozen=True)
class _Found:
    """One registered class and what its `__init__` annotates `config` with."""

    model_file: str
    model_line: int
    annotation: ast.expr | None
    module: Path


@functools.lru_cache(maxsize=4096)
def _parsed(source: str) -> ast.Module:
    """A module's tree, parsed once per text: most of a release's model files are its
    predecessor's unchanged, and parsing them is most of reading a release. The trees are
    only read, never changed."""
    return ast.parse(source)


class _Tree:
    """The parsed modules of one release's source tree (each parsed once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[Path, ast.Module] = {}

    def parse(self, path: Path) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = _parsed(path.read_text(encoding="utf-8-sig"))
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


# Where transformers registers each model type's architectures (`("glm_moe_dsa",
# "GlmMoeDsaForCausalLM")`): what a checkpoint of that architecture's config.json says.
_AUTO_MODELS = "transformers/models/auto/modeling_auto.py"


def _auto_registrations(source: str) -> dict[str, dict[str, int]]:
    """Each architecture the auto mappings name, with its model types and their lines."""
    found: dict[str, dict[str, int]] = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
            continue
        kind, names = node.elts
        if not (isinstance(kind, ast.Constant) and isinstance(kind.value, str)):
            continue
        items = names.elts if isinstance(names, ast.Tuple) else [names]
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                found.setdefault(item.value, {}).setdefault(kind.value, node.lineno)
    return found


# The config key whose default makes an architecture a DeepSeek sparse attention model
# (SGLang's `is_deepseek_nsa`: the architecture, and `index_topk` not None).
INDEXER_KEY = "index_topk"


def _default_line(cls: ast.ClassDef, key: str) -> int | None:
    """Where the class itself defaults `key`: the line of a non-None default (a class
    attribute, as transformers 5 declares them, or an `__init__` keyword), 0 for a None
    default, None where the class does not say."""
    for node in cls.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == key
            and node.value is not None
        ):
            return _line_unless_none(node.value, node.lineno)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == key:
                return _line_unless_none(node.value, node.lineno)
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            arguments = node.args
            positional = [*arguments.posonlyargs, *arguments.args]
            pairs = list(zip(positional[len(positional) - len(arguments.defaults) :],
                             arguments.defaults, strict=True))  # fmt: skip
            pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults,
                                             strict=True) if d is not None]  # fmt: skip
            for argument, default in pairs:
                if argument.arg == key:
                    return _line_unless_none(default, default.lineno)
    return None


def _line_unless_none(value: ast.expr, line: int) -> int:
    return 0 if isinstance(value, ast.Constant) and value.value is None else line


class _Transformers:
    """The config classes of the transformers a release pins: where each sets `model_type`."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.classes: dict[str, tuple[str, str, int, tuple[str, ...]]] = {}
        self.nodes: dict[str, ast.ClassDef] = {}
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
                        self.nodes[node.name] = node
            self.registered = _auto_registrations(archive.read(_AUTO_MODELS).decode())

    def model_type(self, name: str, depth: int = 0) -> tuple[str, str, int] | None:
        found = self.classes.get(name)
        if found is None or depth > 8:
            return None
        kind, file, line, bases = found
        if kind:
            return kind, f"transformers {self.version}:{file}", line
        parents = [base for base in bases if base in self.classes and base not in _GENERIC]
        return self.model_type(parents[0], depth + 1) if len(parents) == 1 else None

    def registered_type(self, architecture: str) -> tuple[str, int] | None:
        """The one model type the auto mappings register `architecture` for, and its line."""
        kinds = self.registered.get(architecture, {})
        return next(iter(kinds.items())) if len(kinds) == 1 else None

    def config_of(self, model_type: str) -> str | None:
        """The one config class whose own `model_type` is `model_type`."""
        named = [name for name, (kind, *_) in self.classes.items() if kind == model_type]
        return named[0] if len(named) == 1 else None

    def default_line(self, name: str, key: str, depth: int = 0) -> int:
        """The line of the class's (or its one base's) non-None default of `key`, else 0."""
        node = self.nodes.get(name)
        if node is None or depth > 8:
            return 0
        line = _default_line(node, key)
        if line is not None:
            return line
        parents = [b for b in self.classes[name][3] if b in self.classes and b not in _GENERIC]
        return self.default_line(parents[0], key, depth + 1) if len(parents) == 1 else 0


def _sglang_default_line(
    tree: _Tree, path: Path, cls: ast.ClassDef, key: str, depth: int = 0
) -> int:
    """An SGLang config class's non-None default of `key` (its own, else its one SGLang
    base's): its line, else 0."""
    line = _default_line(cls, key)
    if line is not None:
        return line
    bases = [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id not in _GENERIC]
    parent = tree.find(path, bases[0]) if len(bases) == 1 and depth <= 8 else None
    return _sglang_default_line(tree, *parent, key, depth + 1) if isinstance(parent, tuple) else 0


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


@functools.lru_cache(maxsize=1)
def _transformers(version: str) -> _Transformers:
    """The config classes of one transformers version, read once for the releases in a row
    that pin it (0.5.7 to 0.5.9 pin one version, 0.5.15 to 0.5.21 another); one at a time,
    since a version's trees take a few hundred MB."""
    return _Transformers(version)


def architecture_types(version: str) -> list[ArchType]:
    """Every architecture `version` registers whose model takes one config class with a
    readable `model_type`, sorted by architecture (kept beside the wheels: `cached_facts`)."""
    pinned = pinned_transformers(version)
    reads = (f"transformers=={pinned}", Path(__file__).resolve())
    rows = cached_facts("arch-types", version, reads, lambda: _read_types(version, pinned))
    return [ArchType(*found) for found in rows]


def _read_types(version: str, pinned: str) -> list[tuple[str, str, str, int, str, str, int, int]]:
    tree = _Tree(source_root(version))
    transformers = _transformers(pinned)
    found: dict[str, set[ArchType | None]] = {}
    for path in sorted((tree.root / _MODELS).glob("*.py")):
        if "EntryClass" not in path.read_text(encoding="utf-8-sig"):
            continue  # registers nothing: parsed only if a registered model imports from it
        for name in _entry_classes(tree.parse(path)):
            found.setdefault(name, set()).add(_arch_type(tree, transformers, path, name))
    unique = (next(iter(kinds)) for kinds in found.values() if len(kinds) == 1)
    return [row(kind) for kind in sorted(kind for kind in unique if kind is not None)]


def _arch_type(tree: _Tree, transformers: _Transformers, path: Path, name: str) -> ArchType | None:
    where = tree.find(path, name)
    if not isinstance(where, tuple):
        return None
    init = _own_init(tree, *where)
    names = [] if init is None else _class_names(init.annotation)
    if init is None or (len(names) == 1 and names[0] in _GENERIC):
        return _registered_type(tree, transformers, name)
    if len(names) != 1:
        return None
    config = tree.find(init.module, names[0])
    if isinstance(config, str):
        typed = transformers.model_type(config)
        indexer = transformers.default_line(config, INDEXER_KEY)
    elif config is not None:
        typed = _sglang_type(tree, *config)
        indexer = _sglang_default_line(tree, *config, INDEXER_KEY)
    else:
        typed = None
    if typed is None:
        return None
    kind, file, line = typed
    return ArchType(name, kind, init.model_file, init.model_line, names[0], file, line, indexer)


def _registered_type(tree: _Tree, transformers: _Transformers, name: str) -> ArchType | None:
    """An architecture whose SGLang model names no config class of its own (GLM-5's
    `GlmMoeDsaForCausalLM` inherits DeepSeek's `__init__`, typed `PretrainedConfig`): the
    checkpoint's config.json decides, and the pinned transformers registers the architecture
    for one model type. SGLang's own config class of that type answers for it where there is
    one (its loader registers it over transformers'), else transformers'."""
    registered = transformers.registered_type(name)
    if registered is None:
        return None
    kind, line = registered
    source = f"transformers {transformers.version}:{_AUTO_MODELS}"
    own = _sglang_config_of(tree, kind)
    if own is not None:
        path, cls, type_line = own
        indexer = _sglang_default_line(tree, path, cls, INDEXER_KEY)
        return ArchType(name, kind, source, line, cls.name, tree.relative(path), type_line, indexer)
    config = transformers.config_of(kind)
    typed = None if config is None else transformers.model_type(config)
    if config is None or typed is None:
        return None
    indexer = transformers.default_line(config, INDEXER_KEY)
    return ArchType(name, kind, source, line, config, typed[1], typed[2], indexer)


def _sglang_config_of(tree: _Tree, model_type: str) -> tuple[Path, ast.ClassDef, int] | None:
    """SGLang's one config class (`sglang/srt/configs/*.py`) whose own `model_type` is
    `model_type`, and the line that says so."""
    found = []
    for path in sorted((tree.root / _CONFIGS).glob("*.py")):
        for node in tree.parse(path).body:
            if isinstance(node, ast.ClassDef):
                typed = _model_type_line(node)
                if typed is not None and typed[0] == model_type:
                    found.append((path, node, typed[1]))
    return found[0] if len(found) == 1 else None


def kept(kind: ArchType) -> bool:
    """Whether the package keeps an architecture's row: a build check reads its type, or
    its config class makes it a sparse attention model by default."""
    return kind.model_type in engine_model_types() or kind.indexer_line > 0


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
    data: dict[str, list[config_types.Row]] = {}
    for release in RELEASE_NAMES:
        every = architecture_types(release)
        data[release] = [row(kind) for kind in every if kept(kind)]
        print(f"{release}: {len(every)} architectures typed, {len(data[release])} kept",
              file=sys.stderr)  # fmt: skip
    text = config_types.render(data)
    return write_or_check(config_types.DATA_MODULE, text, "arch_types", check=False)


def row(kind: ArchType) -> tuple[str, str, str, int, str, str, int, int]:
    """The stored form of one architecture's type (`compat.engine.models.config_types.Row`)."""
    return (kind.architecture, kind.model_type, kind.model_file, kind.model_line,
            kind.config_class, kind.config_file, kind.config_line,
            kind.indexer_line)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
