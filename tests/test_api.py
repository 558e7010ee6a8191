"""The public names of `compat`: lazily loaded, all resolvable, none heavy."""

from __future__ import annotations

import subprocess
import sys

import pytest

import compat


@pytest.mark.parametrize("name", [n for n in compat.__all__ if n != "__version__"])
def test_every_public_name_resolves_to_its_home_module(name: str) -> None:
    value = getattr(compat, name)
    home = compat._HOMES[name]
    assert value is getattr(sys.modules[home], name)
    assert name in dir(compat)


def test_all_lists_exactly_the_lazy_names() -> None:
    assert set(compat.__all__) - {"__version__"} == set(compat._HOMES)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'chek'"):
        _ = compat.chek  # type: ignore[attr-defined]


def test_import_compat_loads_nothing_until_used() -> None:
    code = "import sys, compat; print(sorted(m for m in sys.modules if m.startswith('compat.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_using_the_guard_loads_no_heavy_module() -> None:
    code = (
        "import sys; from compat import AttentionConfig, check, enforce; "
        "check(AttentionConfig(attention_arch='mla', attention_backend='trtllm_mla', "
        "kv_cache_dtype='fp4_e2m1', compute_capability=(10, 0))).suggestions; "
        "print(sorted(m for m in ('torch', 'jinja2', 'mkdocs', 'logging') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
