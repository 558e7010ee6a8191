"""The README's promises about the repository hold: CI runs exactly its test command."""

from __future__ import annotations

from paths import ROOT

import re
from pathlib import Path



def _bash_blocks(markdown: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.S)]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [block for block in _bash_blocks(readme) if "pytest" in block]
    assert len(commands) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in ci, "the test command in README.md and .ci/run differ"


def test_readme_main_command_builds_the_site_from_the_matrix() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (main,) = [block for block in _bash_blocks(readme) if "mkdocs build" in block]
    assert "compat docs" in main and "compat export" in main and "--strict" in main


def test_no_myst_fences_in_any_docs_page() -> None:
    for page in (ROOT / "docs").rglob("*.md"):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not line.lstrip().startswith("```{"), f"{page.name}:{number} is a MyST fence"


def test_the_contributing_map_names_every_module() -> None:
    """A new module that the map does not mention leaves contributors guessing."""
    page = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    mapped = set(re.findall(r"`(compat/[\w/]+\.py)`", page))
    modules = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "compat").glob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    assert modules - mapped == set(), "modules missing from docs/contributing.md"
    assert {m for m in mapped if not (ROOT / m).is_file()} == set(), "the map names gone files"
