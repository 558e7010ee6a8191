"""`aiter_can_use_preshuffle_paged_mqa()` in each release (`compat.releases.preshuffle`),
read back from the wheels: the releases that have it are those whose rules hold it, at the
line recorded; it reads the variables recorded, in their order, with the parser recorded;
and the DSA branch's page 1 on ROCm calls it, where the releases before force 1 always."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conformance.availability import require_source
from conformance.wheel import source_root

from compat.engine.preshuffle import AOT_GLUON, USE_AITER
from compat.releases import RELEASE_NAMES, release_rules
from compat.releases.preshuffle import FUNCTION

_CALLER = "Setting page size to 1 for DeepSeek DSA on ROCm"


def _defining(root: Path) -> list[Path]:
    srt = root / "sglang" / "srt" / "layers" / "attention"
    return [
        path
        for path in (srt / "nsa" / "utils.py", srt / "dsa" / "utils.py")
        if path.is_file() and f"def {FUNCTION}(" in path.read_text()
    ]


def _reads(function: ast.FunctionDef) -> list[tuple[str, str]]:
    """(how, name) of each variable read, in source order."""
    found: list[tuple[int, int, str, str]] = []
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "get_bool_env_var"
            and isinstance(node.args[0], ast.Constant)
        ):
            found.append((node.lineno, node.col_offset, "get_bool_env_var", node.args[0].value))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "envs"
        ):
            found.append((node.lineno, node.col_offset, "envs", node.attr))
    return [(how, name) for _, _, how, name in sorted(found)]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_check_is_where_the_rules_say(release: str) -> None:
    require_source(release)
    root = source_root(release)
    preshuffle = release_rules(release).preshuffle
    files = _defining(root)
    if preshuffle is None:
        assert files == [], release
        return
    path, _, rest = preshuffle.source.partition(":")
    line, function = rest.split(" ")
    assert [str(f.relative_to(root)) for f in files] == [path]
    tree = ast.parse(files[0].read_text())
    (node,) = (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    index = RELEASE_NAMES.index(release)
    if release_rules(RELEASE_NAMES[index - 1]).preshuffle != preshuffle:
        assert node.lineno == int(line)  # the line of the release that wrote it so
    reads = _reads(node)
    switch = [name for how, name in reads if name not in (USE_AITER, AOT_GLUON)]
    assert reads[0] == ("get_bool_env_var", USE_AITER)
    assert reads[-1] == ("get_bool_env_var", AOT_GLUON)
    assert switch == [preshuffle.disable[0]]
    parsed_by = dict((name, how) for how, name in reads)[preshuffle.disable[0]]
    assert (parsed_by == "envs") is preshuffle.env_bool
    if preshuffle.env_bool:  # the alias, where the registry declares one
        environ = (root / "sglang" / "srt" / "environ.py").read_text()
        declared = next(ln for ln in environ.splitlines() if f"{preshuffle.disable[0]} =" in ln)
        aliased = "WithAlias" in declared
        assert aliased is (len(preshuffle.disable) == 2)
        if aliased:
            text = environ[environ.index(declared) :][:300]
            assert f'deprecated_name="{preshuffle.disable[1]}"' in text


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_rocm_page_1_follows_the_check(release: str) -> None:
    require_source(release)
    root = source_root(release)
    callers = [
        path
        for path in (root / "sglang" / "srt").rglob("*.py")
        if _CALLER in path.read_text(errors="replace")
    ]
    rules = release_rules(release)
    if not callers:  # 0.5.7: no page size of its own on ROCm
        assert rules.preshuffle is None
        return
    (caller,) = callers
    text = caller.read_text()
    block = text[: text.index(_CALLER)][-1200:]
    assert (FUNCTION in block) is (rules.preshuffle is not None), release
