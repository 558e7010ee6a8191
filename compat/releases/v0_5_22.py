"""SGLang 0.5.22: new backend llada2_cfg_flashinfer."""

from __future__ import annotations

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, NO, YES, row
from compat.engine.rules import AB
from compat.releases.doc import backed, not_stated, unread_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.families import ON_CUDA_SM80, ON_SM100, changed, choices, extended
from compat.releases.shared import CHOICES, code
from compat.vocab.terms import Arch

PAGE = unread_page("0.5.22")
REGISTRY = wheel("0.5.22", "sglang/srt/layers/attention/attention_registry.py",
                 "create_llada2_cfg_flashinfer_backend", 83, "the factory refuses MLA models")

LLADA2_ROW = NewRow(Arch.MHA, row("llada2_cfg_flashinfer", "LLaDA2 CFG FlashInfer",
    native_page_sizes=backed(YES, wheel("0.5.22", "sglang/srt/layers/attention/llada2_cfg_flashinfer_backend.py", "LLaDA2CFGFlashInferAttnBackend", 40,
                  "a subclass of the FlashInfer backend; outside the LLaDA conditioning pass it runs the inherited paged FlashInfer path")),
    fp8_kv=backed(YES, wheel("0.5.22", "sglang/srt/layers/attention/llada2_cfg_flashinfer_backend.py", "LLaDA2CFGFlashInferAttnBackend", 40,
                  "inherits the FlashInfer FP8 KV path; the conditioning pass attends over fresh K/V rather than the pool")),
    fp4_kv=backed(NO, wheel("0.5.22", "sglang/srt/arg_groups/kv_cache_hook.py", "handle_kv4_compatibility", 307,
                  "llada2_cfg_flashinfer is not in the KV4 MHA lists")),
    spec_topk_1=backed(NO, wheel("0.5.22", "sglang/srt/layers/attention/llada2_cfg_flashinfer_backend.py", "LLaDA2CFGFlashInferAttnBackend.init_forward_metadata", 62,
                  "the conditioning pass accepts only plain (non-speculative) extend batches; the EAGLE draft factory has no entry for this backend")),
    spec_topk_gt1=backed(NO, wheel("0.5.22", "sglang/srt/layers/attention/llada2_cfg_flashinfer_backend.py", "LLaDA2CFGFlashInferAttnBackend.init_forward_metadata", 62,
                  "same")),
    sliding_window=not_stated(wheel("0.5.22", "sglang/srt/layers/attention/llada2_cfg_flashinfer_backend.py", "LLaDA2CFGFlashInferAttnBackend.forward_extend", 127,
                  "the conditioning ragged call passes no window"),
              "the inherited FlashInfer path handles windows, the LLaDA conditioning path does not; the code does not say which applies to LLaDA2 models"),
    multimodal=not_stated(wheel("0.5.22", "sglang/srt/arg_groups/fields/mm.py", "field mm_attention_backend (Arg choices)", 31,
                  "no llada-specific entry in the --mm-attention-backend choices"),
              "LLaDA-Image conditioning is an image-generation path, not the multimodal-encoder column; not settled"),
))

RELEASE = Release(
    "0.5.22",
    changes=(
        Change("Gemma 4 also runs fa4",
               code("0.5.22", "handle_model_specific_adjustments (line 640)",
                    "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": extended("gemma4-backend", allowed=("fa4",))}),
        Change("EXAONE 4 gets a default (trtllm_mha on SM100, fa3 from CUDA sm80, else triton) "
               "before its list is checked", code("0.5.22", "handle_model_specific_adjustments",
                                                   "sglang/srt/arg_groups/model_hook.py"),
               {"model_rules": changed("exaone4-backends", defaults=choices(
                   ("trtllm_mha", ON_SM100), ("fa3", ON_CUDA_SM80), ("triton", None)),
                   default_unless=frozenset({AB}))}),
        Change("new backend llada2_cfg_flashinfer",
               code("0.5.22", "ATTENTION_BACKEND_CHOICES", CHOICES),
               {"backend_choices": plus("llada2_cfg_flashinfer")}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables is known (its tag could not be read)", PAGE,
                  page=PAGE),
        DocChange("new backend llada2_cfg_flashinfer (MHA), its row read from the code", REGISTRY,
                  backends=(
            Backend("llada2_cfg_flashinfer", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    note="LLaDA2 diffusion models with classifier-free guidance.",
                    evidence=REGISTRY),
        ), rows=(LLADA2_ROW,)),
    ),
)  # fmt: skip
