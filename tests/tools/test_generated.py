"""`tools/generated.py`: the tools' data modules are written whole, or checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from generated import marker, write_or_check

from compat.publish.outputs import OutputError

TEXT = f'"""Stand-in data.\n\n{marker("stand_in")} from the wheels; do not edit.\n"""\nX = 1\n'


def test_check_says_whether_the_module_holds_the_text(tmp_path: Path) -> None:
    module = tmp_path / "data.py"
    assert write_or_check(module, TEXT, "stand_in", check=True) == 1  # absent
    module.write_text(TEXT)
    assert write_or_check(module, TEXT, "stand_in", check=True) == 0
    assert write_or_check(module, TEXT + "Y = 2\n", "stand_in", check=True) == 1
    assert module.read_text() == TEXT  # a check writes nothing


def test_a_write_replaces_the_module_whole(tmp_path: Path) -> None:
    module = tmp_path / "data.py"
    module.write_text(TEXT)
    new = TEXT + "Y = 2\n"
    assert write_or_check(module, new, "stand_in", check=False) == 0
    assert module.read_text() == new
    assert [path.name for path in tmp_path.iterdir()] == ["data.py"]  # no temporary left


def test_a_file_the_tool_did_not_write_is_not_replaced(tmp_path: Path) -> None:
    module = tmp_path / "data.py"
    module.write_text("hand-written\n")
    with pytest.raises(OutputError):
        write_or_check(module, TEXT, "stand_in", check=False)
    assert module.read_text() == "hand-written\n"
