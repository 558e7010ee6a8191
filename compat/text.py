"""Plain text for a terminal from the Markdown some sentences of the matrix are written in."""

from __future__ import annotations

import re

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def plain(text: str) -> str:
    """Drop code spans' backticks and bold markers; write a link as `text (url)`."""
    text = _LINK.sub(r"\1 (\2)", text)
    return text.replace("`", "").replace("**", "")
