"""The launch flags a release's own parser declares, and the generator of their data.

`ServerArgs.add_cli_args(argparse.ArgumentParser())` of the wheel is run as SGLang runs it.
Its modules are read straight from the wheel; every import outside `sglang` (torch, its
kernels, ...) gets a placeholder, since declaring flags never calls into them. Run in a
fresh interpreter per release (the wheel's modules stay in `sys.modules` until it exits):

    python tools/flags.py 0.5.7 0.5.23   # or --all

writes `compat/sglang_flag_data.py` from the parsers of the named releases, keeping the
others as committed.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import types
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from conformance.wheel import wheel_path

# Real packages SGLang's flag declarations use (msgspec structs from 0.5.20).
_REAL = ("msgspec",)
# The modules that declare the flags: these must run, never be faked.
_DECLARING = ("sglang.srt.server_args", "sglang.srt.arg_groups")


class _Placeholder(types.ModuleType):
    """A module, class, function or value all at once; any use gives another placeholder."""

    __path__: ClassVar[list[str]] = []

    def __getattr__(self, name: str) -> Any:
        if name == "__version__":
            return "0.0.0"
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator: keep the function
        return _Placeholder(f"{self.__name__}()")

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)

    def __bool__(self) -> bool:
        return False

    def __iter__(self) -> Any:
        return iter(())

    def __getitem__(self, key: Any) -> Any:
        return self

    def __or__(self, other: Any) -> Any:
        return self

    __ror__ = __or__


class _WheelImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`sglang.*` from the wheel's files (its top `__init__` skipped), anything else faked."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.names = set(archive.namelist())

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        root = fullname.partition(".")[0]
        if root in sys.stdlib_module_names or root in _REAL:
            return None
        if root != "sglang":
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        stem = fullname.replace(".", "/")
        if fullname == "sglang":  # its __init__ imports the whole engine
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        for file, package in ((f"{stem}/__init__.py", True), (f"{stem}.py", False)):
            if file in self.names:
                spec = importlib.machinery.ModuleSpec(fullname, self, is_package=package)
                spec.origin = file
                return spec
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.origin is None or spec.origin not in self.names:
            return _Placeholder(spec.name)
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        spec = module.__spec__
        if spec is None or spec.origin not in self.names:
            return
        module.__file__ = spec.origin
        if spec.submodule_search_locations is not None:
            module.__path__ = []
        source = self.archive.read(spec.origin).decode("utf-8")
        try:
            exec(compile(source, spec.origin, "exec"), module.__dict__)
        except Exception:
            if spec.name.startswith(_DECLARING):
                raise
            # A module the flags do not come from needed more than a placeholder gives
            # (a GPU probe at import time, ...): what it defined stays, the rest is faked.
            module.__class__ = _Placeholder


def _arity(action: argparse.Action) -> str:
    nargs = action.nargs
    if nargs == "?":
        return "optional"
    if nargs in ("*", "+", argparse.REMAINDER) or (isinstance(nargs, int) and nargs > 1):
        return "list"
    if nargs == 0:
        return "switch"
    return "value"


def _parser(wheel: Path) -> argparse.ArgumentParser:
    """The wheel's own `ServerArgs.add_cli_args` parser, its modules imported from the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        sys.meta_path.insert(0, _WheelImporter(archive))
        server_args = importlib.import_module("sglang.srt.server_args")
        parser = argparse.ArgumentParser(add_help=False)
        server_args.ServerArgs.add_cli_args(parser)
    return parser


def parser_flags(wheel: Path) -> dict[str, str]:
    """Every option string the wheel's `ServerArgs.add_cli_args` declares, with its arity.

    Imports the wheel's modules into this interpreter: call it once per process.
    """
    parser = _parser(wheel)
    return dict(
        sorted(
            (name, _arity(action)) for action in parser._actions for name in action.option_strings
        )
    )


def parser_choices(wheel: Path) -> dict[str, list[str]]:
    """The `choices=` of every option the wheel's parser declares with some.

    Imports the wheel's modules into this interpreter: call it once per process.
    """
    parser = _parser(wheel)
    return {
        name: [str(choice) for choice in action.choices]
        for action in parser._actions
        if action.choices
        for name in action.option_strings
    }


def _in_subprocess(release: str, mode: str) -> Any:
    """`mode` (`--print` or `--choices`) of `release`'s wheel, in a fresh interpreter."""
    wheel = wheel_path(release)
    result = subprocess.run(
        [sys.executable, "-m", "conformance.flags", mode, str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )
    if result.returncode != 0:
        raise RuntimeError(f"sglang {release}: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout)


def sub_backend_choices(release: str) -> dict[str, tuple[str, ...]]:
    """The choices of the sub-backend flags `release`'s parser declares, by ServerArgs field
    (the modelled flags' own spelling first, then their older one)."""
    from compat.inputs.flags import SUB_BACKEND_FLAGS

    declared: dict[str, list[str]] = _in_subprocess(release, "--choices")
    found = {}
    for flag in SUB_BACKEND_FLAGS:
        spelled = next((option for option in flag.options if option in declared), None)
        if spelled is not None:
            found[flag.field] = tuple(declared[spelled])
    return found


def release_flags_in_subprocess(release: str) -> dict[str, str]:
    """`parser_flags` of `release`'s wheel, computed in a fresh interpreter."""
    flags: dict[str, str] = _in_subprocess(release, "--print")
    return flags


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--print"] and len(args) == 2:
        print(json.dumps(parser_flags(Path(args[1]))))
        return 0
    if args[:1] == ["--choices"] and len(args) == 2:
        print(json.dumps(parser_choices(Path(args[1]))))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from compat.engine.parser import encoding as flag_source
    from compat.engine.parser import sub_choices
    from compat.releases import RELEASE_NAMES

    releases = list(RELEASE_NAMES) if args == ["--all"] else args
    if not releases or "--all" in releases:
        print("usage: python tools/flags.py (--all | RELEASE ...)", file=sys.stderr)
        return 2
    data = flag_source.committed_releases()
    subs = {release: dict(sub_choices.sub_choices(release)) for release in data}
    for release in releases:
        data[release] = release_flags_in_subprocess(release)
        subs[release] = sub_backend_choices(release)
        print(f"{release}: {len(data[release])} flags", file=sys.stderr)
    flag_source.DATA_MODULE.write_text(flag_source.render_data(data), encoding="utf-8")
    order = sorted(data, key=flag_source.release_key)
    sub_module = Path(sub_choices.__file__).with_name("sub_data.py")
    sub_module.write_text(sub_choices.render_sub_data(subs, order), encoding="utf-8")
    print(f"wrote {flag_source.DATA_MODULE.name}, {sub_module.name}: releases {', '.join(order)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
