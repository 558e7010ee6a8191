"""JSON output, and invalid input as JSON on stdout for commands run with `--json` (exit 2).

Every JSON text the command line prints is valid UTF-8, whatever the arguments held: an
argument that was not valid UTF-8 reaches Python with lone surrogates, and those are
written as JSON escapes (`\\udcff`), which read back to the same string, never as raw bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: Any) -> str:
    """`data` as indented JSON, non-ASCII characters kept, lone surrogates escaped."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def error_object(error: Exception | str) -> dict[str, Any]:
    """The message and, where known, each bad flag with its value and choices."""
    problems = getattr(error, "problems", ())
    return {
        "message": str(error),
        "problems": [
            {
                "flag": problem.flag,
                "value": problem.value if isinstance(problem.value, str) else repr(problem.value),
                "reason": problem.reason,
                "did_you_mean": problem.did_you_mean,
                "choices": list(problem.choices),
            }
            for problem in problems
        ],
    }


def print_json_error(error: Exception | str) -> None:
    print(json_text({"error": error_object(error)}))
