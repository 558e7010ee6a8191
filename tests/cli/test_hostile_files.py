"""Broken files, special files and a read-only disk: one test per failure once reported.

Every file or disk failure of `compat docs` / `compat export` ends with exit 2 and one line
on stderr; generated files are compared as bytes and always repairable; nothing that is not
a regular file is replaced; nothing is written outside `--root`; temporary files never
stay; templates outside the package never run.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from refusals import (
    GENERATED,
    PAGE,
    ROOT,
    STALE_EXPORT,
    STALE_PAGE,
    cli,
    copy_generated,
    generated_pages,
    refused,
)

from compat.publish import outputs as outputs_module
from compat.publish.export import render_export
from compat.publish.pages import render_page


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_generated(tmp_path / "project")


# -- write failures once crashed with a traceback and exit 1 -----------------------------------


def test_a_read_only_docs_dir_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / PAGE).write_text(STALE_PAGE, encoding="utf-8")
    (project / "docs").chmod(0o555)
    if os.geteuid() == 0:  # root ignores the mode: fail the way the kernel does for others
        real_open = os.open

        def denied(path: str | os.PathLike[str], *args: int) -> int:
            if str(project / "docs") in str(path) and (args[0] & os.O_CREAT):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real_open(path, *args)

        monkeypatch.setattr(outputs_module.os, "open", denied)
    try:
        refused(["docs", "--root", str(project)], capsys, "Permission denied", "permissions")
    finally:
        (project / "docs").chmod(0o755)
    assert (project / PAGE).read_text(encoding="utf-8") == STALE_PAGE
    assert not list((project / "docs").glob(".*.tmp"))


def test_docs_replaced_by_a_file_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(project / "docs")
    (project / "docs").write_text("a file\n", encoding="utf-8")
    refused(["docs", "--root", str(project)], capsys, "docs")
    refused(["docs", "--check", "--root", str(project)], capsys, "docs")
    refused(["export", "--root", str(project)], capsys, "docs")
    assert (project / "docs").read_text(encoding="utf-8") == "a file\n"


def test_the_page_as_a_directory_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / PAGE).unlink()
    (project / PAGE).mkdir()
    refused(["docs", "--root", str(project)], capsys, "is a directory")
    refused(["docs", "--check", "--root", str(project)], capsys, "is a directory")
    assert (project / PAGE).is_dir()


@pytest.mark.parametrize(
    ("output", "needle"),
    [
        ("/proc/x.json", "cannot write"),
        ("/proc/self/status", "not written by compat"),  # refused before any write
        ("NAME" + "x" * 300 + ".json", "cannot write"),
    ],
)
def test_an_unwritable_output_is_exit_2(
    output: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if output.startswith("NAME"):
        output = str(tmp_path / output)
    refused(["export", "--output", output], capsys, needle)


def test_an_overlong_root_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overlong = str(tmp_path / ("x" * 300))
    for command in ("docs", "export"):
        refused([command, "--root", overlong], capsys, "not a directory")
        refused([command, "--check", "--root", overlong], capsys, "not a directory")


# -- generated files with invalid UTF-8 or other line endings ----------------------------------


@pytest.mark.parametrize(
    ("command", "relative"),
    [("docs", PAGE), ("export", "docs/matrix.json"), ("export", "docs/matrix.schema.json")],
)
@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda data: data[:100] + b"\xff\xfe" + data[100:], "not valid UTF-8"),
        (lambda data: data.replace(b"\n", b"\r\n"), "differs only in line endings (CRLF"),
        (lambda data: data.replace(b"\n", b"\r"), "differs only in line endings (CR "),
    ],
    ids=["invalid-utf8", "crlf", "cr"],
)
def test_a_broken_generated_file_is_stale_and_repaired(
    command: str,
    relative: str,
    edit: object,
    needle: str,
    project: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = project / relative
    fresh = path.read_bytes()
    assert callable(edit)
    path.write_bytes(edit(fresh))
    code, out, _ = cli([command, "--check", "--root", str(project)], capsys)
    assert code == 1 and needle in out and "stale" in out
    code, out, _ = cli([command, "--root", str(project)], capsys)
    assert code == 0 and f"wrote {relative}" in out
    assert path.read_bytes() == fresh
    assert cli([command, "--check", "--root", str(project)], capsys)[0] == 0


# -- --output replaced what it pointed at; modes; temporary files ------------------------------


def _device(tmp_path: Path) -> Path:
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return Path("/dev/null")  # not root: it cannot be replaced anyway, refused first
    return device


def test_output_refuses_a_fifo_a_device_and_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    device = _device(tmp_path)
    (tmp_path / "dir").mkdir()
    refused(["export", "--output", str(fifo)], capsys, "a FIFO", "not a regular file")
    refused(["export", "--output", str(device)], capsys, "a character device")
    refused(["export", "--output", str(tmp_path / "dir")], capsys, "a directory")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and stat.S_ISCHR(device.lstat().st_mode)


def test_output_does_not_follow_a_symlink_out_of_its_directory_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.json"
    secret.write_text(STALE_EXPORT, encoding="utf-8")
    (tmp_path / "tree").mkdir()
    link = tmp_path / "tree" / "matrix.json"
    link.symlink_to(secret)
    refused(["export", "--output", str(link)], capsys, "symbolic link", "--follow-symlinks")
    assert secret.read_text(encoding="utf-8") == STALE_EXPORT and link.is_symlink()
    code, _, _ = cli(["export", "--output", str(link), "--follow-symlinks"], capsys)
    assert code == 0 and link.is_symlink()
    assert secret.read_text(encoding="utf-8") == render_export()


def test_output_follows_a_symlink_inside_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "matrix.json"
    link.symlink_to("real.json")
    assert cli(["export", "--output", str(link)], capsys)[0] == 0
    assert link.is_symlink() and (tmp_path / "real.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_get_the_mode_of_a_normal_write(
    umask: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = os.umask(umask)
    try:
        assert cli(["export", "--output", str(tmp_path / "new.json")], capsys)[0] == 0
        kept = tmp_path / "kept.json"
        kept.write_text(STALE_EXPORT, encoding="utf-8")
        kept.chmod(0o640)
        assert cli(["export", "--output", str(kept)], capsys)[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs_module.os, "replace", no_space)
    refused(["export", "--output", str(tmp_path / "m.json")], capsys, "No space left", "free")
    assert list(tmp_path.iterdir()) == []


def test_a_killed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    # SIGTERM arrives between writing the temporary file and renaming it.
    script = textwrap.dedent(
        f"""
        import os, signal, sys, time
        import compat.publish.outputs
        def killed(*args):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        compat.publish.outputs.os.replace = killed
        sys.argv = ["compat", "export", "--output", {str(tmp_path / "m.json")!r}]
        from compat.cli import entry
        entry()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_of_a_dead_writer_is_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                          capture_output=True, check=True).stdout.strip()  # fmt: skip
    abandoned = tmp_path / f".m.json.{dead}.0badcafe.tmp"
    abandoned.write_text("half", encoding="utf-8")
    alive = tmp_path / f".m.json.{os.getppid()}.0badcafe.tmp"  # a live writer's: kept
    alive.write_text("half", encoding="utf-8")
    assert cli(["export", "--output", str(tmp_path / "m.json")], capsys)[0] == 0
    assert not abandoned.exists() and alive.exists()


