"""SGLang 0.5.8: fa4 runs decode too; fa3 is Hopper's MHA default for every architecture."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import YES
from compat.claim.columns import ColumnId
from compat.engine.model_rules import MachinePage
from compat.engine.rules import SpecAutoCase
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import CellChange, Change, DocChange, Release
from compat.releases.families import ON_NPU, ON_ROCM, changed, extended
from compat.releases.shared import COMPAT, MODEL_ADJUSTMENTS, MTP_PARAMS, code, defaults
from compat.vocab.terms import Arch

SPHINX_PAGE = "docs/advanced_features/attention_backend.md"
# Two cells changed on the page after PR #14467 and before the v0.5.7 tag; 0.5.7 keeps the
# PR #14467 page it restates, so they are recorded here, with the tag that first held them.
PR_14989 = commit("171b442ad3", 14989, "2025-12-12", "FlashMLA FP4 KV Cache: ❌ → ✅")
PR_12596 = commit("349ce2dd19", 12596, "2025-12-28", "Torch Native (SDPA) FP8 KV Cache: ❌ → ✅")


RELEASE = Release(
    "0.5.8",
    changes=(
        Change("an asked-for extra_buffer Mamba cache is no longer checked for Qwen3-Next: its "
               "checks moved into the GLM-4 MoE branch",
               code("0.5.8", MODEL_ADJUSTMENTS),
               {"hybrid_cache": lambda before: replace(before, extra_buffer_checked=False)}),
        Change("fa4 may serve the decode phase (and `--attention-backend fa4`)",
               code("0.5.8", COMPAT), {"prefill_only": ()}),
        Change("the Hopper MHA default is fa3 for every model architecture",
               code("0.5.8", COMPAT), {"defaults": defaults(None)}),
        Change("GPT-OSS also runs ascend", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": extended("gpt-oss-backends", allowed=("ascend",))}),
        Change("DeepSeek DSA runs page size 1 on ROCm, and turns DP attention on only for its "
               "prefill context parallelism", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": changed("dsa-backend", forces_dp_attention=False, pages=(
                   MachinePage(None, ON_NPU), MachinePage(1, ON_ROCM), MachinePage(64)))}),
        Change("Nemotron-H: speculative decoding turns the radix cache off, and with it the "
               "SM100 default", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": changed("nemotron-h-backend", default_without_speculation=True)}),
        Change("a decode server with DP above 1 no longer needs the round-robin balance",
               code("0.5.8", "ServerArgs._handle_pd_disaggregation"),
               {"decode_dp_needs_round_robin": False}),
        Change("automatic speculative parameters: (3, 1, 4) for every other architecture",
               code("0.5.8", "auto_choose_speculative_params"),
               {"spec_auto_params": lambda before: (*before[:-1], SpecAutoCase(MTP_PARAMS))}),
    ),
    doc_changes=(
        DocChange("FlashMLA reads an FP4 KV cache (MLA)", PR_14989, tagged_in="0.5.7",
                  cells=(CellChange(Arch.MLA, "flashmla", ColumnId.FP4_KV, YES),)),
        DocChange("Torch Native reads an FP8 KV cache (MHA)", PR_12596, tagged_in="0.5.7",
                  cells=(CellChange(Arch.MHA, "torch_native", ColumnId.FP8_KV, YES),)),
        DocChange("AITER reads an FP8 KV cache (MHA)",
                  commit("eb38d6441375322878a428761e1d298cbe98a73b", 17428, "2026-01-20",
                         "Explain CUDA attention backend choices and aiter FP8 KV cache support"),
                  page=tagged_page("0.5.8", SPHINX_PAGE),
                  cells=(CellChange(Arch.MHA, "aiter", ColumnId.FP8_KV, YES),)),
    ),
)  # fmt: skip
