"""The build cache's key of one part of the finder's data (a release and a model option):
a digest of what that part reads, and of nothing else.

A part is computed by the guard from three things, each digested here:

- the release's data as the guard sees it: its folded start-up rules and its folded matrix
  (so an edit to one release's file moves that release, and every later one it folds
  into, exactly when their folded data changes; modelling a new release moves no other);
- the finder's menus for that release (GPUs, KV dtypes, page sizes, the model zoo's fields
  of each named model), its backends and its pair prefills;
- the code that computes it: every module of the package that `compat.publish.finder`
  imports, directly or not, read from their sources (the release files are left out: their
  effect is the folded data above), and the data files next to them.

Python's version is not in the key: the data is JSON of the guard's strings and numbers,
the same under every supported Python.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import hashlib
import inspect
import json
import re
import types
from collections.abc import Mapping, Set
from pathlib import Path
from typing import Any

import msgspec

from compat.publish.outputs import PACKAGE_DIR

FORMAT = 1
"""The key's recipe: a change to what this module digests changes it."""
ROOT_MODULE = "compat.publish.finder"
_RELEASE_FILE = re.compile(r"v\d+_\d+_\d+\.py")


def canonical(value: Any) -> Any:
    """`value` as plain JSON data that is the same in every process: sets and mappings in a
    sorted order (a set's order follows string hashing, which differs per process), structs
    and dataclasses as their type's name and fields, enums as their type and value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__name__, canonical(value.value)]
    if isinstance(value, msgspec.Struct):
        fields = value.__struct_fields__
        return {"type": type(value).__name__, **{f: canonical(getattr(value, f)) for f in fields}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [field.name for field in dataclasses.fields(value)]
        return {"type": type(value).__name__, **{f: canonical(getattr(value, f)) for f in names}}
    if isinstance(value, Mapping):
        return sorted(([canonical(k), canonical(v)] for k, v in value.items()), key=_dumped)
    if isinstance(value, Set):
        return sorted((canonical(item) for item in value), key=_dumped)
    if isinstance(value, (tuple, list)):
        return [canonical(item) for item in value]
    if isinstance(value, types.FunctionType):
        # A rule's predicate: its source text and what it closes over decide what it does.
        cells = [canonical(cell.cell_contents) for cell in value.__closure__ or ()]
        defaults = canonical(value.__defaults__ or ())
        return {"function": value.__qualname__, "source": inspect.getsource(value),
                "closure": cells, "defaults": defaults}  # fmt: skip
    raise TypeError(f"finder keys: cannot digest a {type(value).__name__}: {value!r}")


def _dumped(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _digest(value: Any) -> str:
    return hashlib.sha256(_dumped(value).encode("utf-8", "surrogatepass")).hexdigest()


@functools.cache
def release_digest(release: str) -> str:
    """A digest of `release`'s folded start-up rules and folded matrix."""
    from compat.releases import RELEASES, release_matrix

    return _digest([canonical(RELEASES[release]), canonical(release_matrix(release))])


@functools.cache
def menus_digest(release: str) -> str:
    """A digest of the finder's option space for `release`: menus, backends, pairs."""
    from compat.publish.finder_options import finder_backends, finder_options, pair_prefills

    axes = finder_options(release)
    return _digest([canonical(axes), finder_backends(release), pair_prefills(release)])


def imported_sources(root: str = ROOT_MODULE, package: Path = PACKAGE_DIR) -> tuple[Path, ...]:
    """The source files of every module of the package that `root` imports, directly or
    through others (imports inside functions too), with the packages that hold them; the
    release files left out. Read from the sources, so the answer does not depend on what
    this process happened to import."""
    name = package.name
    seen: set[Path] = set()
    waiting = [root]
    while waiting:
        module = waiting.pop()
        for path in _files_of(module, package):
            if path in seen or _RELEASE_FILE.fullmatch(path.name):
                continue
            seen.add(path)
            waiting += [m for m in _imports_in(path.read_bytes()) if m.split(".")[0] == name]
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=1024)
def _imports_in(source: bytes) -> tuple[str, ...]:
    """Every module the source's import statements name, parsed once per text: a key is
    computed again after an edit, which changes one file."""
    return tuple(module for node in ast.walk(ast.parse(source)) for module in _imported(node))


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement may import (`from a.b import c` may import a.b.c);
    relative imports are not used by the package."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def _files_of(module: str, package: Path) -> list[Path]:
    """The file of `module` and the `__init__.py` of each package above it (run on import);
    nothing for a name that is not a module (an attribute imported with `from`)."""
    parts = module.split(".")[1:]
    files = []
    for depth in range(len(parts) + 1):
        base = package.joinpath(*parts[:depth])
        if (base / "__init__.py").is_file():
            files.append(base / "__init__.py")
        elif depth == len(parts) and base.with_suffix(".py").is_file():
            files.append(base.with_suffix(".py"))
    return files


@functools.cache
def code_digest(package: Path = PACKAGE_DIR) -> str:
    """A digest of the finder's code (`imported_sources`) and the data files beside it."""
    sources = imported_sources(package=package)
    folders = sorted({path.parent for path in sources})
    data = [p for folder in folders for p in sorted(folder.glob("*.json"))]
    digest = hashlib.sha256()
    for path in (*sources, *data):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def part_key(release: str, model: str) -> str:
    """The cache key of the data of `release` and the model option `model`."""
    parts = [FORMAT, code_digest(), release_digest(release), menus_digest(release)]
    return _digest([*parts, release, model])
