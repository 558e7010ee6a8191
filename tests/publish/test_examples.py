"""The page's launch examples: one per backend, each passing the guard, or no page at all."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest
from paths import ROOT

from compat.claim.baseline import MATRIX
from compat.publish import examples, page_cache
from compat.publish.examples import (
    LAUNCH_EXAMPLES,
    ExampleFailsError,
    LaunchExample,
    checked_examples,
    with_flag,
)
from compat.publish.pages import ExampleCheckError, render_page
from compat.releases import NEWEST, RELEASES

PAGE = ROOT / "docs" / "attention_backend.md"


def _flipped() -> tuple[LaunchExample, ...]:
    """The examples with fa3's given an FP4 cache, which its row refuses. (Not flashmla's:
    SGLang 0.5.7's own KV4 check accepts it, a disputed ❌ the guard only warns about.)"""
    return tuple(
        with_flag(e, "--kv-cache-dtype", "fp4_e2m1") if e.backend == "fa3" else e
        for e in LAUNCH_EXAMPLES
    )


def test_every_backend_has_one_passing_example() -> None:
    checked = checked_examples()
    assert [item.example.backend for item in checked] == list(MATRIX.backend_names)
    assert len(LAUNCH_EXAMPLES) == len(MATRIX.backend_names)


def test_the_page_shows_every_example_command() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Launch examples", 1)[1].split("\n## ", 1)[0]
    commands = [line for line in section.splitlines() if line.startswith("python3 -m ")]
    # The main page describes the newest release: the examples of the backends it accepts.
    offered = RELEASES[NEWEST].backend_set
    shown = [example for example in _in_matrix_order() if example.backend in offered]
    assert commands == [example.command for example in shown]
    assert len(shown) < len(LAUNCH_EXAMPLES), "the newest release dropped backends"
    for example in shown:
        assert f"`{example.backend}` on {example.gpu}" in section


def _in_matrix_order() -> list[LaunchExample]:
    by_backend = {e.backend: e for e in LAUNCH_EXAMPLES}
    return [by_backend[name] for name in MATRIX.backend_names]


@pytest.mark.parametrize(
    "example", [e for e in LAUNCH_EXAMPLES if not e.features], ids=lambda e: e.backend
)
def test_each_example_command_passes_compat_check(example: LaunchExample) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "compat",
            "check",
            "--gpu",
            example.gpu,
            "--attention-arch",
            example.arch,
            "--",
            *shlex.split(example.command),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_flipped_example_fails_the_render(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExampleFailsError, match="fa3 example on H100 fails the guard"):
        checked_examples(examples=_flipped())
    monkeypatch.setattr(examples, "LAUNCH_EXAMPLES", _flipped())
    with pytest.raises(ExampleCheckError, match=r"\[fp4-kv\]"):
        render_page(release="0.5.7")
    with pytest.raises(ExampleCheckError, match="invalid for SGLang"):
        render_page()  # the newest release no longer accepts fp4_e2m1 at all


def test_a_flipped_example_fails_the_site_build(monkeypatch: pytest.MonkeyPatch) -> None:
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError

    # The flip is made in memory, where the record of pages found fresh, keyed by the
    # sources on disk, cannot see it: every build here compares afresh.
    monkeypatch.setenv(page_cache.DISABLE_VARIABLE, "1")
    config = load_config(str(ROOT / "mkdocs.yml"))
    config.plugins.on_pre_build(config=config)  # the committed examples pass
    monkeypatch.setattr(examples, "LAUNCH_EXAMPLES", _flipped())
    with pytest.raises(PluginError, match="fa3 example"):
        config.plugins.on_pre_build(config=config)


def test_a_missing_example_fails_too() -> None:
    with pytest.raises(ExampleFailsError, match="no launch example for triton"):
        checked_examples(examples=[e for e in LAUNCH_EXAMPLES if e.backend != "triton"])


def test_the_page_lists_every_gpu_name() -> None:
    from markdown_tables import read_tables

    from compat.inputs.gpus import GPUS

    tables = {table.heading: table for table in read_tables(PAGE.read_text(encoding="utf-8"))}
    rows = tables["GPUs"].rows
    assert [row[0] for row in rows] == [gpu.name for gpu in GPUS]
    for row, gpu in zip(rows, GPUS, strict=True):
        expected = "—" if gpu.capability is None else str(gpu.capability)
        if gpu.rocm_arch is not None:
            expected = gpu.rocm_arch.value
        assert row[3].startswith(expected) and row[2] == gpu.platform.label
    text = PAGE.read_text(encoding="utf-8")
    assert "sm103" in text and "sm110" in text and "sm120" in text and "H100" in text
    assert "gfx942" in text and "gfx950" in text
