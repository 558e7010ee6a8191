"""SGLang 0.5.10: trtllm_mha's GPU check per phase; fa4's page size 128 only on SM100."""

from __future__ import annotations

from dataclasses import replace

from compat.engine.rules import RUNS_DECODE, RUNS_PREFILL, BackendGate
from compat.releases.entry import Change, Release
from compat.releases.shared import COMPAT, FA4_SNAP, SM100, TRTLLM_MHA_DECODE_GPUS, code, snap

RELEASE = Release(
    "0.5.10",
    changes=(
        Change("trtllm_mha: the prefill phase needs SM100; the decode phase SM90, SM100 or SM120",
               code("0.5.10", COMPAT),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", frozenset({RUNS_PREFILL}), SM100),
                   BackendGate("trtllm_mha", frozenset({RUNS_DECODE}), TRTLLM_MHA_DECODE_GPUS))}),
        Change("fa4 forces page size 128 only on SM100", code("0.5.10", COMPAT),
               {"page_snaps": snap("fa4", replace(FA4_SNAP, gate=SM100))}),
    ),
)  # fmt: skip
