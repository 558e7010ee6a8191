"""The product predicts SGLang's start-up with the environment variables the engine models set.

The grid (`test_conformance.py`) runs SGLang with no SGLANG_* variable set (the harness
scrubs the machine's own). Here the same runtime runs a sample of the grid's launches on a
ROCm and a CUDA machine again with each modelled variable set to each value that matters
(`compat.engine.environment.SCANNED`; the value that moves a decision, in another case,
and one that does not), set after the scrub and removed after each launch. The product is
asked with the variables the release reads (`environment=`); a release whose start-up does
not read one is run with it set all the same and asked without it: SGLang must ignore it.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.compare import disagreements, report
from conformance.grid import grid
from conformance.harness import open_runtime

from compat.engine.environment import AITER_KV_CACHE_LAYOUT, SCANNED, VECTORIZED_5D, modelled

GPUS = ("MI300X", "H200")
VALUES = {AITER_KV_CACHE_LAYOUT: (VECTORIZED_5D, VECTORIZED_5D.upper(), "nhd")}
STRIDE = 7
"""One grid launch in this many (those without --kv-cache-dtype) per machine."""


def test_every_modelled_variable_has_values() -> None:
    # The preshuffle check's variables (DSA's page size on ROCm) have their own axis, on the
    # zoo's DSA model: test_conformance_dsa_rocm.py.
    assert set(VALUES) == SCANNED


def _sample(version: str, gpu: str) -> list[Any]:
    plain = [
        launch
        for launch in grid(version)
        if launch.gpu == gpu and "--kv-cache-dtype" not in launch.argv
    ]
    return plain[::STRIDE]


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    version: str = request.param
    require_source(version)
    read = set(modelled(version))
    table: list[dict[str, Any]] = []
    # In-process (as test_conformance_enforce.py): a few hundred launches take seconds.
    for gpu in GPUS:
        launches = _sample(version, gpu)
        with open_runtime(version, gpu) as runtime:
            for name, values in VALUES.items():
                for value in values:
                    for launch in launches:
                        os.environ[name] = value  # after the runtime's scrub
                        try:
                            outcome = runtime.outcome(launch.model, launch.argv)
                        finally:
                            del os.environ[name]
                        table.append({
                            "version": version, "gpu": gpu, "model": launch.model,
                            "argv": list(launch.argv),
                            "set": {name: value},  # what SGLang ran with
                            "env": {name: value} if name in read else {},
                            "outcome": outcome.to_json(),
                        })  # fmt: skip
    return table


def test_the_axis_moves_a_decision_where_the_release_reads_the_variable(
    rows: list[dict[str, Any]],
) -> None:
    """An honest axis: where the release reads a variable, some launch runs another page
    size under one of its values than under another; where it does not, none does."""
    version = rows[0]["version"]
    pages: dict[tuple[str, str, str, tuple[str, ...]], set[int | None]] = {}
    for row in rows:
        (name,) = row["set"]
        key = (name, row["gpu"], row["model"], tuple(row["argv"]))
        pages.setdefault(key, set()).add(row["outcome"]["page_size"])
    moved = {key[0] for key, sizes in pages.items() if len(sizes) > 1}
    assert moved == set(modelled(version)), f"sglang {version}: moved by {sorted(moved)}"


def test_product_predicts_every_startup_outcome_with_the_variables(
    rows: list[dict[str, Any]],
) -> None:
    found = disagreements(rows)
    if found:
        pytest.fail(f"sglang {rows[0]['version']}: " + report(len(rows), found), pytrace=False)
