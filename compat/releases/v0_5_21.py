"""SGLang 0.5.21: fp4_e2m1 removed; trtllm_mla loses FP4; NVFP4 picks its backends."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import MATRIX
from compat.releases.doc import unread_page, wheel
from compat.releases.entry import Change, DocChange, Release, minus
from compat.releases.families import DIFFUSION_GEMMA, IQUEST_Q1, added
from compat.releases.preshuffle import PRESHUFFLE_0_5_21
from compat.releases.shared import KV_HOOK, OVERRIDES, code
from compat.vocab.terms import KvDtype

PAGE = unread_page("0.5.21")
TRTLLM_MLA = MATRIX.backend("trtllm_mla")

RELEASE = Release(
    "0.5.21",
    changes=(
        Change("aiter's preshuffle switch loses its SGLANG_NSA_HIP_DISABLE_PRESHUFFLE alias",
               code("0.5.21", PRESHUFFLE_0_5_21.source.partition(" ")[2],
                    PRESHUFFLE_0_5_21.source.partition(":")[0]),
               {"preshuffle": PRESHUFFLE_0_5_21}),
        Change("IQuest-Q1 runs fa3 only: any other backend flag refuses; with none, fa3",
               code("0.5.21", "_iquest_q1_overrides (lines 11-46)",
                    "sglang/srt/arg_groups/model_overrides/iquest_q1.py"),
               {"model_rules": added(IQUEST_Q1)}),
        Change("DiffusionGemmaForBlockDiffusion takes Gemma 4's override: triton while "
               "`--attention-backend` is unset (no list)",
               code("0.5.21", "_gemma4_overrides (line 23)",
                    "sglang/srt/arg_groups/model_overrides/gemma4.py"),
               {"model_rules": added(DIFFUSION_GEMMA)}),
        Change("fp4_e2m1 is no longer accepted", code("0.5.21", "kv_cache_dtype choices",
                                                      "sglang/srt/arg_groups/fields/model.py"),
               {"kv_choices": minus("fp4_e2m1"),
                "replacements": {"fp4_e2m1": ("nvfp4", "fp4_mx_block16")}}),
        Change("trtllm_mla no longer takes an FP4 KV cache",
               code("0.5.21", "_mla_kv_cache_dtype_checks", OVERRIDES),
               {"kv_spellings": lambda before: tuple(
                   (n, tuple(d for d in kinds if d != "fp4_e2m1")) for n, kinds in before)}),
        Change("SM100's native NVFP4 cache on trtllm_mha refuses PD disaggregation",
               code("0.5.21", "handle_kv4_compatibility", KV_HOOK),
               {"kv4": lambda before: replace(before, native_refuses_disaggregation=True)}),
        Change("SM100's native NVFP4 cache on trtllm_mha runs the draft model on trtllm_mha",
               code("0.5.21", "handle_kv4_compatibility", KV_HOOK),
               {"kv4": lambda before: replace(before, native_draft_backend="trtllm_mha")}),
        Change("SM100's native NVFP4 cache on trtllm_mha runs EAGLE, EAGLE3, NEXTN and NGRAM "
               "only, NGRAM with a BFS breadth of 1",
               wheel("0.5.21", KV_HOOK, "handle_kv4_compatibility", 159,
                     "supported_native_spec_algorithms; DFLASH and DSPARK, then any other "
                     "algorithm, then NGRAM above breadth 1 raise ValueError"),
               {"kv4": lambda before: replace(
                   before, native_spec_algorithms=frozenset({"EAGLE", "EAGLE3", "NEXTN", "NGRAM"}),
                   native_ngram_breadth=1)}),
        Change("nvfp4 picks its prefill and decode backends (trtllm_mha on SM100)",
               code("0.5.21", "handle_nvfp4_prefill_kv_dequant_dtype", KV_HOOK),
               {"nvfp4_prefill_backends": {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables is known (its tag could not be read)", PAGE,
                  page=PAGE),
        DocChange("fp4_e2m1 leaves: its requirement leaves the page, and trtllm_mla no longer "
                  "takes it",
                  wheel("0.5.21", "sglang/srt/arg_groups/overrides.py",
                        "_mla_kv_cache_dtype_checks", 1145,
                        "trtllm_mla takes --kv-cache-dtype fp8_e4m3, bf16 or auto only"),
                  backends=(replace(TRTLLM_MLA, kv_dtypes=frozenset({KvDtype.AUTO, KvDtype.FP8_E4M3, KvDtype.BF16}),
                                    evidence=wheel("0.5.21", "sglang/srt/arg_groups/overrides.py",
                                                   "_mla_kv_cache_dtype_checks", 1145,
                                                   "trtllm_mla takes --kv-cache-dtype fp8_e4m3, "
                                                   "bf16 or auto only")),),
                  dropped_dtypes=(KvDtype.FP4_E2M1,)),
    ),
)  # fmt: skip
