"""Where a wheel's source first calls a kernel, read statically: the evidence a kernel
limit cites (the class method of SGLang's backend that reaches the kernel, and its line)."""

from __future__ import annotations

import ast
from collections.abc import Callable


def first_method_call(source: str, matches: Callable[[ast.Call], bool]) -> tuple[str, int] | None:
    """(class.function, line) of the first call in a class's method that `matches`; None
    where no method makes one."""
    found: list[tuple[int, str]] = []
    for klass in ast.walk(ast.parse(source)):
        if not isinstance(klass, ast.ClassDef):
            continue
        for function in klass.body:
            if not isinstance(function, ast.FunctionDef):
                continue
            found += [
                (node.lineno, f"{klass.name}.{function.name}")
                for node in ast.walk(function)
                if isinstance(node, ast.Call) and matches(node)
            ]
    if not found:
        return None
    line, where = min(found)
    return where, line
