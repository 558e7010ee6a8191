"""MkDocs hooks: refuse a stale page or export; add the finder's data; convert a page once.

Listed under `hooks:` in `mkdocs.yml`. The page and `matrix.json` are generated from
`compat/matrix.py`; a hand edit, or a matrix edit without `compat docs` / `compat export`,
makes `mkdocs build` fail here. The
compatibility finder's data (the guard's verdicts over the finder's option space) is
computed at build time (once per version of the package: `compat.publish.finder_cache`) and added
to the site as generated files, never committed. A page's conversion to HTML is stored
too, and read back until the page or anything its conversion reads changes
(`compat.publish.page_cache`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from compat.publish.outputs import OutputError
from compat.publish.staleness import Staleness, staleness

FIX_COMMAND = "compat docs"
_LOG = logging.getLogger("mkdocs.hooks.compat")


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """List the release pages in the navigation, newest first, after "What changed"."""
    from compat.publish.changes_text import releases_with_changes
    from compat.publish.pages import CHANGES_PATH, RELEASE_DIR

    releases = [
        {f"SGLang {name}": f"{RELEASE_DIR}/{name}.md"} for name in reversed(releases_with_changes())
    ]
    nav = config.nav or []
    at = next(
        (
            i + 1
            for i, item in enumerate(nav)
            if isinstance(item, dict) and CHANGES_PATH.name in item.values()
        ),
        len(nav),
    )
    nav.insert(at, {"Releases": releases})
    config.nav = nav
    return config


def on_pre_build(config: MkDocsConfig) -> None:
    """Compare every generated page in `docs_dir` with a fresh render of the matrix, unless
    a build found these exact pages fresh before (`compat.publish.verified`)."""
    from compat.publish import verified

    docs_dir = Path(config.docs_dir)
    record = verified.record_key(docs_dir)
    if record is not None and verified.found_fresh(record):
        return
    from compat.publish.pages import TemplateError, render_pages

    try:
        # The package's own templates, as `compat docs` uses by default.
        pages = render_pages()
    except TemplateError as error:
        raise PluginError(f"cannot render the pages: {error}") from error
    for path, content in pages:
        label = path.as_posix()
        stale = _staleness(docs_dir / path.relative_to("docs"), content, label)
        if not stale.fresh:
            raise PluginError(
                f"{label} is stale: it differs from a fresh render of compat/matrix.py and "
                f"compat/releases.py. Run `{FIX_COMMAND}` and commit the result.\n{stale.diff}"
            )
    _refuse_stale_export(docs_dir)
    if record is not None:
        verified.remember(record)


def _refuse_stale_export(docs_dir: Path) -> None:
    """The published JSON export and its schema must match the matrix too."""
    from compat.publish.export import EXPORT_PATH, SCHEMA_PATH, render_export, render_schema

    for path, content in ((EXPORT_PATH, render_export()), (SCHEMA_PATH, render_schema())):
        name = Path(path).name
        stale = _staleness(docs_dir / name, content, path)
        if not stale.fresh:
            raise PluginError(
                f"{path} is stale: it differs from a fresh export of compat/matrix.py. "
                f"Run `compat export` and commit the result.\n{stale.diff}"
            )


def _staleness(page: Path, content: str, label: str) -> Staleness:
    try:
        return staleness(page, content, label=label)
    except OutputError as error:
        raise PluginError(str(error)) from None


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the finder's release index and one data script per release, freshly computed
    from the matrix and the guard; refuse a committed copy of any of them."""
    from compat.publish import finder
    from compat.publish.finder_build import site_files

    try:
        names = finder.generated_names()
    except ValueError as error:  # COMPAT_FINDER_RELEASES names a release that is not modelled
        raise PluginError(str(error)) from None
    for path in names:
        if files.get_file_from_path(path) is not None:
            raise PluginError(
                f"{Path(config.docs_dir).name}/{path} must not exist: the finder's data is "
                "generated at build time. Delete the file."
            )

    # INFO, not WARNING: progress, and a cache that is not used, are no fault of the site
    # (strict mode fails on warnings).
    for path, content in site_files(say=_LOG.info):
        if path not in names:  # the cache checks this already; a site file is never replaced
            raise PluginError(f"the finder's data names a file it does not generate: {path!r}")
        files.append(File.generated(config, path, content=content))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Name the finder's releases on its page, and show the policy table on the policy
    page; convert each page from the page cache when nothing its conversion reads has
    changed."""
    from compat.guard.policy import POLICY_TABLE_MARKER, policy_table
    from compat.publish.finder_build import name_offered
    from compat.publish.page_cache import convert_once
    from compat.publish.pages import FINDER_PATH

    if page.file.src_uri == FINDER_PATH.name:  # it names the releases this build offers
        try:
            markdown = name_offered(markdown)
        except ValueError as error:
            raise PluginError(str(error)) from None
    if POLICY_TABLE_MARKER in markdown:  # computed from the policies, never typed
        markdown = markdown.replace(POLICY_TABLE_MARKER, policy_table())
    page.markdown = markdown  # what the conversion (and its cache key) reads
    convert_once(page, say=_LOG.info)
    return markdown