def test_concurrent_writers_leave_a_fresh_page_and_no_temporary_file(project: Path) -> None:
    (project / PAGE).write_text(STALE_PAGE, encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import contextlib, io
        from compat.cli import main
        for _ in range(5):
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["docs", "--root", {str(project)!r}]) == 0
                assert main(["export", "--root", {str(project)!r}]) == 0
        """
    )
    writers = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(4)]
    assert [writer.wait(timeout=120) for writer in writers] == [0] * 4
    assert (project / PAGE).read_text(encoding="utf-8") == render_page()
    assert not [path.name for path in (project / "docs").iterdir() if path.suffix == ".tmp"]


# -- templates ran as code from any checkout; --root wrote outside -----------------------------


SYSTEM_CALL = "{{ cycler.__init__.__globals__.os.system('touch %s') }}\n"


def test_a_template_cannot_run_commands(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "attention_backend.md.j2").write_text(SYSTEM_CALL % marker, encoding="utf-8")
    argv = ["docs", "--check", "--root", str(project), "--template-dir", str(templates)]
    refused(argv, capsys, "SecurityError")
    assert not marker.exists()


def test_root_templates_are_not_run_unless_named(
    tmp_path: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker = tmp_path / "ran"
    for where in (project, tmp_path):  # the --root and the current directory
        (where / "templates").mkdir()
        (where / "templates" / "attention_backend.md.j2").write_text("x\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(["docs", "--check", "--root", str(project)], capsys)
    assert code == 0 and "up to date" in out and not marker.exists()
    assert render_page() == (ROOT / PAGE).read_text(encoding="utf-8")


def test_root_does_not_write_through_a_docs_symlink_out_of_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "docs").symlink_to(outside)
    refused(["docs", "--root", str(root)], capsys, "outside")
    refused(["export", "--root", str(root)], capsys, "outside")
    assert list(outside.iterdir()) == []


def test_the_page_as_a_symlink_out_of_the_tree_is_refused(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("keep\n", encoding="utf-8")
    (project / PAGE).unlink()
    (project / PAGE).symlink_to(secret)
    refused(["docs", "--root", str(project)], capsys, "symbolic link")
    assert secret.read_text(encoding="utf-8") == "keep\n"


def test_an_installed_package_renders_its_shipped_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a wheel the template sits in the package (pyproject force-includes it there)."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    included = wheel["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert included == {"templates": "compat/templates"}
    package = tmp_path / "site-packages" / "compat"
    (package / "templates").mkdir(parents=True)
    shipped = (ROOT / "templates" / "attention_backend.md.j2").read_text(encoding="utf-8")
    (package / "templates" / "attention_backend.md.j2").write_text(
        shipped.replace("# Attention backends", "# Shipped"), encoding="utf-8"
    )
    monkeypatch.setattr(outputs_module, "PACKAGE_DIR", package)
    assert outputs_module.package_templates() == package / "templates"
    assert "\n# Shipped" in render_page()


def test_symlink_loops_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    refused(["export", "--output", str(loop)], capsys, "symbolic link loops")
    root = tmp_path / "root"
    root.mkdir()
    (root / "docs").symlink_to("docs")
    for command in ("docs", "export"):
        refused([command, "--root", str(root)], capsys, "symbolic link loops")
        refused([command, "--check", "--root", str(root)], capsys, "symbolic link loops")


# -- issue 42: links planted in docs/, writes from an installed package, files not generated ---

RELEASE_PAGE = "docs/releases/0.5.7.md"


def _stale_everywhere_else(project: Path, *kept: str) -> list[Path]:
    """Every generated file but `kept` made stale (with its marker): none may be written."""
    stale = []
    for relative in (*GENERATED, *generated_pages()):
        if relative not in kept:
            path = project / relative
            path.write_text(STALE_EXPORT if relative.endswith(".json") else STALE_PAGE)
            stale.append(path)
    return stale


def _unchanged(paths: list[Path]) -> bool:
    return all(p.read_text() in (STALE_PAGE, STALE_EXPORT) for p in paths)


@pytest.mark.parametrize(
    ("command", "relative", "victim"),
    [
        ("docs", RELEASE_PAGE, ".git/config"),  # git stops working
        ("docs", "docs/changes.md", "README.md"),
        ("export", "docs/matrix.json", "README.md"),
        ("export", "docs/matrix.schema.json", ".git/config"),
    ],
)
def test_h1_a_generated_file_planted_as_a_link_into_the_tree_is_refused(
    command: str, relative: str, victim: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".git").mkdir()
    (project / victim).write_text("[core]\n\tbare = false\n", encoding="utf-8")
    stale = _stale_everywhere_else(project, relative)
    link = project / relative
    link.unlink()
    link.symlink_to(os.path.relpath(project / victim, link.parent))
    line = refused([command, "--root", str(project)], capsys, "symbolic link", str(link))
    assert str(project / victim) in line
    assert (project / victim).read_text(encoding="utf-8") == "[core]\n\tbare = false\n"
    assert link.is_symlink() and _unchanged(stale), "a file was written"
    assert list(project.rglob("*.tmp")) == []


@pytest.mark.parametrize("command", ["docs", "export"])
def test_h1_a_linked_directory_inside_the_tree_is_refused(
    command: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`docs -> elsewhere` (inside the checkout): nothing is written through it."""
    (project / "docs").rename(project / "elsewhere")
    (project / "docs").symlink_to("elsewhere")
    stale = _stale_everywhere_else(project)
    refused([command, "--root", str(project)], capsys, "symbolic link", "replace it")
    assert _unchanged(stale)


