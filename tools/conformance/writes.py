"""Which line of SGLang's own code last wrote a launch's backend and page-size fields.

When SGLang starts on another backend or page size than a prediction, the line to read is
the one that chose it. Up to 0.5.18 start-up writes the ServerArgs fields themselves
(`self.page_size = 64` in its post-init); from 0.5.19 the fields keep the raw input and each
decision is declared with `declare_resolution(server_args, source, **fields)`, the last
declaration winning. `WriteLog.install` hooks both on a freshly loaded release: the record's
attribute writes, and every module's `declare_resolution`. Each write of a watched field
records `file:line (function)` of the release's code that made it; the last one stands.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

WATCHED = frozenset(
    {"attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size"}
)
"""The fields whose resolved values the conformance comparison reads."""
# Functions that only pass a decision on: the one that made it is further out, or is named
# by the declaration's source (a registered pass, a method of the 0.5.15-0.5.18 dispatch,
# whose declarations `materialize_declarations` writes at the end of the post-init).
_PLUMBING = frozenset(
    {
        *("declare_resolution", "run_post_process_pass", "record_foreign_defaults"),
        *("materialize_declarations", "declare_late_resolution", "_apply_fields"),
        "__setattr__",
    }
)
_OVERRIDES = "sglang.srt.arg_groups.overrides"


class WriteLog:
    """The last writer of each watched field during one launch (`clear` between launches)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.last: dict[str, str] = {}
        self._found: dict[str, str | None] = {}  # source -> where it is defined

    def clear(self) -> None:
        self.last = {}

    def install(self, server_args_module: types.ModuleType) -> None:
        """Hook the release's ServerArgs writes and its declarations (when it has them)."""
        cls = server_args_module.ServerArgs
        setattr_of_release: Callable[[Any, str, Any], None] = cls.__setattr__
        log = self

        def recording_setattr(record: Any, name: str, value: Any) -> None:
            if name in WATCHED:
                log._note((name,), sys._getframe(1), None)
            setattr_of_release(record, name, value)

        cls.__setattr__ = recording_setattr
        overrides = sys.modules.get(_OVERRIDES)
        declare = getattr(overrides, "declare_resolution", None)
        if overrides is None or declare is None:
            return  # up to 0.5.18: start-up writes the fields themselves

        def recording_declare(server_args: Any, source: str, **fields: Any) -> Any:
            watched = tuple(name for name in fields if name in WATCHED)
            if watched:
                log._note(watched, sys._getframe(1), source)
            return declare(server_args, source, **fields)

        # Modules that imported it by name hold the original: each gets the hook.
        for module in list(sys.modules.values()):
            if getattr(module, "declare_resolution", None) is declare:
                module.declare_resolution = recording_declare

    def _note(
        self, fields: tuple[str, ...], frame: types.FrameType | None, source: str | None
    ) -> None:
        where = self._writer(frame, source)
        for name in fields:
            self.last[name] = where

    def _writer(self, frame: types.FrameType | None, source: str | None) -> str:
        """`file:line (function)` of the release's code that made a decision."""
        while frame is not None:
            code = frame.f_code
            if code.co_name in _PLUMBING:
                named = source or frame.f_locals.get("_source") or frame.f_locals.get("source")
                found = self._defined(named, frame) if isinstance(named, str) else None
                if found is not None:
                    return found
            elif self._inside(code.co_filename):
                return self._place(code.co_filename, frame.f_lineno, code.co_name)
            frame = frame.f_back
        return source or "?"

    def _defined(self, source: str, frame: types.FrameType) -> str | None:
        """Where the function a declaration names is defined: a callable the plumbing
        holds (run_post_process_pass' `fn`), else one of the release's modules or classes."""
        if source not in self._found:
            self._found[source] = self._search(source, frame)
        return self._found[source]

    def _search(self, source: str, frame: types.FrameType) -> str | None:
        candidates = [*frame.f_locals.values()]
        for name, module in list(sys.modules.items()):
            if name.startswith("sglang.") and isinstance(module, types.ModuleType):
                values = list(vars(module).values())
                candidates += values
                candidates += [v for c in values if isinstance(c, type) for v in vars(c).values()]
        for value in candidates:
            # Functions only: a stub's attributes are never read (reading one is an error).
            function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if not isinstance(function, types.FunctionType):
                continue
            code = function.__code__
            if source in (function.__qualname__, function.__name__) and self._inside(
                code.co_filename
            ):
                return self._place(code.co_filename, _def_line(code), source)
        return None

    def _inside(self, filename: str) -> bool:
        return Path(filename).is_relative_to(self.root)

    def _place(self, filename: str, line: int, function: str) -> str:
        path = Path(filename)
        shown = path.relative_to(self.root) if path.is_relative_to(self.root) else path.name
        return f"{shown}:{line} ({function})"


def _def_line(code: types.CodeType) -> int:
    """The `def` line of a function (its first line is its first decorator's)."""
    line = code.co_firstlineno
    while linecache.getline(code.co_filename, line).lstrip().startswith("@"):
        line += 1
    return line
