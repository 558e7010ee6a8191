"""The harness names the line of SGLang's code that chose a started launch's backend and page.

Up to 0.5.18 start-up writes the ServerArgs fields itself; from 0.5.19 each decision is a
declaration with its source. Either way `StartupOutcome.chosen_at` names `file:line
(function)` of the release's own code, and that line is the one that wrote the field.
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.availability import require_source
from conformance.harness import run_startup

_PLACE = re.compile(r"^(?P<file>sglang/[\w/]+\.py):(?P<line>\d+) \((?P<function>\w+)\)$")


def _line(root: Path, place: str) -> tuple[str, str]:
    """The source line a `file:line (function)` place names, and the function."""
    found = _PLACE.match(place)
    assert found, place
    text = (root / found["file"]).read_text(encoding="utf-8").splitlines()
    return text[int(found["line"]) - 1], found["function"]


def test_up_to_0_5_18_the_post_init_line_that_wrote_the_field() -> None:
    root = require_source("0.5.7")
    outcome = run_startup("0.5.7", "B200", "Llama-3.1-8B", [])
    assert outcome.chosen_at is not None
    assert (outcome.prefill_backend, outcome.page_size) == ("trtllm_mha", 64)
    backend, _ = _line(root, outcome.chosen_at["attention_backend"])
    page, _ = _line(root, outcome.chosen_at["page_size"])
    assert "self.attention_backend =" in backend
    assert "self.page_size =" in page


def test_from_0_5_19_the_declaration_of_the_deciding_step() -> None:
    root = require_source("0.5.23")
    argv = ["--attention-backend", "tokenspeed_mla", "--kv-cache-dtype", "fp8_e4m3"]
    outcome = run_startup("0.5.23", "B200", "DeepSeek-V3", argv)
    assert outcome.chosen_at is not None
    assert (outcome.prefill_backend, outcome.decode_backend) == ("trtllm_mla", "cutedsl_mla")
    alias, function = _line(root, outcome.chosen_at["attention_backend"])
    assert function == "handle_deprecated_args"
    assert 'declare_resolution(server_args, "_handle_deprecated_args", **renamed)' in alias
    # A registered pass has returned when its decision is stored: where it is defined.
    fill, function = _line(root, outcome.chosen_at["prefill_attention_backend"])
    assert function == "_cutedsl_prefill_backend_fill" and f"def {function}(" in fill


def test_a_refused_launch_names_where_it_was_raised_instead() -> None:
    require_source("0.5.23")
    topk_without_steps = ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"]
    outcome = run_startup("0.5.23", "B200", "Llama-3.1-8B", topk_without_steps)
    assert outcome.refused and outcome.chosen_at is None
    assert outcome.raised_at is not None and _PLACE.match(outcome.raised_at)
