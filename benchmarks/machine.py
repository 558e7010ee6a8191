"""The machine a benchmark runs on, and its pace at the moment: the header of every report."""

from __future__ import annotations

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
