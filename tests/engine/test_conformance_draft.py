"""The engine predicts what each release's draft worker builds for the draft model.

The harness (tools/conformance/build.py) runs, under the fake torch, the target runner's
registry build, then the draft runner's (for the draft model's own architecture:
`--speculative-draft-attention-backend` alone, else the target's backends), then the
release's own `DraftBackendFactory` (`sglang/srt/speculative/draft_utils.py`) as the EAGLE
worker calls it: the multi-step decode backend, then the draft-extend one. The grid: every
backend the registry registers as the target's, for an MHA and an MLA model, with one draft
step and three, the draft inheriting the target's backend or on each registered backend of
its own, with a draft of the target's architecture or the other one (an MHA EAGLE3 draft of
an MLA target), and the draft of a QSA model (its config carries the indexer the release's
own `parse_qsa_profile` reads, handed to the factory as the EAGLE workers do), on the build
grid's machines (sm80 to sm121, ROCm gfx942, a CPU). The engine
(`compat.engine.build.build_after_startup` over `compat.releases`) must agree on every
case: whether the build fails, on which line of which function, and what it builds.
"""

from __future__ import annotations

import ast
import collections
import re

import msgspec
import pytest
from build_launch import launch_of
from conformance import releases
from conformance.availability import require_source
from conformance.build import QSA_CONFIG, BuildCase, BuildOutcome, DraftCase, run_draft_grid

from compat.engine.build import (
    DRAFT_FILE,
    BuildCheck,
    build_after_startup,
    draft_factory_backends,
    predict_draft,
)
from compat.engine.launch import Launch
from compat.inputs.model_config import QSA_PROFILE_KEY, QSA_SCOPE
from compat.releases import RELEASES
from compat.vocab.terms import Arch, ModelFeature, SpeculativeAttentionMode


def _launch(gpu: str, case: DraftCase) -> Launch:
    launch = launch_of(gpu, BuildCase(case.backend, case.mla, speculative="EAGLE"))
    arch = None if case.draft_mla is None else (Arch.MLA if case.draft_mla else Arch.MHA)
    mode = SpeculativeAttentionMode.DECODE if case.decode_mode else SpeculativeAttentionMode.PREFILL
    features = launch.features | ({ModelFeature.QSA_PROFILE} if case.qsa else set())
    return msgspec.structs.replace(
        launch, draft_backend=case.draft_backend, draft_arch=arch, spec_mode=mode,
        features=features,
    )  # fmt: skip


def _names(version: str, launch: Launch, case: DraftCase) -> str:
    """The backends the engine says the draft factory builds: decode (none for one step),
    then draft extend."""
    rules = RELEASES[version].build.draft
    assert rules is not None
    phases = (case.prefill or case.backend, case.backend)
    extend, decode = draft_factory_backends(rules, launch, phases)
    return f"{decode if case.steps > 1 else None},{extend}"


def _disagreements(version: str, grid: dict[tuple[str, DraftCase], BuildOutcome]) -> list[str]:
    rules = RELEASES[version].build
    assert rules.draft is not None
    found = []
    for (gpu, case), outcome in grid.items():
        # The harness runs the registry alone (the backend classes are stand-ins).
        phases = (case.prefill or case.backend, case.backend)
        launch = _launch(gpu, case)
        failure = build_after_startup(
            rules, launch, phases, "EAGLE", case.steps, constructors=False
        )
        predicted = None if failure is None else (failure.line, failure.function)
        said = None if outcome.built is not None else (outcome.raised_at, outcome.raised_in)
        if predicted != said:
            found.append(f"{gpu} {case}: sglang {said} {outcome}, engine {predicted}")
        elif said is None and outcome.names != _names(version, launch, case):
            names = _names(version, launch, case)
            found.append(f"{gpu} {case}: sglang builds {outcome.names}, engine {names}")
    return found


@pytest.mark.parametrize("version", releases.selected())
def test_engine_predicts_every_draft_build(version: str) -> None:
    require_source(version)
    grid = run_draft_grid(version)
    outcomes = collections.Counter(outcome.failed for outcome in grid.values())
    assert outcomes[True] > 0 and outcomes[False] > 0  # the grid both builds and fails
    kinds = {outcome.raised_in for outcome in grid.values() if outcome.failed}
    assert "_create_backend" in kinds and len(kinds) > 1  # no variant, and MLA only
    # The flag, the phases and the attention mode each move what the factory builds.
    names = {outcome.names for outcome in grid.values() if not outcome.failed}
    assert {"None,triton", "flashinfer,flashinfer", "triton,triton"} <= names
    # A QSA model's draft builds on QSA's own path where the release has one, on the map's
    # backend otherwise; `qsa` as a non-QSA model's draft backend is no draft variant.
    path = RELEASES[version].build.draft.model_path  # type: ignore[union-attr]
    qsa = {outcome.names for (_, case), outcome in grid.items() if case.qsa and outcome.built}
    assert (path is not None) == ({"qsa,qsa", "None,qsa"} <= qsa), qsa
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


