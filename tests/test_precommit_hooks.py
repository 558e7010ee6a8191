"""`.pre-commit-hooks.yaml`: the hooks other repositories use parse, and their commands work."""

from __future__ import annotations

import importlib
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
EXPECTED = {"compat-docs": "compat docs --check", "compat-export": "compat export --check"}
# The hook an SGLang checkout runs on its own page: given the page's path.
SGLANG_PAGE = ("compat-sglang-page", "compat docs --sglang-mdx --check")


def _scalar(text: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def tiny_yaml(text: str) -> list[dict[str, Any]]:
    """Just enough YAML for a hooks file: a top-level list of flat `key: value` mappings."""
    hooks: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("- "):
            hooks.append({})
            line = line[2:]
        elif line.startswith("  ") and hooks:
            line = line[2:]
        else:
            raise ValueError(f"unsupported line: {raw!r}")
        key, sep, value = line.partition(": ")
        if not sep and line.endswith(":"):
            key, value = line[:-1], ""
        elif not sep:
            raise ValueError(f"not a key: value line: {raw!r}")
        hooks[-1][key.strip()] = _scalar(value)
    return hooks


def load_hooks() -> list[dict[str, Any]]:
    text = HOOKS_FILE.read_text(encoding="utf-8")
    try:
        yaml = importlib.import_module("yaml")  # PyYAML comes with mkdocs
    except ImportError:
        return tiny_yaml(text)
    parsed = yaml.safe_load(text)
    assert parsed == tiny_yaml(text), "the tiny parser disagrees with PyYAML"
    return list(parsed)


HOOKS = {hook["id"]: hook for hook in load_hooks()}


def test_the_hooks_file_declares_both_hooks() -> None:
    assert set(HOOKS) == {*EXPECTED, SGLANG_PAGE[0]}
    for hook_id, entry in EXPECTED.items():
        hook = HOOKS[hook_id]
        assert hook["entry"] == entry
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook.get("always_run") is True or "files" in hook
        assert hook["name"]


def console_scripts() -> set[str]:
    """The names under [project.scripts] of pyproject.toml (tomllib is 3.11+ only)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    assert section is not None, "pyproject.toml has no [project.scripts]"
    return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*=", section.group(1), re.M))


def test_the_entry_is_a_console_script_of_the_package() -> None:
    scripts = console_scripts()
    assert "compat" in scripts
    for hook in HOOKS.values():
        assert shlex.split(hook["entry"])[0] in scripts


def test_the_tiny_parser_reads_what_it_claims() -> None:
    text = "# c\n- id: a\n  entry: 'x y'\n  flag: false\n- id: b\n  always_run: true\n"
    assert tiny_yaml(text) == [
        {"id": "a", "entry": "x y", "flag": False},
        {"id": "b", "always_run": True},
    ]
    with pytest.raises(ValueError):
        tiny_yaml("id: not-a-list\n")


def run_entry(hook_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The hook's entry as `python -m compat ...`, with this interpreter, in the repo root."""
    program, *args = shlex.split(HOOKS[hook_id]["entry"])
    assert program == "compat"
    return subprocess.run(
        [sys.executable, "-m", "compat", *args, *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("hook_id", sorted(EXPECTED))
def test_each_hook_passes_on_this_repository(hook_id: str) -> None:
    done = run_entry(hook_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout
    assert "Traceback" not in done.stderr


STALE_FILES = {"compat-docs": "docs/attention_backend.md", "compat-export": "docs/matrix.json"}


@pytest.mark.parametrize("hook_id", sorted(EXPECTED))
def test_each_hook_fails_on_a_stale_copy(hook_id: str, tmp_path: Path) -> None:
    """The hooks can fail: a checkout whose generated file was hand-edited is refused."""
    for folder in ("docs", "templates"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    stale = tmp_path / STALE_FILES[hook_id]
    stale.write_text(stale.read_text(encoding="utf-8") + "\nhand edit\n", encoding="utf-8")
    done = run_entry(hook_id, "--root", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "stale" in done.stdout
    assert "hand edit" in done.stdout


def test_the_sglang_page_hook_checks_the_page_it_is_given(tmp_path: Path) -> None:
    """From an SGLang checkout: the page's path is passed; its tables pass when they equal
    the newest release's matrix and fail, naming the cell, when one differs."""
    hook_id, entry = SGLANG_PAGE
    hook = HOOKS[hook_id]
    assert hook["entry"] == entry and hook["pass_filenames"] is True
    assert re.search(hook["files"], "docs/docs/advanced_features/attention_backend.mdx")
    from compat.publish.sglang_page import render
    from compat.releases import NEWEST

    page = tmp_path / "attention_backend.mdx"
    page.write_text("---\ntitle: x\n---\n\n" + render(NEWEST), encoding="utf-8")
    done = run_entry(hook_id, str(page))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cell for cell" in done.stdout
    text = page.read_text(encoding="utf-8")
    cell = ">✅</td>"
    page.write_text(text.replace(cell, ">❌</td>", 1), encoding="utf-8")
    done = run_entry(hook_id, str(page))
    assert done.returncode == 1 and "'❌', not '✅'" in done.stdout
