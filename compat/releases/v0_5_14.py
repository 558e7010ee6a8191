"""SGLang 0.5.14: the attention start-up rules of 0.5.13; the page gains tokenspeed_mla's row."""

from __future__ import annotations

from compat.claim.baseline import NO, YES, native, row
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import DocChange, NewRow, Release
from compat.vocab.terms import Arch

RELEASE = Release(
    "0.5.14",
    doc_changes=(
        DocChange("tokenspeed_mla's row is on the page now; its cells are those read from the "
                  "code in 0.5.12",
                  commit("99c18cceecece3d0705fce113774e0bfc5d12ba8", 28674, "2026-06-22",
                         "Sync server arguments and environment variables + update various "
                         "documentation"),
                  page=tagged_page("0.5.14", "docs_new/docs/advanced_features/attention_backend.mdx"),
                  rows=(NewRow(Arch.MLA, row("tokenspeed_mla", "TokenSpeed MLA (Blackwell)",
                        native_page_sizes=native(32, 64, fixed=True), fp8_kv=YES, fp4_kv=NO,
                        chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=NO)),)),
    ),
)  # fmt: skip
