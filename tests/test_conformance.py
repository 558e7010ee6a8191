"""The product predicts SGLang 0.5.7's start-up on every launch of the conformance grid.

SGLang's own argument parser and ServerArgs post-init run on each launch (see
tests/conformance); the product's `check()` must agree on whether SGLang refuses to start
and, where it starts, on the prefill backend, decode backend and page size it runs with.
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance.availability import require_source
from conformance.compare import VERSION, disagreements, report
from conformance.dump import rows as grid_rows

MIN_GRID = 15_000


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    require_source(VERSION)
    return grid_rows(VERSION, workers=2)


def test_grid_is_large_and_sglang_both_refuses_and_starts(rows: list[dict[str, Any]]) -> None:
    assert len(rows) >= MIN_GRID
    refused = sum(row["outcome"]["refused"] for row in rows)
    assert 0 < refused < len(rows)


def test_product_predicts_every_startup_outcome(rows: list[dict[str, Any]]) -> None:
    found = disagreements(rows)
    if found:
        pytest.fail(report(len(rows), found), pytrace=False)
