"""Fetch a released `sglang` wheel (never its dependencies) and unpack the files we run.

Cache: `$COMPAT_SGLANG_WHEELS`, else `~/.cache/attention-compat/sglang-wheels`. The wheel is
downloaded once with `pip download --no-deps`; its Python sources (`sglang/**/*.py`, a few
MB) are extracted next to it, into `sglang-<version>-py/`, so any release's start-up code
can be loaded from them, whichever files that release spreads it over.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# Files every release has; a wheel without them is not one the harness can run.
NEEDED_FILES = (
    "sglang/srt/server_args.py",
    "sglang/srt/environ.py",
    "sglang/srt/utils/common.py",
    "sglang/srt/configs/model_config.py",
    "sglang/utils.py",
)
# Written last into an extraction: its presence means the directory is whole.
_MARKER = ".complete"


FRESH = "COMPAT_CONFORMANCE_FRESH"
"""Set (to anything), every fact cached beside the wheels is computed again: SGLang's
outcomes, a release's model data, a transformers release's config facts."""


class WheelUnavailableError(RuntimeError):
    """The wheel is neither cached nor downloadable."""


def cache_dir() -> Path:
    configured = os.environ.get("COMPAT_SGLANG_WHEELS")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "attention-compat" / "sglang-wheels"


LIVE_ONLY = frozenset({"verify.py", "shapes.py"})
"""The harness's modules that run what SGLang does after the build (the verify, the draft's
capture, the first prefill): only tests that run them live import them, and no cached fact
reads them (tests/tools/test_harness_digest.py holds it)."""


def harness_digest(version: str, leave_out: frozenset[str] = frozenset()) -> hashlib._Hash:
    """A hash of what a cached fact of `version`'s wheel was computed from: the wheel (its
    file name: a released wheel never changes) and the harness's own modules but
    `leave_out` and `LIVE_ONLY`. Callers add what else their fact reads."""
    digest = hashlib.sha256(wheel_path(version).name.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        if source.name not in leave_out | LIVE_ONLY:
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest


def wheel_path(version: str) -> Path:
    """The cached wheel of `sglang==version`, downloaded first if absent."""
    directory = cache_dir()
    found = sorted(directory.glob(f"sglang-{version}-*.whl"))
    if found:
        return found[0]
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        f"sglang=={version}",
        "-d",
        str(directory),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    found = sorted(directory.glob(f"sglang-{version}-*.whl"))
    if result.returncode != 0 or not found:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise WheelUnavailableError(
            f"cannot fetch the sglang=={version} wheel into {directory} "
            f"(`{' '.join(command[2:])}` exited {result.returncode}): "
            + (" / ".join(detail) or "no wheel written")
            + "; set COMPAT_SGLANG_WHEELS to a directory holding it to work offline"
        )
    return found[0]


def source_root(version: str) -> Path:
    """A directory holding the Python sources of `sglang==version`, extracted from its wheel."""
    root = cache_dir() / f"sglang-{version}-py"
    marker = root / _MARKER
    if marker.exists():
        return root
    wheel = wheel_path(version)
    # Extract beside the final place and rename, so a concurrent run never reads half a file.
    staging = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        missing = [name for name in NEEDED_FILES if name not in names]
        if missing:
            raise WheelUnavailableError(f"{wheel.name} lacks {', '.join(missing)}")
        for name in sorted(names):
            if name.startswith("sglang/") and name.endswith(".py"):
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    (staging / _MARKER).write_text(wheel.name + "\n")
    try:
        staging.rename(root)
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
        if not marker.exists():
            return source_root(version)
    return root
