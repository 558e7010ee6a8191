"""enforce() on SGLang 0.5.7's own ServerArgs objects agrees with SGLang's start-up.

Before the post-init (the raw flags), `enforce(..., parity=True)` raises exactly when
SGLang's post-init raises; after it (the resolved fields SGLang hands its engine), it never
raises for a launch SGLang accepted and reads back the backends and page size SGLang chose.
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance.compare import model_inputs
from conformance.fake_torch import GPU_PROFILES
from conformance.grid import grid
from conformance.harness import open_runtime

from compat import IncompatibleConfigError, enforce

VERSION = "0.5.7"
SAMPLE_EVERY = 7  # about 2,700 launches of the grid: all of it costs time, not coverage


def _machine(gpu: str) -> dict[str, Any]:
    profile = GPU_PROFILES[gpu]
    return {
        "platform": profile.platform,
        "compute_capability": profile.capability if profile.platform == "cuda" else None,
        "sglang_version": VERSION,
    }


@pytest.mark.parametrize("gpu", list(GPU_PROFILES))
def test_enforce_with_parity_raises_exactly_when_sglang_refuses(gpu: str) -> None:
    launches = [launch for launch in grid(VERSION) if launch.gpu == gpu][::SAMPLE_EVERY]
    assert launches
    wrong: list[str] = []
    with open_runtime(VERSION, gpu) as runtime:
        for launch in launches:
            outcome = runtime.outcome(launch.model, launch.argv)
            model = model_inputs(launch.model)
            raw = runtime.raw_server_args(launch.model, launch.argv)
            try:
                enforce(raw, parity=True, **model, **_machine(gpu))
                raised = False
            except IncompatibleConfigError:
                raised = True
            if raised != outcome.refused:
                wrong.append(
                    f"raw {launch}: SGLang refused={outcome.refused}, enforce raised={raised}"
                )
            if outcome.refused:
                continue
            resolved = runtime.server_args(launch.model, launch.argv)
            report = enforce(resolved, parity=True, **_machine(gpu))
            got = (report.resolved.prefill_backend, report.resolved.decode_backend)
            want = (outcome.prefill_backend, outcome.decode_backend)
            if got != want or report.resolved.page_size != outcome.page_size:
                wrong.append(
                    f"resolved {launch}: SGLang {want} page {outcome.page_size}, "
                    f"enforce read {got} page {report.resolved.page_size}"
                )
    assert not wrong, f"{len(wrong)} of {len(launches)} launches disagree:\n" + "\n".join(
        wrong[:40]
    )
