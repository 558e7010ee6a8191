"""The product predicts SGLang's start-up for every model family the release special-cases.

The grid and the zoo launch a fixed set of models; a release's branch for any other family
is never run by them. The family axis (tools/conformance/family_axis) reads from the wheel
every architecture a model-specific branch names while touching an attention field, and
launches each as a stand-in checkpoint on H200, B200 and MI300X, with no backend flag and
with flashinfer and triton, each with and without `--enable-deterministic-inference`,
through the release's own start-up code. The product reads the same launch as `compat
check` does and must agree on whether SGLang refuses and, where it starts, on the prefill
backend, decode backend and page size.

Releases: those of the main conformance suite (`COMPAT_CONFORMANCE_RELEASES`).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.compare import report
from conformance.family_axis.axis import MACHINES, UNREADABLE, disagreements, flag_sets
from conformance.family_axis.axis import rows as family_rows
from conformance.family_axis.scan import special_cased

# A stand-in may fail to carry a branch that reads a part it lacks; most must run.
MAX_UNREADABLE_SHARE = 0.25


@functools.cache
def _rows(version: str) -> list[dict[str, Any]]:
    require_source(version)
    return family_rows(version)


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return _rows(request.param)


def test_every_special_cased_architecture_is_launched(rows: list[dict[str, Any]]) -> None:
    version = rows[0]["version"]
    named = special_cased(version)
    assert named, f"sglang {version}: no model-specific branch found in its source"
    assert {row["model"] for row in rows} == set(named)
    assert {row["gpu"] for row in rows} == set(MACHINES)
    assert len(rows) == len(named) * len(MACHINES) * len(flag_sets())
    unreadable = [row for row in rows if row.get(UNREADABLE)]
    assert len(unreadable) <= MAX_UNREADABLE_SHARE * len(rows), sorted(
        {row["model"] for row in unreadable}
    )


def test_the_scan_finds_the_branches_of_known_families() -> None:
    # Gemma 4's branch (0.5.11+: `_handle_model_specific_adjustments`, then overrides)
    # and GPT-OSS's (every release) are where the release's own source says.
    for version in releases.selected():
        require_source(version)
        named = special_cased(version)
        assert "GptOssForCausalLM" in named
        if tuple(map(int, version.split("."))) >= (0, 5, 11):
            assert "Gemma4ForConditionalGeneration" in named, version


def test_product_predicts_every_family_outcome(rows: list[dict[str, Any]]) -> None:
    comparable = [row for row in rows if not row.get(UNREADABLE)]
    found = disagreements(comparable)
    if found:
        pytest.fail(
            f"sglang {rows[0]['version']} families: " + report(len(comparable), found, 3),
            pytrace=False,
        )
