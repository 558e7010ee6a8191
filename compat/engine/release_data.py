"""The layout of a generated per-release data module: the oldest release whole (BASE), then
each later release's changes (CHANGES), as `ruff format` would write them.

The launch flags (`compat.engine.parser`) and what releases know of models
(`compat.engine.models`) are stored this way; each says what its groups mean.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

Groups = Mapping[str, Sequence[str]]


def render_release_data(
    docstring: Sequence[str], base_release: str, base: Groups, changes: Iterable[tuple[str, Groups]]
) -> str:
    """The module's source: `docstring` (its lines, quotes included), BASE_RELEASE, BASE and
    CHANGES (`{}` for a release that changed nothing)."""
    lines = [
        *docstring,
        "",
        f"BASE_RELEASE = {json.dumps(base_release)}",
        "",
        "BASE: dict[str, tuple[str, ...]] = {",
        *_entries(base, "    "),
        "}",
        "",
        "CHANGES: dict[str, dict[str, tuple[str, ...]]] = {",
    ]
    for release, delta in changes:
        if not delta:
            lines.append(f"    {json.dumps(release)}: {{}},")
            continue
        lines.append(f"    {json.dumps(release)}: {{")
        lines += _entries(delta, "        ")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _entries(groups: Groups, indent: str) -> list[str]:
    lines = []
    for key, names in groups.items():
        quoted = [json.dumps(name) for name in names]
        one_line = f"{indent}{json.dumps(key)}: ({', '.join(quoted)}{',' * (len(quoted) == 1)}),"
        if len(one_line) <= 99:  # as `ruff format` writes it
            lines.append(one_line)
            continue
        lines.append(f"{indent}{json.dumps(key)}: (")
        lines += [f"{indent}    {name}," for name in quoted]
        lines.append(f"{indent}),")
    return lines
