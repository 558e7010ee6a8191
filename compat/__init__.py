"""attention-compat: one capability matrix for SGLang's attention backends."""

from __future__ import annotations

__version__ = "0.1.0"