def _function_source(source: str, name: str) -> tuple[int, list[str]]:
    """The first line number and the lines of function `name` in `source`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines = source.splitlines()[node.lineno - 1 : node.end_lineno]
            return node.lineno, lines
    raise AssertionError(f"no function {name}")


@pytest.mark.parametrize("version", releases.selected())
def test_the_qsa_draft_path_is_the_release_own(version: str) -> None:
    """`DraftRules.model_path` is the factory's branch, read back from the wheel: each
    `if self.qsa_profile is not None:` at its recorded line, returning its recorded builder;
    the EAGLE worker hands the factory `parse_qsa_profile` of the draft runner's config;
    and that parser keys on the config key the engine reads (`QSA_PROFILE_KEY`, in the
    text config). A release without the branch has no path."""
    root = require_source(version)
    rules = RELEASES[version].build.draft
    assert rules is not None
    source = (root / DRAFT_FILE).read_text(encoding="utf-8")
    branch = "if self.qsa_profile is not None:"
    path = rules.model_path
    if path is None:
        assert "qsa_profile" not in source
        return
    assert source.count(branch) == 2 and path.backend == "qsa"
    lines = source.splitlines()
    for function, where in (("create_decode_backend", path.decode),
                             ("create_draft_extend_backend", path.extend)):  # fmt: skip
        first, body = _function_source(source, function)
        assert first <= where.line < first + len(body), (function, where.line)
        assert lines[where.line - 1].strip() == branch
        assert lines[where.line].strip() == f"return self.{where.function}()"
    worker = (root / "sglang/srt/speculative/eagle_worker_v2.py").read_text(encoding="utf-8")
    assert "qsa_profile=parse_qsa_profile(self.draft_runner.model_config.hf_config)" in worker
    config = (root / (QSA_CONFIG.replace(".", "/") + ".py")).read_text(encoding="utf-8")
    _, parse = _function_source(config, "parse_qsa_profile")
    keyed = re.findall(r'getattr\(text_config, "(\w+)", None\) is not None', "\n".join(parse))
    assert keyed == [QSA_PROFILE_KEY]
    assert f'getattr(config, "{QSA_SCOPE}", config)' in config


def test_an_mha_target_on_trtllm_mla_fails_in_the_draft_where_the_release_says() -> None:
    # The decode builder raises first; with one step, the draft-extend one.
    case = BuildCase("trtllm_mla", speculative="EAGLE3")
    for version, steps, line in (("0.5.7", 3, 171), ("0.5.7", 1, 230), ("0.5.23", 3, 360)):
        rules = RELEASES[version].build.draft
        assert rules is not None
        failure = predict_draft(rules, launch_of("sm100", case), ("trtllm_mla",) * 2, steps)
        assert failure is not None and failure.draft and failure.check is BuildCheck.NEEDS_MLA
        assert failure.where == f"{DRAFT_FILE}:{line}"


# Where each release's draft runner chooses its backend (`predict_draft_worker` replays it):
# `ModelRunner._get_attention_backend` up to 0.5.15, then the attention-backend setup.
_RUNNER_CHOICE = (
    (
        "sglang/srt/model_executor/model_runner.py",
        "if self.is_draft_worker and draft_attn_backend:",
    ),
    (
        "sglang/srt/model_executor/model_runner_components/attention_backend_setup.py",
        "if is_draft_worker and draft_attn_backend:",
    ),
)


@pytest.mark.parametrize("version", releases.selected())
def test_the_draft_runner_builds_the_flag_alone_else_the_target_backends(version: str) -> None:
    """The harness builds the draft runner's backends as the release chooses them: the flag
    alone where it is set (the one branch on it), else the target's pair."""
    root = require_source(version)
    found = [
        (file, line)
        for file, line in _RUNNER_CHOICE
        if (root / file).is_file() and line in (root / file).read_text(encoding="utf-8")
    ]
    assert len(found) == 1, found
    file, line = found[0]
    source = (root / file).read_text(encoding="utf-8")
    branch = source.split(line, 1)[1].split("\n\n", 1)[0]
    assert "draft_attn_backend" in branch and "return" in branch


def test_an_mha_draft_of_an_mla_target_fails_in_the_draft_runner_where_the_release_says() -> None:
    # The draft runner's registry refuses trtllm_mla for a model without MLA before the
    # factory is reached; with the flag on triton the draft builds.
    case = BuildCase("trtllm_mla", mla=True, speculative="EAGLE3")
    launch = msgspec.structs.replace(launch_of("sm100", case), draft_arch=Arch.MHA)
    for version, line in (("0.5.7", 51), ("0.5.11", 59), ("0.5.23", 97)):
        rules = RELEASES[version].build
        failure = build_after_startup(rules, launch, ("trtllm_mla",) * 2, "EAGLE3", 3)
        assert failure is not None and failure.draft and failure.check is BuildCheck.NEEDS_MLA
        assert failure.where.endswith(f"attention_registry.py:{line}")
        own = msgspec.structs.replace(launch, draft_backend="triton")
        assert build_after_startup(rules, own, ("trtllm_mla",) * 2, "EAGLE3", 3) is None
