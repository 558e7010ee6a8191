"""A build's record that the committed pages were found fresh: read only for the exact bytes,
sources and templates it was made for, and a stale page still fails the build."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError
from paths import ROOT

from compat.publish import finder_cache, mkdocs_hooks, page_cache, verified


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(finder_cache.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(page_cache.DISABLE_VARIABLE, raising=False)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path / "docs"


def _renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the fresh renders `on_pre_build` makes."""
    from compat.publish import pages

    calls: list[int] = []
    render = pages.render_pages

    def counted() -> tuple[tuple[Path, str], ...]:
        calls.append(1)
        return render()

    monkeypatch.setattr(pages, "render_pages", counted)
    return calls


def test_a_build_that_found_the_pages_fresh_lets_the_next_skip_the_render(
    docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _renders(monkeypatch)
    config = SimpleNamespace(docs_dir=str(docs))
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    assert len(calls) == 1
    # A prose edit anywhere in the docs: compared again (and still fresh).
    (docs / "contributing.md").write_text("# Edited\n", encoding="utf-8")
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    assert len(calls) == 2


def test_a_stale_page_fails_though_its_fresh_copy_was_recorded(
    docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = SimpleNamespace(docs_dir=str(docs))
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    page = docs / "releases" / "0.5.7.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nHand-edited.\n", encoding="utf-8")
    with pytest.raises(PluginError, match=r"0\.5\.7\.md is stale"):
        mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]


def test_the_key_reads_the_docs_the_templates_and_the_sources(
    docs: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = verified.comparison_key(docs)
    assert verified.comparison_key(docs) == key
    (docs / "new.md").write_text("x", encoding="utf-8")
    assert verified.comparison_key(docs) != key
    (docs / "new.md").unlink()
    templates = tmp_path / "templates"
    shutil.copytree(ROOT / "templates", templates)
    monkeypatch.setattr(verified, "package_templates", lambda: templates)
    assert verified.comparison_key(docs) == key
    (templates / "attention_backend.md.j2").write_text("{{ 1 }}", encoding="utf-8")
    assert verified.comparison_key(docs) != key
    monkeypatch.setattr(verified, "package_templates", lambda: ROOT / "templates")
    monkeypatch.setattr(verified, "source_digest", lambda: "other sources")
    assert verified.comparison_key(docs) != key


def test_records_are_off_with_the_page_cache(docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(page_cache.DISABLE_VARIABLE, "1")
    calls = _renders(monkeypatch)
    config = SimpleNamespace(docs_dir=str(docs))
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    mkdocs_hooks.on_pre_build(config)  # type: ignore[arg-type]
    assert len(calls) == 2
    assert verified.record_key(docs) is None
    assert not (docs.parent / "cache" / verified.VERIFIED).exists()
