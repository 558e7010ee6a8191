"""The product predicts DeepSeek DSA's page size on ROCm with the variables and Triton set.

From 0.5.12 the page size turns on `aiter_can_use_preshuffle_paged_mqa()`, which reads
SGLANG_USE_AITER, the disable switch, AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS and
`triton.__version__`. The zoo runtime (`conformance.zoo_runtime`) runs that function from
the release's own source, its module a stand-in whose other names are placeholders; here
the test gives that module a `triton` with a version (a plain object: the harness's own
`triton` is a placeholder, whose version SGLang cannot read) and clears the function's
`lru_cache` before each launch, then runs DeepSeek-V3.2-Exp under each case with the
variables set after the harness's scrub. The product is asked as `compat check` is, with
`--env` and `--package` saying what SGLang ran with (SGLANG_USE_AITER is always given:
the harness scrubs it, where the product would take the image's 1).
"""

from __future__ import annotations

import importlib
import os
import types
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_zoo
from conformance.compare import disagreements, report
from conformance.harness import open_runtime

from compat.engine.environment import MODELLED, SCANNED
from compat.engine.preshuffle import AOT_GLUON, DSA_DISABLE, NSA_DISABLE, USE_AITER
from compat.releases import release_rules

MODEL = "DeepSeek-V3.2-Exp"
GPU = "MI300X"
FUNCTION = "aiter_can_use_preshuffle_paged_mqa"
ARGVS: tuple[tuple[str, ...], ...] = ((), ("--page-size", "16"), ("--tp-size", "8"))
CASES: tuple[tuple[dict[str, str], str | None], ...] = (
    ({USE_AITER: "1"}, "3.5.0"),
    ({USE_AITER: "1"}, "3.7.0+amd.rocm7.2.0.git89002410"),
    ({USE_AITER: "1"}, "3.4.0"),
    ({USE_AITER: "1"}, None),  # a Triton whose version SGLang cannot read
    ({USE_AITER: "0"}, "3.5.0"),
    ({USE_AITER: "true", DSA_DISABLE: "1"}, "3.5.0"),
    ({USE_AITER: "1", DSA_DISABLE: "yes"}, "3.5.0"),
    ({USE_AITER: "1", DSA_DISABLE: "0"}, "3.5.0"),
    ({USE_AITER: "1", NSA_DISABLE: "1"}, "3.5.0"),
    ({USE_AITER: "1", AOT_GLUON: "1"}, "3.4.0"),
)


def test_every_preshuffle_variable_has_cases() -> None:
    """The variables the replay models beyond `env_data`'s are all this axis's."""
    assert set().union(*(variables for variables, _ in CASES)) == MODELLED - SCANNED


def _utils_module(version: str) -> str:
    """The module that defines the check in `version` (`nsa` in 0.5.12)."""
    source = release_rules(version).preshuffle
    assert source is not None
    return source.source.split(":")[0].removesuffix(".py").replace("/", ".")


def _reads(version: str) -> set[str]:
    rules = release_rules(version)
    return set(rules.preshuffle.variables) if rules.preshuffle is not None else set()


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    version: str = request.param
    require_zoo(version)
    read = _reads(version)  # none before 0.5.12: SGLang must ignore them all
    table: list[dict[str, Any]] = []
    with open_runtime(version, GPU, zoo=True) as runtime:
        utils = importlib.import_module(_utils_module(version)) if read else None
        for variables, triton in CASES:
            if utils is not None:  # SGLang reads `triton.__version__` from its globals
                utils.triton = types.SimpleNamespace(__version__=triton) if triton else object()
            for argv in ARGVS:
                if utils is not None:
                    getattr(utils, FUNCTION).cache_clear()  # one launch a process: no memo
                saved = dict(os.environ)
                os.environ.update(variables)  # after the runtime's scrub
                try:
                    outcome = runtime.outcome(MODEL, argv)
                finally:  # all of it: the alias's fallback writes the canonical name
                    os.environ.clear()
                    os.environ.update(saved)
                table.append({
                    "version": version, "gpu": GPU, "model": MODEL, "argv": list(argv),
                    "set": dict(variables),
                    "env": {name: value for name, value in variables.items() if name in read},
                    # An unreadable version: the product cannot be told it; it takes the
                    # legacy path for an unknown one, as SGLang does for an unreadable one.
                    "packages": {"triton": triton} if triton and read else {},
                    "outcome": outcome.to_json(),
                })  # fmt: skip
    return table


def test_the_axis_moves_the_page_size_where_the_release_reads_it(
    rows: list[dict[str, Any]],
) -> None:
    """An honest axis: where the release has the check, SGLang itself ran both page sizes
    (64 and 1) across the cases of one launch; where it has none, one page size."""
    version = rows[0]["version"]
    pages: dict[tuple[str, ...], set[int | None]] = {}
    for row in rows:
        pages.setdefault(tuple(row["argv"]), set()).add(row["outcome"]["page_size"])
    moved = {argv for argv, sizes in pages.items() if len(sizes) > 1}
    if _reads(version):
        assert pages[()] == {1, 64}, pages
    else:
        assert not moved, f"sglang {version}: {pages}"


def test_product_predicts_every_dsa_rocm_page(rows: list[dict[str, Any]]) -> None:
    found = disagreements(rows)
    if found:
        pytest.fail(f"sglang {rows[0]['version']}: " + report(len(rows), found), pytrace=False)
