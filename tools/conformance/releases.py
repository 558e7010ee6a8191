"""The SGLang releases the conformance suite runs, and which of them by default.

`COMPAT_CONFORMANCE_RELEASES` picks them: unset, the default set (the releases whose
start-up rules differ most: the 0.5.7 baseline, 0.5.8, 0.5.12, the 0.5.16 KV4 rework,
0.5.21 and the newest); `all`, every release from 0.5.7 to 0.5.23; or a comma-separated
list such as `0.5.9,0.5.19`.
"""

from __future__ import annotations

import os

ALL_RELEASES = tuple(f"0.5.{minor}" for minor in range(7, 24))
DEFAULT_RELEASES = ("0.5.7", "0.5.8", "0.5.12", "0.5.16", "0.5.21", "0.5.23")
ENVIRONMENT = "COMPAT_CONFORMANCE_RELEASES"


def selected(value: str | None = None) -> tuple[str, ...]:
    """The releases `value` (default: the environment variable) names."""
    value = os.environ.get(ENVIRONMENT, "") if value is None else value
    value = value.strip()
    if not value:
        return DEFAULT_RELEASES
    if value == "all":
        return ALL_RELEASES
    chosen = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [release for release in chosen if release not in ALL_RELEASES]
    if unknown:
        raise ValueError(
            f"{ENVIRONMENT}: unknown release {', '.join(unknown)}; "
            f"use 'all' or some of {', '.join(ALL_RELEASES)}"
        )
    return chosen
