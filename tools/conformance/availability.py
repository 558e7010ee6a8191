"""Tests need the wheel: without it they skip with the reason, except in CI, where they fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.wheel import WheelUnavailableError, source_root


def require_source(version: str) -> Path:
    try:
        return source_root(version)
    except WheelUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the conformance suite: {exc}", pytrace=False)
        pytest.skip(str(exc))


def require_zoo(version: str) -> Path:
    """The release's source and the transformers it pins (the zoo runs its config loader)."""
    root = require_source(version)
    from conformance.zoo_runtime import prepare

    try:
        prepare(version)
    except WheelUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the conformance suite: {exc}", pytrace=False)
        pytest.skip(str(exc))
    return root
