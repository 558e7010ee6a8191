"""Stand-ins for the modules SGLang's start-up files import but whose code we do not run.

Two kinds:

- placeholder modules, for heavy third-party packages (numpy, triton, zmq, ...) and for
  `sglang` modules that matter only after start-up. Any attribute is an inert class that
  can be subclassed, instantiated or used as a decorator; touching anything on it raises
  StubUsedError, so a start-up decision that really depends on a stub fails loudly
  instead of reading a made-up value.
- selected real definitions: `exec_definitions` runs chosen top-level functions and
  constants of a real file from the wheel (for modules whose other imports are heavy).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


class StubUsedError(AttributeError):
    """SGLang code used a stub in a way the harness does not model."""


# Every construction or call of a stand-in, in order. The runtime checks that no launch
# adds to it: SGLang's start-up decisions must not have run through a stub.
USES: list[str] = []


class _Inert:
    """An inert stand-in: constructible and subclassable; anything else is an error."""

    _stub_name = "?"

    def __init__(self, *args: object, **kwargs: object) -> None:
        USES.append(self._stub_name)

    def __init_subclass__(cls, **kwargs: object) -> None:
        pass

    def __class_getitem__(cls, item: object) -> type:
        return cls

    def __call__(self, *args: object, **kwargs: object) -> object:
        # Used as a decorator (`@placeholder(...)` then applied to a function).
        USES.append(f"{self._stub_name}(...)")
        return args[0] if len(args) == 1 and callable(args[0]) else self

    def __getattr__(self, name: str) -> Any:
        raise StubUsedError(f"{self._stub_name}.{name} is a harness stub, not modelled")


def inert_attribute(name: str, value: object) -> None:
    """Give every stand-in object the attribute `name` (None: take it away again), for a
    harness that lets SGLang code read one plain attribute of what a stand-in built."""
    if value is None:
        if name in _Inert.__dict__:
            delattr(_Inert, name)
    else:
        setattr(_Inert, name, value)


def _inert_class(qualname: str) -> type:
    return type(qualname.rsplit(".", 1)[-1], (_Inert,), {"_stub_name": qualname})


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        if any(finder.provides(full) for finder in _ACTIVE):
            # `from package import submodule` where the submodule is real or prepared.
            import importlib

            return importlib.import_module(full)
        value = _inert_class(full)
        setattr(self, name, value)
        return value


class _ReexportModule(_PlaceholderModule):
    """A package whose names come from one real submodule where it defines them."""

    source = ""

    def __getattr__(self, name: str) -> Any:
        import importlib

        if not name.startswith("__"):
            real = importlib.import_module(self.source)
            if hasattr(real, name):
                return getattr(real, name)
        return super().__getattr__(name)


def reexporting_module(name: str, source: str) -> types.ModuleType:
    """`name` as a placeholder that answers with `source`'s names (its heavy siblings
    stay unloaded)."""
    module = _ReexportModule(name)
    module.source = source
    module.__path__ = []
    return module


def placeholder_module(name: str) -> types.ModuleType:
    module = _PlaceholderModule(name)
    module.__path__ = []  # importable submodules: `from numpy.typing import X`
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    return module


_ACTIVE: list[StubFinder] = []  # finders in sys.meta_path (see SglangRuntime)


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports modules of the `real` packages from the release's source tree, `fixed` names
    from prepared modules, and everything else under a `placeholder_roots` package as a
    placeholder module.

    `real` holds dotted names: a module or package (`sglang.srt.server_args`), or with a
    trailing `.*` a package and its whole subtree (`sglang.srt.arg_groups.*`). A real name
    without a file in `source` (a module that release does not have) becomes a placeholder.
    """

    def __init__(
        self,
        source: Path,
        real: Iterable[str],
        fixed: dict[str, types.ModuleType],
        placeholder_roots: Iterable[str],
    ) -> None:
        self.source = source
        names = tuple(real)
        self.real = frozenset(name for name in names if not name.endswith(".*"))
        self.trees = tuple(name[:-2] for name in names if name.endswith(".*"))
        self.fixed = fixed
        self.roots = frozenset(placeholder_roots)

    def real_file(self, fullname: str) -> Path | None:
        in_tree = any(fullname == tree or fullname.startswith(tree + ".") for tree in self.trees)
        if fullname not in self.real and not in_tree:
            return None
        parts = fullname.split(".")
        base = self.source.joinpath(*parts)
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file():
                return file
        return None

    def provides(self, fullname: str) -> bool:
        """Whether `fullname` is a real or prepared module (not a placeholder)."""
        return fullname in self.fixed or self.real_file(fullname) is not None

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in self.fixed:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        file = self.real_file(fullname)
        if file is not None:
            is_package = file.name == "__init__.py"
            return importlib.util.spec_from_file_location(
                fullname,
                file,
                submodule_search_locations=[str(file.parent)] if is_package else None,
            )
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = self.fixed.get(spec.name) or placeholder_module(spec.name)
        module.__spec__ = spec
        if not hasattr(module, "__path__"):
            module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def exec_definitions(
    file: Path, names: Iterable[str], namespace: dict[str, Any], optional: Iterable[str] = ()
) -> dict[str, Any]:
    """Run only the top-level definitions of `file` that bind `names` (and those of
    `optional` it has), in `namespace`.

    The code is the wheel's own, compiled from its source; only the rest of the module
    (its imports and unrelated definitions) is left out.
    """
    wanted = set(names)
    extra = set(optional)
    tree = ast.parse(file.read_text(), filename=str(file))
    kept: list[ast.stmt] = []
    for node in tree.body:
        bound: set[str] = set()
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound = {node.name}
        elif isinstance(node, ast.Assign):
            bound = {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound = {node.target.id}
        if bound & (wanted | extra):
            kept.append(node)
            wanted -= bound
    if wanted:
        raise LookupError(f"{file.name} defines no {', '.join(sorted(wanted))}")
    module = ast.Module(body=kept, type_ignores=[])
    exec(compile(module, str(file), "exec"), namespace)  # the wheel's own code
    return namespace


def module_with(name: str, **attributes: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def constant_of(file: Path, name: str) -> object:
    """A top-level literal constant of `file` (read, not imported)."""
    for node in ast.parse(file.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise LookupError(f"{file.name} has no constant {name}")


Factory = Callable[[], types.ModuleType]
