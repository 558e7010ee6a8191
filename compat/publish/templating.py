"""The sandbox the pages are rendered in, and where its templates may be read from.

A template named by `compat docs --template-dir` is code from wherever the user points:
Jinja's immutable sandbox keeps it from the interpreter; here, besides, it cannot read a
file outside its folder (through a symbolic link), block on a FIFO, or ask for a range,
a string or a power so large that rendering hangs or fails with something other than a
template error.
"""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateTooCostlyError(SecurityError):
    """A template asks for more than a page needs (a huge range, string or power), or its
    code fails with something other than a template error."""


# What one template expression may build: far above any page, far below a hang.
MAX_SEQUENCE = 1_000_000
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024


class Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, with `*` and `**` bounded as it bounds `range()`."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._safe: dict[tuple[type, str], bool] = {}

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Jinja's answer, once per type and attribute: it reads nothing else (the name,
        and isinstance tests of the object), and a page asks it for every attribute read,
        which was half of a page's rendering time. An object that reports another class
        than its type is asked every time."""
        kind = type(obj)
        if obj.__class__ is not kind:
            return super().is_safe_attribute(obj, attr, value)
        safe = self._safe.get((kind, attr))
        if safe is None:
            safe = self._safe[kind, attr] = super().is_safe_attribute(obj, attr, value)
        return safe

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "**":
            if isinstance(right, (int, float)) and abs(right) > 64:
                raise TemplateTooCostlyError(f"the power {left!r} ** {right!r} is too large")
            return operator.pow(left, right)
        for sequence, count in ((left, right), (right, left)):
            repeated = isinstance(sequence, (str, list, tuple)) and isinstance(count, int)
            if repeated and len(sequence) * count > MAX_SEQUENCE:
                raise TemplateTooCostlyError(
                    f"a sequence of {len(sequence)} repeated {count} times is over "
                    f"{MAX_SEQUENCE} items"
                )
        return operator.mul(left, right)


class ConfinedLoader(jinja2.BaseLoader):
    """Templates from one folder only: a symbolic link that leads out of it is refused.

    The file is opened by its resolved path, without following a last link, and read only
    when it is a regular file (a FIFO would block).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        root = os.path.realpath(self.folder)
        path = os.path.realpath(os.path.join(root, *split_template_path(template)))
        if os.path.commonpath([root, path]) != root:
            raise SecurityError(
                f"template {template} resolves to {path}, outside the template folder {root} "
                "(a symbolic link leads out of it)"
            )
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise jinja2.TemplateNotFound(template) from None
        with os.fdopen(fd, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_TEMPLATE_BYTES:
                raise SecurityError(f"template {template} is not a regular file of a few KB")
            source = handle.read(MAX_TEMPLATE_BYTES).decode("utf-8")

        def uptodate() -> bool:
            try:
                return os.stat(path).st_mtime_ns == status.st_mtime_ns
            except OSError:
                return False

        return source, path, uptodate


def render(template: jinja2.Template, **context: Any) -> str:
    """`template` rendered; whatever a template's own code raises is a TemplateError.

    A template named by `--template-dir` is the user's input: the sandbox's range limit
    (an OverflowError), a filter given the wrong type (a TypeError), a template that
    includes itself (a RecursionError) make the page impossible to render, not a bug here.
    """
    try:
        return template.render(**context)
    except jinja2.TemplateError:
        raise
    except (Exception, RecursionError, MemoryError) as error:
        raise TemplateTooCostlyError(f"{type(error).__name__}: {error}") from None
