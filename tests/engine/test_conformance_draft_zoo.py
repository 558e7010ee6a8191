"""The product predicts the draft's build on every speculative launch of the model zoo.

The zoo's launches (tools/conformance/zoo.py) that SGLang starts with a draft model (EAGLE,
EAGLE3, NEXTN, STANDALONE) run, on SGLang's side, through the build harness
(`run_draft_cases` in tools/conformance/build.py) with what SGLang's own start-up resolved
(the prefill and decode backends, the steps, the attention mode) on the zoo's machine: the
target's registry build, the draft runner's, then the release's own `DraftBackendFactory`;
for an MLA model, again with an MHA draft (an EAGLE3 draft). The product reads the same
launch as `compat check` does (the command, the model's config.json, `--gpu`; the MHA draft
as `--draft-attention-arch mha`) and must agree: no build finding where SGLang builds, and
where it fails, the same file line and function.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_zoo
from conformance.build import BuildOutcome, DraftCase, run_draft_cases
from conformance.compare import zoo_config
from conformance.dump import rows as zoo_rows
from conformance.fake_torch import GPU_PROFILES

from compat import check
from compat.engine.build import DRAFT_ALGORITHMS, BuildCheck
from compat.guard.build_words import is_build_finding
from compat.vocab.terms import Arch, ModelFeature

_Case = tuple[dict[str, Any], DraftCase, Any]


@functools.cache
def _zoo(version: str) -> list[dict[str, Any]]:
    require_zoo(version)
    return zoo_rows(version, workers=2, cache=True, zoo=True)


def _cases(version: str) -> list[_Case]:
    """(row, SGLang's draft case, the product's config) for each speculative launch SGLang
    starts, and for an MLA model the same with an MHA draft."""
    found: list[_Case] = []
    for row in _zoo(version):
        argv, outcome = row["argv"], row["outcome"]
        if outcome["refused"] or "--speculative-algorithm" not in argv:
            continue
        algorithm = argv[argv.index("--speculative-algorithm") + 1].upper()
        if algorithm not in DRAFT_ALGORITHMS:
            continue
        config = zoo_config(row)
        parsed = config.parsed
        gdn = parsed.release.build.hybrid_gdn
        prefill, decode = outcome["prefill_backend"], outcome["decode_backend"]
        case = DraftCase(
            decode,
            parsed.arch is Arch.MLA,
            outcome["num_steps"] or 1,
            prefill=prefill if prefill != decode else None,
            decode_mode=outcome["speculative_attention_mode"] == "decode",
            hybrid_gdn=gdn is not None and parsed.model_type in gdn.model_types,
            encoder_decoder=ModelFeature.ENCODER_DECODER in parsed.features,
        )
        found.append((row, case, config))
        if case.mla:
            mha = dataclasses.replace(config, draft_attention_arch="mha")
            found.append((row, dataclasses.replace(case, draft_mla=False), mha))
    return found


def _sglang(version: str, cases: list[_Case]) -> dict[tuple[str, DraftCase], BuildOutcome]:
    by_gpu: dict[str, list[DraftCase]] = defaultdict(list)
    for row, case, _ in cases:
        by_gpu[row["gpu"]].append(case)
    return {
        (gpu, case): outcome
        for gpu, wanted in by_gpu.items()
        for case, outcome in run_draft_cases(version, GPU_PROFILES[gpu], wanted).items()
    }


@pytest.mark.parametrize("version", releases.selected())
def test_product_predicts_every_zoo_draft_build(version: str) -> None:
    cases = _cases(version)
    sglang = _sglang(version, cases)
    assert len(cases) >= 100 and any(outcome.failed for outcome in sglang.values())
    found = []
    for row, case, config in cases:
        outcome = sglang[row["gpu"], case]
        report = check(config)
        if report.refused_at_startup:
            found.append(f"{row['gpu']} {row['model']} {row['argv']}: the product refuses")
            continue
        # The harness builds the backends, not the model: the vision encoder's checks of
        # --mm-attention-backend (`build-sub-backend`, raised as the model is built) are
        # compared by the zoo's build conformance, not here.
        builds = [
            f.raised_at
            for f in report.errors
            if is_build_finding(f) and f.rule != BuildCheck.SUB_BACKEND.rule
        ]
        said = [] if not outcome.failed else [f"{outcome.raised_in}"]
        predicted = [where.rsplit("(", 1)[-1].rstrip(")") for where in builds]
        lines = [where.split(" ", 1)[0].rsplit(":", 1)[-1] for where in builds]
        if predicted != said or (said and lines != [str(outcome.raised_at)]):
            found.append(
                f"{row['gpu']} {row['model']} {row['argv']} {case}: sglang {outcome}, "
                f"product {builds}"
            )
    assert not found, f"sglang {version} zoo: {len(found)} of {len(cases)} disagree:\n" + "\n".join(
        found[:20]
    )
