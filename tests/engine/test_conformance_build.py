"""The engine predicts what each release's attention registry does when it builds a backend.

The harness (tools/conformance/build.py) runs the release's own
`sglang/srt/layers/attention/attention_registry.py` under the fake torch: every registered
backend's factory, then `attn_backend_wrapper`, for an MHA, an MLA, an encoder-decoder and
a hybrid GDN model, with and without speculative decoding, on nine machines by exact
compute capability (sm80 to sm121), ROCm gfx942 and a CPU. The engine (`compat.engine.build` over
`compat.releases.build`) must agree on every case: whether the build fails, and on which
line of which function of the registry.
"""

from __future__ import annotations

import collections

import pytest
from build_launch import launch_of
from conformance import releases
from conformance.availability import require_source
from conformance.build import BuildCase, BuildOutcome, run_grid

from compat.engine.build import BuildCheck, predict_build
from compat.releases import RELEASES


def _disagreements(version: str, grid: dict[tuple[str, BuildCase], BuildOutcome]) -> list[str]:
    rules = RELEASES[version].build
    found = []
    for (gpu, case), outcome in grid.items():
        # The harness runs the registry alone (the backend classes are stand-ins).
        speculative = case.speculative is not None
        launch = launch_of(gpu, case)
        failure = predict_build(rules, launch, (case.backend,), speculative, constructors=False)
        predicted = None if failure is None else (failure.line, failure.function)
        if predicted != (None if not outcome.failed else (outcome.raised_at, outcome.raised_in)):
            found.append(
                f"{gpu} {case}: sglang {outcome.raised_at} {outcome.error}, engine {predicted}"
            )
    return found


@pytest.mark.parametrize("version", releases.selected())
def test_engine_predicts_every_backend_build(version: str) -> None:
    require_source(version)
    grid = run_grid(version)
    outcomes = collections.Counter(outcome.failed for outcome in grid.values())
    assert outcomes[True] > 0 and outcomes[False] > 0  # the grid both builds and fails
    assert all(o.raised_at is not None for o in grid.values() if o.failed), (
        "a failure off the registry"
    )
    found = _disagreements(version, grid)
    assert not found, f"sglang {version}: {len(found)} of {len(grid)} disagree:\n" + "\n".join(
        found[:20]
    )


def test_an_mla_model_on_trtllm_mha_fails_where_the_release_says() -> None:
    # The line moves with the registry: 158 in 0.5.7, 280 in 0.5.23.
    case = BuildCase("trtllm_mha", mla=True)
    for version, line in (("0.5.7", 158), ("0.5.23", 280)):
        failure = predict_build(
            RELEASES[version].build, launch_of("sm90", case), ("trtllm_mha",), False
        )
        assert failure is not None and failure.where.endswith(f"attention_registry.py:{line}")


@pytest.mark.parametrize("version", releases.selected())
def test_each_constructor_check_is_where_the_release_raises(version: str) -> None:
    """The constructors' checks are read, not run: each line is the release's `raise` right
    after the condition the check models."""
    root = require_source(version)
    checks = [c for c in RELEASES[version].build.checks if c.in_constructor]
    if int(version.split(".")[2]) >= 17:
        assert checks
    conditions = {
        BuildCheck.GPU: "if major != 9",
        BuildCheck.MODEL_FAMILY: "if not isinstance(hf_config, MiniCPMHybridConfig)",
    }
    for check in checks:
        lines = (root / check.file).read_text(encoding="utf-8").splitlines()
        assert lines[check.line - 1].strip().startswith("raise ValueError("), check
        before = "\n".join(lines[check.line - 5 : check.line - 1])
        assert conditions[check.check] in before, check
        if check.check is BuildCheck.MODEL_FAMILY:
            config = (root / "sglang/srt/configs/minicpm.py").read_text(encoding="utf-8")
            assert all(f'model_type = "{t}"' in config for t in check.model_types)
