"""SGLang 0.5.14: the attention start-up rules of 0.5.13."""

from __future__ import annotations

from compat.releases.entry import Release

RELEASE = Release("0.5.14")
