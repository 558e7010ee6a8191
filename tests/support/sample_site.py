"""The site the tests build (its finder offering the tests' sample) and serve on 127.0.0.1:
for the site and browser tests, and the loop's benchmark."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from finder_sample import sample_env
from paths import ROOT


def build_sample_site(
    site: Path, config: Path | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `config` (default: the repository's) into `site`, its finder
    offering the tests' sample (the build cache entry every test reads)."""
    chosen = ["-f", str(config)] if config is not None else []
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *chosen, "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=cwd,
        # Material prints an end-of-life banner that mentions this variable; it is not a
        # build warning, and hiding it keeps the "no WARNING" assertions meaningful.
        env={**sample_env(), "NO_MKDOCS_2_WARNING": "1"},
        timeout=900,
        check=False,
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """`site` served on 127.0.0.1 (a free port) while inside; its base URL."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
