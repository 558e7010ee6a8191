"""The engine predicts what each release's draft backend factory does for the draft model.

The harness (tools/conformance/build.py) runs the release's own `DraftBackendFactory`
(`sglang/srt/speculative/draft_utils.py`) under the fake torch, as the EAGLE worker calls
it with the draft flag unset: the multi-step decode backend, then the draft-extend one, on
every backend the registry registers as the target's, for an MHA and an MLA model, with one
draft step and three, on the build grid's machines (sm80 to sm121, ROCm gfx942, a CPU). The
engine (`compat.engine.build.predict_draft` over `compat.releases.draft`) must agree on every
case: whether the draft's build fails, and on which line of which function.
"""

from __future__ import annotations

import ast
import collections

import msgspec
import pytest
from build_launch import launch_of
from conformance import releases
from conformance.availability import require_source
from conformance.build import BuildCase, BuildOutcome, DraftCase, run_draft_grid

from compat.engine.build import DRAFT_FILE, BuildCheck, build_after_startup, predict_draft
from compat.engine.launch import Launch
from compat.releases import RELEASES
from compat.vocab.terms import Arch


def _launch(gpu: str, case: DraftCase) -> Launch:
    launch = launch_of(gpu, BuildCase(case.backend, case.mla, speculative="EAGLE"))
    arch = None if case.draft_mla is None else (Arch.MLA if case.draft_mla else Arch.MHA)
    return msgspec.structs.replace(launch, draft_backend=case.draft_backend, draft_arch=arch)


def _disagreements(version: str, grid: dict[tuple[str, DraftCase], BuildOutcome]) -> list[str]:
    rules = RELEASES[version].build
    assert rules.draft is not None
    found = []
    for (gpu, case), outcome in grid.items():
        if {case.backend, case.draft_backend} & rules.draft.model_own:
            continue  # the grid's models are no QSA model: `test_a_model_own_draft_path...`
        # The harness runs the registry alone (the backend classes are stand-ins).
        phases = (case.prefill or case.backend, case.backend)
        failure = build_after_startup(
            rules, _launch(gpu, case), phases, "EAGLE", case.steps, constructors=False
        )
        predicted = None if failure is None else (failure.line, failure.function)
        said = None if outcome.built is not None else (outcome.raised_at, outcome.raised_in)
        if predicted != said:
            found.append(f"{gpu} {case}: sglang {said} {outcome}, engine {predicted}")
    return found


@pytest.mark.parametrize("version", releases.selected())
def test_engine_predicts_every_draft_build(version: str) -> None:
    require_source(version)
    grid = run_draft_grid(version)
    outcomes = collections.Counter(outcome.failed for outcome in grid.values())
    assert outcomes[True] > 0 and outcomes[False] > 0  # the grid both builds and fails
    kinds = {outcome.raised_in for outcome in grid.values() if outcome.failed}
    assert "_create_backend" in kinds and len(kinds) > 1  # no variant, and MLA only
    found = _disagreements(version, grid)
    assert not found, f"sglang {version}: {len(found)} of {len(grid)} disagree:\n" + "\n".join(
        found[:20]
    )


def _map_keys(root: object, function: str) -> frozenset[str]:
    """The keys of `backend_map` in `DraftBackendFactory.<function>` of the wheel."""
    tree = ast.parse((root / DRAFT_FILE).read_text(encoding="utf-8"))  # type: ignore[operator]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for assign in ast.walk(node):
                if isinstance(assign, ast.Assign) and isinstance(assign.value, ast.Dict):
                    keys = assign.value.keys
                    return frozenset(k.value for k in keys if isinstance(k, ast.Constant))
    raise AssertionError(f"no backend map in {function}")


@pytest.mark.parametrize("version", releases.selected())
def test_the_recorded_map_is_the_release_own(version: str) -> None:
    """Backends the registry does not register (`hybrid_linear_attn`, ...) are in the map
    too: the recorded keys are each map's keys, read back from the wheel."""
    root = require_source(version)
    rules = RELEASES[version].build.draft
    assert rules is not None
    for function in ("create_decode_backend", "create_draft_extend_backend"):
        assert _map_keys(root, function) == rules.backends, function
    lines = (root / DRAFT_FILE).read_text(encoding="utf-8").splitlines()
    assert lines[rules.line - 1].strip() == (
        "raise ValueError(error_template.format(backend_type=backend_type))"
    )


@pytest.mark.parametrize("version", releases.selected())
def test_a_model_own_draft_path_is_the_release_own(version: str) -> None:
    """The backends never predicted to fail in the draft (`DraftRules.model_own`) are those of
    the release's model-own branch: `qsa` where the factory reads a QSA model's profile."""
    root = require_source(version)
    rules = RELEASES[version].build.draft
    assert rules is not None
    source = (root / DRAFT_FILE).read_text(encoding="utf-8")
    branches = source.count("if self.qsa_profile is not None:")
    assert rules.model_own == (frozenset({"qsa"}) if branches == 2 else frozenset()), branches


def test_an_mha_target_on_trtllm_mla_fails_in_the_draft_where_the_release_says() -> None:
    # The decode builder raises first; with one step, the draft-extend one.
    case = BuildCase("trtllm_mla", speculative="EAGLE3")
    for version, steps, line in (("0.5.7", 3, 171), ("0.5.7", 1, 230), ("0.5.23", 3, 360)):
        rules = RELEASES[version].build.draft
        assert rules is not None
        failure = predict_draft(rules, launch_of("sm100", case), ("trtllm_mla",) * 2, steps)
        assert failure is not None and failure.draft and failure.check is BuildCheck.NEEDS_MLA
        assert failure.where == f"{DRAFT_FILE}:{line}"