def test_h1_a_linked_releases_directory_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    releases = project / "docs" / "releases"
    releases.rename(project / "kept")
    releases.symlink_to("../kept")
    stale = _stale_everywhere_else(project)
    refused(["docs", "--root", str(project)], capsys, str(releases), "symbolic link")
    assert _unchanged(stale)


@pytest.mark.parametrize(
    ("command", "relative"),
    [("docs", "docs/changes.md"), ("docs", RELEASE_PAGE), ("export", "docs/matrix.json")],
)
def test_h2_a_file_without_the_marker_is_never_replaced(
    command: str, relative: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = _stale_everywhere_else(project, relative)
    own = project / relative
    own.write_text("# My own notes\n", encoding="utf-8")
    refused([command, "--root", str(project)], capsys, "not written by compat", str(own))
    assert own.read_text(encoding="utf-8") == "# My own notes\n" and _unchanged(stale)


def test_h2_export_output_never_replaces_a_file_without_the_marker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = tmp_path / "matrix.json"
    own.write_text('{"mine": true}\n', encoding="utf-8")
    refused(["export", "--output", str(own)], capsys, "not written by compat", str(own))
    assert own.read_text(encoding="utf-8") == '{"mine": true}\n'


@pytest.mark.parametrize("command", ["docs", "export"])
def test_h2_an_installed_package_needs_root_and_never_writes_to_the_cwd(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A wheel's package sits in site-packages: no checkout, so the cwd is never the default."""
    monkeypatch.setattr(outputs_module, "PACKAGE_DIR", tmp_path / "site-packages" / "compat")
    monkeypatch.setattr(outputs_module, "package_templates", lambda: ROOT / "templates")
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "changes.md").write_text("my changes\n", encoding="utf-8")
    monkeypatch.chdir(work)
    refused([command], capsys, "--root", "not run from a checkout")
    assert [p.name for p in (work / "docs").iterdir()] == ["changes.md"]
    assert (work / "docs" / "changes.md").read_text(encoding="utf-8") == "my changes\n"
    # Named, a root is written (a new one: nothing in it lacks its marker).
    (tmp_path / "site").mkdir()
    assert cli([command, "--root", str(tmp_path / "site")], capsys)[0] == 0
    assert (tmp_path / "site" / "docs").is_dir()


@pytest.mark.parametrize("command", ["docs", "export"])
def test_h2_help_says_the_default_root_is_only_an_editable_checkout(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli([command, "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "default: the checkout of an editable install" in text
    assert "required for an installed package" in text
