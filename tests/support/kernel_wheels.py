"""The kernel wheels the kernel-limit tests read again.

A wheel that cannot be had (no cache, no network) skips the test with the reason, except in
CI, where it fails: CI must read every kernel wheel the data cites.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conformance.wheel import WheelUnavailableError
from kernels.wheels import kernel_wheel


@contextmanager
def wheels_at_hand() -> Iterator[None]:
    """Skip (fail in CI) where the body cannot have a wheel it reads."""
    try:
        yield
    except WheelUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must read the kernel wheels: {exc}", pytrace=False)
        pytest.skip(str(exc))


def read_kernel_wheel(package: str, version: str) -> Path:
    """The cached wheel of `package==version`, downloaded first if absent."""
    with wheels_at_hand():
        return kernel_wheel(package, version)


def text_line(text: str, number: int) -> str:
    """Line `number` (from 1) of `text`: where the data says a fact is written."""
    return text.splitlines()[number - 1]
