"""The wheels the kernel limits are read from: SGLang's (the conformance cache) and the
kernel packages it pins, each fetched once with `pip download --no-deps`.

Cache: `$COMPAT_KERNEL_WHEELS`, else `~/.cache/attention-compat/kernel-wheels`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from conformance.wheel import WheelUnavailableError


def cache_dir() -> Path:
    configured = os.environ.get("COMPAT_KERNEL_WHEELS")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "attention-compat" / "kernel-wheels"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def cached(package: str, version: str) -> Path | None:
    """The cached wheel of `package==version`, or None."""
    directory = cache_dir()
    if not directory.is_dir():
        return None
    for path in sorted(directory.glob("*.whl")):
        name, release = path.name.split("-")[:2]
        if _normal(name) == _normal(package) and release == version:
            return path
    return None


def kernel_wheel(package: str, version: str, download: bool = True) -> Path:
    """The wheel of `package==version` (for this interpreter's Python), fetched if absent."""
    found = cached(package, version)
    if found is not None or not download:
        if found is None:
            raise WheelUnavailableError(f"{package}=={version} is not in {cache_dir()}")
        return found
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", f"{package}=={version}",
               "-d", str(directory)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    found = cached(package, version)
    if result.returncode != 0 or found is None:
        raise WheelUnavailableError(
            f"cannot fetch {package}=={version} into {directory}: "
            + " / ".join((result.stderr or result.stdout).strip().splitlines()[-2:])
        )
    return found


def read_text(wheel: Path, member: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(member).decode("utf-8")


def members(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()
