"""`--speculative-algorithm`: each release's `algorithm_choices` are what its own code accepts.

The values are read by running the wheel (`tools/spec_algorithms.py`): its argparse choices
up to 0.5.11, then what start-up's alias resolution and `SpeculativeAlgorithm.from_string`
take. Typed by hand, the release data once missed DSPARK and the guard refused a launch
SGLang 0.5.16 ran.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conformance import releases as conformance_releases
from spec_algorithms import accepted_in_subprocess

from compat import AttentionConfig, Severity, check
from compat.engine.startup.spec import modelled_algorithms
from compat.releases import RELEASES

NOT_MODELLED = "startup-spec-not-modelled"

SELECTED = conformance_releases.selected()


@pytest.fixture(scope="module")
def from_wheels() -> dict[str, dict[str, Any]]:
    """What each selected release's wheel accepts (one process each)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(SELECTED, pool.map(accepted_in_subprocess, SELECTED), strict=True))


@pytest.mark.parametrize("release", SELECTED)
def test_the_algorithm_choices_are_what_the_wheel_accepts(
    release: str, from_wheels: dict[str, dict[str, Any]]
) -> None:
    wheel = set(from_wheels[release]["accepted"])
    data = set(RELEASES[release].algorithm_choices)
    assert data == wheel, (
        f"SGLang {release}: the wheel also accepts {sorted(wheel - data)}, the release data "
        f"also lists {sorted(data - wheel)}; fix `algorithm_choices` in compat/releases"
    )
    # The reading found the algorithms every release has, aliases included.
    assert {"EAGLE", "NEXTN", "NGRAM"} <= wheel
    any_case = not from_wheels[release]["case_sensitive"]
    assert RELEASES[release].algorithm_any_case is any_case, f"SGLang {release}"


@pytest.mark.parametrize("release", RELEASES)
def test_an_accepted_algorithm_without_a_replayed_handler_is_said_to_be_not_modelled(
    release: str,
) -> None:
    """Every value the release accepts: the replay runs its handler (EAGLE family, NGRAM,
    their aliases) or the report says that it does not, never a silent pass."""
    rules = RELEASES[release]
    modelled = set(modelled_algorithms(rules))
    assert {"EAGLE", "NEXTN", rules.ngram} <= modelled
    for algorithm in rules.algorithm_choices:
        report = check(
            AttentionConfig(
                sglang_version=release,
                platform="cuda",
                compute_capability=(9, 0),
                attention_arch="mha",
                speculative_algorithm=algorithm,
            )
        )
        said = [f for f in report.findings if f.rule == NOT_MODELLED]
        if algorithm in modelled:
            assert not said, f"{release} {algorithm}: {said}"
        else:
            assert len(said) == 1 and algorithm in said[0].message, f"{release} {algorithm}"
            assert said[0].severity is Severity.INFO
