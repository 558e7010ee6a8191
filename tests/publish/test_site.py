"""`mkdocs build --strict`: the site builds cleanly, refuses a stale page, and loads no CDN."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paths import ROOT
from sample_site import build_sample_site
from site_links import broken_links

from compat.claim.baseline import MATRIX
from compat.guard.policy import POLICY_TABLE_MARKER, policy_table
from compat.vocab.terms import Arch

CDN_MARKERS = ("fonts.googleapis", "fonts.gstatic", "cdn.jsdelivr", "unpkg")


def _site_project(project: Path) -> Path:
    """A copy of what `mkdocs build` reads, to hand-edit without touching the checkout."""
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copytree(ROOT / "templates", project / "templates")
    (project / "compat" / "publish").mkdir(parents=True)
    hooks = Path("compat", "publish", "mkdocs_hooks.py")
    shutil.copy(ROOT / hooks, project / hooks)
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    return project


def test_site_builds_strict_without_warnings_or_cdn(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = build_sample_site(site, ROOT / "mkdocs.yml", tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output, output
    pages = sorted(site.rglob("*.html"))
    assert site / "attention_backend" / "index.html" in pages
    assert site / "index.html" in pages
    for page in [*pages, *site.rglob("*.css")]:
        text = page.read_text(encoding="utf-8")
        for marker in CDN_MARKERS:
            assert marker not in text, f"{page.relative_to(site)} references {marker}"
    matrix = (site / "attention_backend" / "index.html").read_text(encoding="utf-8")
    assert matrix.count('class="admonition note"') >= 10
    assert "```{" not in matrix
    # Search finds the main page (the newest release's) once, and no release page: they
    # are near-copies of it and of one another.
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    searched = {entry["location"].split("#")[0] for entry in index["docs"]}
    assert "attention_backend/" in searched and "changes/" in searched
    assert (site / "releases" / "0.5.12" / "index.html") in pages
    assert not [location for location in searched if location.startswith("releases/")]
    # Every link of every page resolves (issue 44).
    assert broken_links(site) == []
    # The policy page shows the table computed from the policies, not its marker.
    policy = (site / "policy" / "index.html").read_text(encoding="utf-8")
    assert POLICY_TABLE_MARKER not in policy
    assert policy.count("runs, logged") == policy_table().count("runs, logged")


def test_the_link_check_finds_each_kind_of_bad_link(tmp_path: Path) -> None:
    """The link check on a hand-made site: each bad link is named, the good ones are not."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<h2 id="here">Here</h2>', encoding="utf-8")
    links = {
        "a/": "",
        "a/#here": "",
        "#top": "",
        "/a/": "",
        "https://github.com/sgl-project/sglang": "",
        "b/": "no such file",
        "a/#gone": "no anchor #gone",
        "http://github.com/sgl-project/sglang": "not a well-formed https URL",
        "https://example.com/TODO": "a placeholder",
        "https://github.com/sgl-project/sglang/blob/v0.5.23/x.md": "its text says",
    }
    body = "".join(
        f'<a href="{href}">{"its tag could not be read" if "v0.5.23" in href else href}</a>'
        for href in links
    )
    (tmp_path / "index.html").write_text(f'<p id="top">{body}</p>', encoding="utf-8")
    found = broken_links(tmp_path)
    wanted = {href: why for href, why in links.items() if why}
    assert len(found) == len(wanted), found
    for (href, why), line in zip(wanted.items(), found, strict=True):
        assert line.startswith(f"index.html: {href} (") and why in line, line


def test_stale_page_fails_the_build(tmp_path: Path) -> None:
    project = _site_project(tmp_path / "project")

    fresh = build_sample_site(tmp_path / "fresh-site", project / "mkdocs.yml", tmp_path)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr

    page = project / "docs" / "attention_backend.md"
    text = page.read_text(encoding="utf-8")
    # Hand-edit the first cell of the first MLA row, whatever the live matrix says there.
    row = MATRIX.table(Arch.MLA).rows[0]
    symbol = row.cells[MATRIX.table(Arch.MLA).columns[0]].symbol
    label = f"| {row.display_name} [`{row.backend}`] |"
    edited = text.replace(f"{label} {symbol} |", f"{label} {symbol} (hand-edited) |", 1)
    assert edited != text
    page.write_text(edited, encoding="utf-8")

    stale = build_sample_site(tmp_path / "stale-site", project / "mkdocs.yml", tmp_path)
    output = stale.stdout + stale.stderr
    assert stale.returncode != 0
    assert "attention_backend.md" in output
    assert "compat docs" in output


def test_stale_export_fails_the_build(tmp_path: Path) -> None:
    project = _site_project(tmp_path / "project")
    export = project / "docs" / "matrix.json"
    text = export.read_text(encoding="utf-8")
    version = json.loads(text)["schema_version"]
    edited = text.replace(f'"schema_version": {version},', f'"schema_version": {version + 1},', 1)
    assert edited != text
    export.write_text(edited, encoding="utf-8")

    stale = build_sample_site(tmp_path / "stale-site", project / "mkdocs.yml", tmp_path)
    output = stale.stdout + stale.stderr
    assert stale.returncode != 0
    assert "docs/matrix.json is stale" in output
    assert "compat export" in output
