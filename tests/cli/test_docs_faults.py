"""`compat docs` under faults and hostile templates (#23 L5, L6, L10, L15)."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT
from refusals import STALE_PAGE, cli, generated_pages

from compat.publish.pages import GENERATED_MARKER


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "docs", root / "docs")
    return root


def _templates(tmp_path: Path, page: str) -> Path:
    folder = tmp_path / "templates"
    shutil.copytree(ROOT / "templates", folder)
    (folder / "attention_backend.md.j2").write_text(page, encoding="utf-8")
    return folder


def test_l5_a_huge_range_is_cannot_render_exit_2(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _templates(tmp_path, "{% for i in range(10**9) %}x{% endfor %}\n")
    code, _, err = cli(["docs", "--root", str(project), "--template-dir", str(folder)], capsys)
    assert code == 2, err
    assert err.startswith("compat docs: cannot render the page:") and "internal error" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "expression", ["'x' * 10**10", "[1] * 10**9", "2 ** (10**8)", "1 | length"]
)
def test_l5_a_huge_string_list_or_power_is_cannot_render(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    folder = _templates(tmp_path, "{{ (" + expression + ") | length }}\n")
    code, _, err = cli(["docs", "--root", str(project), "--template-dir", str(folder)], capsys)
    assert code == 2 and "cannot render the page" in err, err


def test_l6_a_symlink_in_the_template_dir_cannot_make_include_read_outside_it(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    folder = _templates(tmp_path, "{% include 'leak.txt' %}\n")
    (folder / "leak.txt").symlink_to(secret)
    code, out, err = cli(["docs", "--root", str(project), "--template-dir", str(folder)], capsys)
    assert code == 2, out + err
    assert "outside the template folder" in err
    assert "TOP-SECRET" not in out + err
    assert "TOP-SECRET" not in (project / "docs" / "attention_backend.md").read_text()


def test_l6_a_symlink_that_stays_inside_the_template_dir_still_works(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _templates(tmp_path, "{% include 'part.txt' %}")
    (folder / "real.txt").write_text(f"inside\n<!-- {GENERATED_MARKER} -->\n")
    (folder / "part.txt").symlink_to(folder / "real.txt")
    code, _, err = cli(["docs", "--root", str(project), "--template-dir", str(folder)], capsys)
    assert code == 0, err
    assert (project / "docs" / "attention_backend.md").read_text().startswith("inside\n")


def _limited(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_l10_a_write_that_fails_midway_leaves_every_page_as_it_was(project: Path) -> None:
    """A file-size limit under the largest page fails some writes: none is then written."""
    pages = {name: project / name for name in generated_pages()}
    for page in pages.values():  # every page stale
        page.write_text(STALE_PAGE)
    sizes = [len((ROOT / name).read_bytes()) for name in pages]  # in the order written
    limit = sizes[0]  # the first page fits; a later, larger one does not
    assert max(sizes) > limit, "no page is larger than the first: the fault tests nothing"
    done = subprocess.run(
        [sys.executable, "-m", "compat", "docs", "--root", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limited(limit),
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "File too large" in done.stderr and "Traceback" not in done.stderr
    assert all(page.read_text() == STALE_PAGE for page in pages.values()), "a page was written"
    assert list(project.rglob("*.tmp")) == []


def test_l10_a_full_disk_writes_no_page(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from compat.publish import outputs

    pages = [project / name for name in generated_pages()]
    for page in pages:
        page.write_text(STALE_PAGE)
    staged = outputs._stage
    calls: list[Path] = []

    def fill_up(target: Path, data: bytes) -> Path:
        calls.append(target)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return staged(target, data)

    monkeypatch.setattr(outputs, "_stage", fill_up)
    code, out, err = cli(["docs", "--root", str(project)], capsys)
    assert code == 2 and "No space left on device" in err, out + err
    assert [page for page in pages if page.read_text() != STALE_PAGE] == []
    assert list(project.rglob("*.tmp")) == []


def test_l15_a_dead_writers_temporary_file_is_removed_while_the_page_is_fresh(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    page = project / "docs" / "attention_backend.md"
    leftover = page.with_name(f".{page.name}.{dead.pid}.0123abcd.tmp")
    leftover.write_text("half a page")
    code, out, _ = cli(["docs", "--root", str(project)], capsys)
    assert code == 0 and "wrote" not in out, out  # every page was fresh
    assert not leftover.exists()
