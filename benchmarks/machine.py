"""The machine a benchmark runs on, and its pace at the moment: the header of every report."""

from __future__ import annotations

import compileall
import os
import platform
import time
from pathlib import Path


def machine() -> str:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{os.cpu_count()} cores {model or platform.machine()}, Python "
        f"{platform.python_version()}, load average {load} at the start"
    )


def pace() -> float:
    """Seconds a fixed CPU-bound Python loop takes here (best of three): the machine's speed
    at the moment. It drifts by half over hours on a shared machine, so figures of runs at
    different times compare only next to it."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        sum(i * i for i in range(2_000_000))
        best = min(best, time.perf_counter() - start)
    return best


def installed_env(package: Path) -> dict[str, str]:
    """The environment for a child interpreter that meets `package` as an installed user
    meets it: byte-compiled (pip compiles every module as it installs a wheel).

    A machine that sets PYTHONDONTWRITEBYTECODE, on a checkout that never wrote its
    `__pycache__/`, would otherwise compile every module of the package in each fresh
    interpreter: about 75 ms on a 2-core machine, which no installed copy pays. The modules
    are compiled here once, into their usual cache files, and the children may read and
    write them."""
    compileall.compile_dir(str(package), quiet=1, workers=1)
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
