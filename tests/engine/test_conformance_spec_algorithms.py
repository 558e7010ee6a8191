"""The product against SGLang's start-up with every speculative algorithm the release accepts.

The grid (`test_conformance.py`) speculates with EAGLE and NEXTN only. Here a sample of its
EAGLE launches on a Hopper and a Blackwell machine runs again with each other algorithm the
wheel accepts (`tools/spec_algorithms.py`), a draft model given (the target itself) where the
algorithm needs one. The product is asked the same launch, less the draft-only flags it does
not read.

Where the replay runs the algorithm's handler, the product must agree on every launch.
Where it does not (`startup-spec-not-modelled`), every answer must say so, and where SGLang
starts the backends and page size must still agree (those handlers set draft parameters,
not the target's backends); the refusals the handlers add (a missing draft model, a block
size) are counted and printed, not predicted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import spec_algorithms
from conformance import releases
from conformance.availability import require_source
from conformance.compare import config_kwargs, disagreements, report
from conformance.grid import grid
from conformance.harness import open_runtime
from spec_algorithms import accepted_in_subprocess
from wheel_facts import cached_facts

from compat import AttentionConfig, check
from compat.engine.startup.spec import modelled_algorithms
from compat.releases import RELEASES

GPUS = ("H200", "B200")
GRID_ALGORITHMS = ("EAGLE", "NEXTN")
"""What the grid itself runs."""
STRIDE = 15
"""One grid EAGLE launch (with its draft tokens given) in this many, per machine."""
SPEC = "--speculative-algorithm"
NOT_MODELLED = "startup-spec-not-modelled"


UNRUN = (("DFLASH", "get_dflash_layer_types"), ("DSPARK", "dspark_config"))
"""The launches the harness cannot run, by the helper they need from the release beyond
its stand-ins: from 0.5.17 DFLASH reads its draft's layer types (`dflash_utils`, over
torch.nn) when the draft backend would be trtllm_mha, and from 0.5.19 DSPARK reads its
draft checkpoint's config (`dspark_config`) whatever the flags say."""


def _draft_flags(algorithm: str, argv: tuple[str, ...], draft_path: str) -> tuple[str, ...]:
    """The flags SGLang needs beyond the product's: a draft model (NGRAM has none; UNO
    refuses one, reusing the target, and needs a LoRA adapter the harness has not), and for
    DSPARK its block size (gamma = draft tokens - 1)."""
    if algorithm in ("NGRAM", "UNO"):
        return ()
    flags: tuple[str, ...] = ("--speculative-draft-model-path", draft_path)
    if algorithm == "DSPARK":
        tokens = int(argv[argv.index("--speculative-num-draft-tokens") + 1])
        flags += ("--speculative-dspark-block-size", str(tokens - 1))
    return flags


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """SGLang's outcome of each launch, kept beside the wheels under a key of the wheel,
    the harness, this module and the tool that reads the algorithms (`cached_facts`)."""
    version: str = request.param
    require_source(version)
    reads = (Path(__file__).resolve(), Path(spec_algorithms.__file__).resolve())
    found: list[dict[str, Any]] = cached_facts(
        "spec-algorithm-rows", version, reads, lambda: _run_rows(version)
    )
    return found


def _run_rows(version: str) -> list[dict[str, Any]]:
    algorithms = [
        name for name in accepted_in_subprocess(version)["accepted"] if name not in GRID_ALGORITHMS
    ]
    table: list[dict[str, Any]] = []
    for gpu in GPUS:
        eagle = [
            launch
            for launch in grid(version)
            if launch.gpu == gpu
            and "EAGLE" in launch.argv
            and "--speculative-num-draft-tokens" in launch.argv
        ][::STRIDE]
        with open_runtime(version, gpu) as runtime:
            for algorithm in algorithms:
                for launch in eagle:
                    argv = tuple(algorithm if a == "EAGLE" else a for a in launch.argv)
                    draft = runtime._runtime.model_paths[launch.model]
                    ran = (*argv, *_draft_flags(algorithm, argv, draft))
                    row = {
                        "version": version, "gpu": gpu, "model": launch.model,
                        "algorithm": algorithm, "argv": list(argv), "ran": list(ran),
                    }  # fmt: skip
                    try:
                        row["outcome"] = runtime.outcome(launch.model, ran).to_json()
                    except Exception as error:  # what SGLang would do is unknown: not compared
                        row["unrun"] = f"{type(error).__name__}: {error}"
                    table.append(row)
    return table


def _split(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    known = set(modelled_algorithms(RELEASES[rows[0]["version"]]))
    rows = [row for row in rows if "unrun" not in row]
    return (
        [row for row in rows if row["algorithm"] in known],
        [row for row in rows if row["algorithm"] not in known],
    )


def test_the_harness_runs_every_launch_but_the_known_gaps(rows: list[dict[str, Any]]) -> None:
    unrun = [row for row in rows if "unrun" in row]
    strays = [
        f"{row['algorithm']} {' '.join(row['ran'])}: {row['unrun'][:200]}"
        for row in unrun
        if not any(row["algorithm"] == name and needs in row["unrun"] for name, needs in UNRUN)
    ]
    assert not strays, "\n".join(strays)
    print(f"sglang {rows[0]['version']}: {len(unrun)} of {len(rows)} launches not run")


def test_the_product_predicts_every_launch_of_a_modelled_algorithm(
    rows: list[dict[str, Any]],
) -> None:
    modelled, _ = _split(rows)
    assert modelled, "no modelled algorithm beyond the grid's"
    found = disagreements(modelled)
    if found:
        pytest.fail(f"sglang {rows[0]['version']}: " + report(len(modelled), found), pytrace=False)


def test_an_algorithm_not_modelled_is_said_and_its_started_launches_agree(
    rows: list[dict[str, Any]],
) -> None:
    version = rows[0]["version"]
    _, unmodelled = _split(rows)
    if not unmodelled:
        return  # 0.5.7 to 0.5.10 accept only algorithms the replay runs
    # The launches SGLang's parser takes (a value it rejects is the product's input error).
    parsed = [r for r in unmodelled if not (r["outcome"]["error"] or "").startswith("argparse")]
    assert {r["algorithm"] for r in parsed} == {r["algorithm"] for r in unmodelled}
    for row in parsed[:: max(1, len(parsed) // 60)]:
        said = [f.rule for f in check(AttentionConfig(**config_kwargs(row))).findings]
        assert NOT_MODELLED in said, f"{row['algorithm']} {row['argv']}"
    started = [row for row in unmodelled if not row["outcome"]["refused"]]
    refused = len(unmodelled) - len(started)
    by_algorithm = {
        name: sum(not r["outcome"]["refused"] for r in unmodelled if r["algorithm"] == name)
        for name in sorted({r["algorithm"] for r in unmodelled})
    }
    print(f"sglang {version}: not modelled {len(unmodelled)} launches, SGLang starts "
          f"{len(started)} ({by_algorithm}), refuses {refused}")  # fmt: skip
    found = disagreements(started)
    if found:
        pytest.fail(f"sglang {version}: " + report(len(started), found), pytrace=False)
