"""The kernel packages a release pins: its wheel's METADATA `Requires-Dist` lines."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

# The kernel packages SGLang's attention paths run (names as PyPI normalises them).
KERNEL_PACKAGES = (
    "flashinfer-python",
    "flashinfer-cubin",
    "sgl-kernel",
    "sglang-kernel",
    "flash-attn-4",
    "nvidia-cutlass-dsl",
    "sgl-deep-gemm",
    "sgl-flash-mla",
)
_REQUIREMENT = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*([^;]*)(;.*)?$")


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(wheel: Path) -> tuple[tuple[str, str, int], ...]:
    """(package, requirement as written after the name, METADATA line) of every kernel
    package the wheel requires unconditionally (not behind an extra)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode("utf-8")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _REQUIREMENT.match(line)
        if match is None or normal(match.group(1)) not in KERNEL_PACKAGES:
            continue
        marker = match.group(4) or ""
        if "extra" in marker:
            continue
        spec = (match.group(2) or "") + match.group(3).strip()
        found.append((normal(match.group(1)), spec, number))
    return tuple(found)


def metadata_name(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))


def floor(spec: str) -> str | None:
    """The oldest version a requirement admits (`==X` or `>=X`); None for anything else.
    A range is read at its floor: the oldest release of the kernel the pin lets in."""
    match = re.search(r"(?:==|>=)\s*([0-9][A-Za-z0-9.+]*)", spec)
    return match.group(1) if match else None


def extras(spec: str) -> frozenset[str]:
    match = re.match(r"\[([^\]]*)\]", spec)
    return frozenset(e.strip() for e in match.group(1).split(",")) if match else frozenset()
