"""Invalid input as JSON on stdout, for commands run with `--json` (exit 2 all the same)."""

from __future__ import annotations

import json
from typing import Any


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
    print(json.dumps({"error": error_object(error)}, indent=2, ensure_ascii=False))
