"""SGLang 0.5.18: the attention start-up rules of 0.5.17."""

from __future__ import annotations

from compat.releases.entry import Release

RELEASE = Release("0.5.18")
