"""The harness's modules left out of its cache keys are read by no cached fact.

`harness_digest` keys every cached outcome of a wheel on the harness's modules, but those of
`LIVE_ONLY` (what SGLang runs after the build), which only the tests that run them live
import: an edit there must not recompute start-up and build outcomes, and no module whose
outcomes are cached may import them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conformance.wheel import LIVE_ONLY

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _imported(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def test_no_tool_imports_the_live_only_modules() -> None:
    live = {f"conformance.{name.removesuffix('.py')}" for name in LIVE_ONLY}
    assert all((TOOLS / "conformance" / name).exists() for name in LIVE_ONLY)
    for path in sorted(TOOLS.rglob("*.py")):
        if path.parent.name == "conformance" and path.name in LIVE_ONLY:
            continue
        found = _imported(ast.parse(path.read_text())) & live
        assert not found, f"{path.relative_to(TOOLS)} imports {sorted(found)}"
