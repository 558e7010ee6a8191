"""SGLang 0.5.11: intel_xpu's MLA and page rules; `--speculative-algorithm DFLASH`."""

from __future__ import annotations

from compat.claim.baseline import YES
from compat.claim.columns import ColumnId
from compat.engine.rules import RUNS_DECODE
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import CellChange, Change, DocChange, Release, plus
from compat.releases.shared import COMPAT, code, intel_xpu_snaps
from compat.vocab.terms import Arch

# From 0.5.11 the page is the Mintlify one: every later table edit went only there.
MINTLIFY_PAGE = "docs_new/docs/advanced_features/attention_backend.mdx"

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
    doc_changes=(
        DocChange("FA4 serves sliding-window models (MHA)",
                  commit("c74b345e3a40b7a18bcd8e6fab0e8be9254c1917", 23793, "2026-04-26",
                         "Update FA4 support SWA"),
                  page=tagged_page("0.5.11", MINTLIFY_PAGE),
                  cells=(CellChange(Arch.MHA, "fa4", ColumnId.SLIDING_WINDOW, YES),)),
    ),
)  # fmt: skip
