"""The product predicts SGLang's start-up on every launch of each release's conformance grid.

SGLang's own argument parser and ServerArgs resolution (post-init; from 0.5.19
`resolve_once()`) run on each launch (see tools/conformance); the product's `check()`,
asked about that release (`sglang_version`), must agree on whether SGLang refuses to start
and, where it starts, on the prefill backend, decode backend and page size it runs with.

Releases: by default (and in CI) 0.5.7, 0.5.8, 0.5.12, 0.5.16, 0.5.21 and 0.5.23; every
release from 0.5.7 to 0.5.23 with `COMPAT_CONFORMANCE_RELEASES=all` (or a comma-separated
list, e.g. `COMPAT_CONFORMANCE_RELEASES=0.5.9,0.5.19`). SGLang's outcomes are cached beside
the wheels, keyed by the wheel and the harness code; `COMPAT_CONFORMANCE_FRESH=1` recomputes.
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.compare import disagreements, report
from conformance.dump import rows as grid_rows

MIN_GRID = 15_000
MAX_GRID = 20_000


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    version: str = request.param
    require_source(version)
    return grid_rows(version, workers=2, cache=True)


def test_grid_is_large_and_sglang_both_refuses_and_starts(rows: list[dict[str, Any]]) -> None:
    assert MIN_GRID <= len(rows) <= MAX_GRID
    refused = sum(row["outcome"]["refused"] for row in rows)
    assert 0 < refused < len(rows)
    assert {row["version"] for row in rows} == {rows[0]["version"]}


def test_product_predicts_every_startup_outcome(rows: list[dict[str, Any]]) -> None:
    found = disagreements(rows)
    if found:
        pytest.fail(f"sglang {rows[0]['version']}: " + report(len(rows), found), pytrace=False)
