"""SGLang 0.5.20: cutlass_mla and dual_chunk_flash_attn removed; qsa new; intel_xpu prefill."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, NO, YES, native, row
from compat.engine.model_rules import MachinePage
from compat.engine.rules import EITHER_PHASE
from compat.releases.doc import LATER_RELEASES, backed, not_stated, unread_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, minus, plus
from compat.releases.families import (
    ON_CPU,
    ON_CUDA,
    ON_NPU,
    ON_ROCM,
    ON_ROCM_MXFP,
    ON_XPU,
    changed,
    extended,
    with_family,
)
from compat.releases.shared import (
    ATTENTION_HOOK,
    CHOICES,
    code,
    intel_xpu_snaps,
    kv4_without,
    snap,
)
from compat.vocab.terms import Arch, ModelFeature

PAGE = unread_page("0.5.20")

QSA_ROW = NewRow(Arch.MHA, row("qsa", "QSA (Qwen sparse attention)",
    native_page_sizes=backed(native(64, fixed=True), wheel("0.5.20", "sglang/srt/arg_groups/model_overrides/qwen4_exp.py", "_qwen4_exp_overrides", 84,
                  "for QSA-profile models the model override sets page size 64 (compressed slot addressing needs page-aligned pages)")),
    fp8_kv=backed(YES, wheel("0.5.20", "sglang/srt/layers/attention/qsa/sparse_attn.py", "_compact_kv", 428,
                  "FP8 pool entries are cast to the query dtype on gather; the backend writes the pool without per-tensor k/v scales")),
    fp4_kv=backed(NO, wheel("0.5.20", "sglang/srt/arg_groups/kv_cache_hook.py", "handle_kv4_compatibility", 97,
                  "qsa is not in the KV4 MHA lists")),
    spec_topk_1=backed(YES, wheel("0.5.20", "sglang/srt/layers/attention/qwen_sparse_attn_backend.py", "QwenSparseAttnBackend._require_chain_speculation", 233,
                  "target-verify is implemented for topk 1 (draft tokens at most the compress ratio); also sglang 0.5.20 wheel, sglang/srt/speculative/draft_utils.py, DraftBackendFactory._create_qwen_qsa_decode_backend (line 188): the EAGLE draft factory builds QSA draft-decode and draft-extend backends for QSA-profile models")),
    spec_topk_gt1=backed(NO, wheel("0.5.20", "sglang/srt/layers/attention/qwen_sparse_attn_backend.py", "QwenSparseAttnBackend._require_chain_speculation", 233,
                  "topk other than 1 raises NotImplementedError")),
    sliding_window=not_stated(wheel("0.5.20", "sglang/srt/layers/attention/qwen_sparse_attn_backend.py", "QwenSparseAttnBackend", 170,
                  "no sliding-window handling or refusal found in the backend"),
              "a model-specific backend; the code neither implements nor refuses sliding-window layers"),
    multimodal=not_stated(wheel("0.5.20", "sglang/srt/arg_groups/fields/mm.py", "field mm_attention_backend (Arg choices)", 38,
                  "no qsa-family entry in the --mm-attention-backend choices; also sglang 0.5.20 wheel, sglang/srt/configs/model_config.py, multimodal_model_archs (line 2150): yet Qwen4-Exp, the model QSA serves, is listed among the multimodal architectures"),
              "QSA serves a multimodal model whose encoder attention is chosen separately by --mm-attention-backend; with no QSA-family mm backend the family-based column does not settle it"),
))

RELEASE = Release(
    "0.5.20",
    changes=(
        Change("the DeepSeek family's branch also takes GLM-5-Next and HY-V4 (and its NextN draft)",
               code("0.5.20", "_DEEPSEEK_FAMILY_ARCHS (lines 27-29)",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v2.py"),
               {"model_rules": with_family("Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
                                           "HYV4ForCausalLMNextN")}),
        Change("Gemma 4 also runs aiter",
               code("0.5.20", "handle_model_specific_adjustments (line 546)",
                    "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": extended("gemma4-backend", allowed=("aiter",))}),
        Change("cutlass_mla and dual_chunk_flash_attn are removed; qsa is new",
               code("0.5.20", "ATTENTION_BACKEND_CHOICES", CHOICES),
               {"backend_choices": lambda before: plus("qsa")(
                   minus("cutlass_mla", "dual_chunk_flash_attn")(before)),
                "page_snaps": snap("cutlass_mla", None),
                "kv4": kv4_without("cutlass_mla"),
                "dual_chunk_backend": None}),
        Change("intel_xpu may run the prefill phase of an MLA model; its page sizes follow "
               "either phase", code("0.5.20", "handle_attention_backend_compatibility",
                                    ATTENTION_HOOK),
               {"mla_prefill_refused": (), "page_snaps": intel_xpu_snaps(EITHER_PHASE)}),
        Change("DeepSeek DSA runs page size 128 on XPU",
               code("0.5.20", "_deepseek_family_overrides",
                    "sglang/srt/arg_groups/model_overrides/deepseek_v2.py"),
               {"model_rules": changed("dsa-backend", pages=(
                   MachinePage(None, ON_NPU), MachinePage(128, ON_XPU), MachinePage(1, ON_ROCM, unless_preshuffle=True),
                   MachinePage(64)))}),
        Change("mxfp4 quantization is registered on XPU too",
               code("0.5.20", "QUANTIZATION_METHODS", "sglang/srt/layers/quantization/__init__.py"),
               {"quantization": lambda before: replace(
                   before, gated={"mxfp4": (ON_CPU, ON_CUDA, ON_ROCM_MXFP, ON_XPU)})}),
        Change("deterministic inference counts GLM-5-Next as a DeepSeek-type model",
               code("0.5.20", "handle_deterministic_inference", ATTENTION_HOOK),
               {"deterministic": lambda before: replace(
                   before, deepseek_architectures=before.deepseek_architectures
                   | {"Glm5NextForConditionalGeneration"})}),
        Change("`--speculative-algorithm UNO` is accepted",
               wheel("0.5.20", "sglang/srt/speculative/spec_info.py", "SpeculativeAlgorithm", 41,
                     "UNO is a member, so `from_string` takes it"),
               {"algorithm_choices": plus("UNO")}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables is known (its tag could not be read)", PAGE,
                  page=PAGE),
        DocChange("cutlass_mla and dual_chunk_flash_attn leave, with their rows",
                  wheel("0.5.20", "sglang/srt/arg_groups/choices.py", "ATTENTION_BACKEND_CHOICES", 74,
                        "neither is a choice any more, and the attention registry no longer "
                        "registers them"),
                  removed=("cutlass_mla", "dual_chunk_flash_attn")),
        DocChange("new backend qsa (MHA), its row read from the code",
                  wheel("0.5.20", "sglang/srt/layers/attention/attention_registry.py",
                        "attn_backend_wrapper", 460,
                        "QSA is the full-attention side of the hybrid wrapper for Qwen4-Exp "
                        "models with an indexer, which are not MLA"),
                  backends=(
            Backend("qsa", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    requires_features=frozenset({ModelFeature.QSA_PROFILE}),
                    note="Qwen sparse attention, for Qwen4-Exp models with an indexer.",
                    evidence=LATER_RELEASES),
        ), rows=(QSA_ROW,)),
    ),
)  # fmt: skip
