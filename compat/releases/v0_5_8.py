"""SGLang 0.5.8: fa4 runs decode too; fa3 is Hopper's MHA default for every architecture."""

from __future__ import annotations

from compat.claim.baseline import NO, YES, native, row
from compat.claim.columns import ColumnId
from compat.engine.model_rules import MachinePage
from compat.engine.rules import SpecAutoCase
from compat.releases.doc import backed, commit, tagged_page, wheel
from compat.releases.entry import CellChange, Change, DocChange, NewRow, Release
from compat.releases.families import ON_NPU, ON_ROCM, changed, extended
from compat.releases.shared import COMPAT, MODEL_ADJUSTMENTS, MTP_PARAMS, code, defaults
from compat.vocab.terms import Arch

SPHINX_PAGE = "docs/advanced_features/attention_backend.md"
# Two cells changed on the page after PR #14467 and before the v0.5.7 tag; 0.5.7 keeps the
# PR #14467 page it restates, so they are recorded here, with the tag that first held them.
PR_14989 = commit("171b442ad3", 14989, "2025-12-12", "FlashMLA FP4 KV Cache: ❌ → ✅")
PR_12596 = commit("349ce2dd19", 12596, "2025-12-28", "Torch Native (SDPA) FP8 KV Cache: ❌ → ✅")

_ARGS = "sglang/srt/server_args.py"
_DSA = "ServerArgs._handle_model_specific_adjustments"
NSA_ROW = NewRow(Arch.MLA, row("nsa", "NSA (native sparse attention)",
    native_page_sizes=backed(native(64, fixed=True), wheel("0.5.8", _ARGS, _DSA, 1158,
        "for DSA models on CUDA start-up sets page size 64 whatever the user gave")),
    fp8_kv=backed(YES, wheel("0.5.8", _ARGS, _DSA, 1166,
        "auto becomes fp8_e4m3 on compute capability 10 and up (bfloat16 below); an assert "
        "admits bfloat16 or fp8_e4m3 only")),
    fp4_kv=backed(NO, wheel("0.5.8", _ARGS, _DSA, 1175,
        "the same assert refuses an FP4 KV cache; nsa is in none of the KV4 lists")),
    chunked_prefix_cache=backed(NO, wheel("0.5.8", "sglang/srt/model_executor/model_runner.py",
        "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS", 202,
        "nsa is not in the list, so the model runner turns chunked prefix cache off")),
    spec_topk_1=backed(YES, wheel("0.5.8", "sglang/srt/speculative/draft_utils.py",
        "DraftBackendFactory.create_decode_backend", 56,
        "the EAGLE draft factory has nsa draft-decode and draft-extend backends")),
    spec_topk_gt1=backed(NO, wheel("0.5.8", _ARGS, "ServerArgs._handle_speculative_decoding", 2223,
        "topk > 1 with page size > 1 is refused unless --attention-backend is flashinfer or "
        "fa3; nsa runs page size 64")),
))

RELEASE = Release(
    "0.5.8",
    changes=(
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
        DocChange("nsa gets an MLA row, read from the code (the page has none)",
                  wheel("0.5.8", "sglang/srt/layers/attention/attention_registry.py",
                        "create_nsa_backend", 80, "the nsa backend is registered"),
                  rows=(NSA_ROW,)),
    ),
)  # fmt: skip
