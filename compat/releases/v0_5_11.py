"""SGLang 0.5.11: intel_xpu's MLA and page rules; `--speculative-algorithm DFLASH`."""

from __future__ import annotations

from compat.engine.rules import RUNS_DECODE
from compat.releases.entry import Change, Release, plus
from compat.releases.shared import COMPAT, code, intel_xpu_snaps

RELEASE = Release(
    "0.5.11",
    changes=(
        Change("intel_xpu cannot run the prefill phase of an MLA model; its page sizes follow "
               "the decode phase: 64 or 128 for MHA, 16 to 128 for MLA", code("0.5.11", COMPAT),
               {"mla_prefill_refused": ("intel_xpu",),
                "page_snaps": intel_xpu_snaps(frozenset({RUNS_DECODE}))}),
        Change("`--speculative-algorithm DFLASH` is accepted",
               code("0.5.11", "ServerArgs.add_cli_args"),
               {"algorithm_choices": plus("DFLASH")}),
    ),
)  # fmt: skip
