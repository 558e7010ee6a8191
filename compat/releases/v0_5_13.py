"""SGLang 0.5.13: new backends dsa (nsa its alias) and cutedsl_mla; topk > 1 paged on triton."""

from __future__ import annotations

from dataclasses import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BLACKWELL as BLACKWELL_CC
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES, MLA_ONLY
from compat.claim.cells import PlatformSupport
from compat.engine.rules import ANY_FLAG, PageSnap
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.families import (
    ON_AMX_CPU,
    ON_ROCM,
    ON_SM90,
    ON_SM100,
    ON_XPU,
    chained,
    changed,
    choices,
    extended,
)
from compat.releases.shared import (
    COMPAT,
    MODEL_ADJUSTMENTS,
    SM100,
    SPECULATIVE_HOOK,
    code,
    gate,
    snap,
)
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform

RELEASE = Release(
    "0.5.13",
    changes=(
        Change("new backends dsa (nsa becomes its alias) and cutedsl_mla",
               code("0.5.13", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsa", "cutedsl_mla"),
                "model_rules": changed("dsa-backend", defaults=choices(("dsa", None)))}),
        Change("cutedsl_mla: decode only (prefill runs trtllm_mla), SM100, page size 32 or 64",
               code("0.5.13", COMPAT),
               {"decode_only": {"cutedsl_mla": "trtllm_mla"},
                "page_snaps": snap(
                    "cutedsl_mla", PageSnap("cutedsl_mla", ANY_FLAG, frozenset({32, 64}))),
                "gpu_gates": gate("cutedsl_mla", ANY_FLAG, SM100),
                "kv_spellings": lambda before: (
                    *before, ("cutedsl_mla", ("fp8_e4m3", "bf16", "bfloat16", "auto")))}),
        Change("GPT-OSS runs intel_amx on a CPU with AMX by default and accepts it",
               code("0.5.13", MODEL_ADJUSTMENTS),
               {"model_rules": chained(
                   changed("gpt-oss-backends", defaults=choices(
                       ("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("intel_amx", ON_AMX_CPU),
                       ("intel_xpu", ON_XPU), ("aiter", ON_ROCM), ("triton", None))),
                   extended("gpt-oss-backends", allowed=("intel_amx",)))}),
        Change("deterministic inference also runs ascend",
               code("0.5.13", "DETERMINISTIC_ATTENTION_BACKEND_CHOICES"),
               {"deterministic": lambda before: replace(
                   before, backends=(*before.backends, "ascend"))}),
        Change("speculative topk > 1 with page size > 1 also runs on triton",
               code("0.5.13", "_handle_eagle_family", SPECULATIVE_HOOK),
               {"topk_paged_eagle": plus("triton")}),
    ),
    doc_changes=(
        DocChange("new backends dsa and cutedsl_mla", LATER_RELEASES, backends=(
            Backend("dsa", BOTH, {Platform.CUDA: PlatformSupport.SUPPORTED,
                                  Platform.ROCM: PlatformSupport.UNTESTED},
                    capability={Arch.MLA: CapabilityRange(9, 10)}, archs=MLA_ONLY,
                    requires_features=frozenset({ModelFeature.SPARSE_DSA}),
                    note="DeepSeek sparse attention (DSA); `nsa` is its older name.",
                    evidence=LATER_RELEASES),
            Backend("cutedsl_mla", frozenset({Phase.DECODE}), CUDA_ONLY,
                    capability={Arch.MLA: BLACKWELL_CC}, archs=MLA_ONLY,
                    kv_dtypes=frozenset({KvDtype.FP8_E4M3, KvDtype.BF16, KvDtype.AUTO}),
                    note="Decode only; SGLang runs prefill on trtllm_mla when it is unset.",
                    evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
