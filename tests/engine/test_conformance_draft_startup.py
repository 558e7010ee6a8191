"""The engine replays what each release's start-up makes of the draft's backend flag.

The harness (`draft_rows` in tools/conformance/build.py) runs each release's own argument parser
and start-up over launches with and without `--speculative-draft-attention-backend` (an MHA
and an MLA model, on H200 and B200, under SGLang's choice of target backend, triton,
trtllm_mha and the native NVFP4 cache on trtllm_mha). The engine's replay
(`compat.engine.startup.replay`) must agree on whether SGLang refuses, and, where it starts,
on the draft's backend it leaves (a deprecated name renamed; the native NVFP4 cache's own).
A name the release does not know as a backend is the one difference, by design: SGLang
starts and fails building the draft, the guard calls it invalid input.
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.build import DRAFT_FLAG, draft_rows
from conformance.compare import config_kwargs

from compat import AttentionConfig, InvalidConfigError
from compat.engine.startup.replay import replay


def _engine(row: dict[str, Any]) -> tuple[bool, str | None]:
    """(refused, the draft's backend) as the engine replays the row's launch."""
    argv = list(row["argv"])
    draft = None
    if DRAFT_FLAG in argv:
        at = argv.index(DRAFT_FLAG)
        draft = argv[at + 1]
        del argv[at : at + 2]
    try:
        config = AttentionConfig(
            **config_kwargs({**row, "argv": argv}), speculative_draft_attention_backend=draft
        )
    except InvalidConfigError:
        return True, None
    startup = replay(config.parsed, config.parsed.release)
    return startup.refused, None if startup.refused else startup.fields.draft_backend


@pytest.mark.parametrize("version", releases.selected())
def test_engine_replays_the_draft_flag_at_start_up(version: str) -> None:
    require_source(version)
    rows = draft_rows(version)
    assert any(row["error"] is None for row in rows) and any(row["error"] for row in rows)
    found = []
    for row in rows:
        said = (row["error"] is not None, row.get("draft"))
        predicted = _engine(row)
        if not row["known"]:
            # A name the release does not know as a backend: SGLang's parser takes it (the
            # flag is free text) and the draft's build finds no such backend; the guard
            # refuses it as a typo, naming the releases that know it (invalid input).
            assert predicted == (True, None), row
            assert said in {(True, None), (False, row["argv"][-1])}, row
            continue
        if predicted != said:
            found.append(f"{row['gpu']} {row['model']} {row['argv']}: sglang {said} "
                         f"({row['error']}), engine {predicted}")  # fmt: skip
    assert not found, f"sglang {version}: {len(found)} of {len(rows)} disagree:\n" + "\n".join(
        found[:20]
    )
