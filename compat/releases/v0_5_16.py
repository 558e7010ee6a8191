"""SGLang 0.5.16: KV dtypes mxfp8, nvfp4 and fp4_mx_block16; fp4_e2m1 deprecated."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import MATRIX
from compat.claim.columns import ColumnId
from compat.claim.rules import DtypeRequirement
from compat.releases.doc import LATER_RELEASES, tagged_page, wheel
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.families import (
    MINIMAX_M3,
    ON_CUDA,
    ON_NPU,
    ON_ROCM,
    added,
    extended,
    with_family,
)
from compat.releases.shared import BLACKWELL_0_5_9, OVERRIDES, SM100_OR_SM120, code, kv4_without
from compat.vocab.terms import KvDtype, Platform

_KV4 = "ServerArgs._handle_kv4_compatibility"

RELEASE = Release(
    "0.5.16",
    changes=(
        Change("MiniMax-M3 (sparse) with no backend flag: triton on ROCm, fa4 on SM100, fa3 on "
               "SM90; with --page-size unset, fa4 on SM100 and fa3 on SM90 run page size 128",
               code("0.5.16", "_minimax_m3_overrides (lines 466-533)", OVERRIDES),
               {"model_rules": added(MINIMAX_M3)}),
        Change("DeepSeek V4 also runs speculative decoding as DSPARK, at any top-k",
               code("0.5.16", "apply_deepseek_v4_defaults (lines 55-63)",
                    "sglang/srt/arg_groups/deepseek_v4_hook.py"),
               {"model_rules": extended("deepseek-v4-backend", speculation_also=("DSPARK",))}),
        Change("the DeepSeek family's branch also takes LongCat-Flash (and its NextN draft)",
               code("0.5.16", "_DEEPSEEK_FAMILY_ARCHS (line 1317)", OVERRIDES),
               {"model_rules": with_family("LongcatFlashForCausalLM",
                                           "LongcatFlashForCausalLMNextN")}),
        Change("new KV dtypes mxfp8, nvfp4 and fp4_mx_block16; the KV4 check keys on the new two",
               code("0.5.16", _KV4),
               {"kv_choices": plus("mxfp8", "nvfp4", "fp4_mx_block16"),
                "kv4": lambda before: replace(
                    before, spellings=frozenset({"nvfp4", "fp4_mx_block16"}))}),
        Change("flashmla leaves the KV4 list (the code now agrees with the page)",
               code("0.5.16", _KV4), {"kv4": kv4_without("flashmla")}),
        Change("nvfp4 needs SM100 or SM120; mxfp8 needs Blackwell",
               code("0.5.16", "ServerArgs._handle_mxfp8_kv_cache_compatibility"),
               {"kv_gates": {"nvfp4": SM100_OR_SM120, "mxfp8": BLACKWELL_0_5_9}}),
        Change("deterministic inference also runs fa4",
               code("0.5.16", "DETERMINISTIC_ATTENTION_BACKEND_CHOICES"),
               {"deterministic": lambda before: replace(
                   before, backends=("ascend", "fa3", "fa4", "flashinfer", "triton"))}),
        Change("hybrid models' extra_buffer Mamba cache also runs on ROCm",
               code("0.5.16", "ServerArgs._validate_mamba_extra_buffer"),
               {"hybrid_cache": lambda before: replace(
                   before, extra_buffer_machines=(ON_CUDA, ON_NPU, ON_ROCM))}),
        Change("fp4_e2m1 is deprecated: start-up lets it through, the KV pool refuses it",
               code("0.5.16", "kv_cache_dtype", "sglang/srt/mem_cache/kv_cache_dtype.py"), {}),
        Change("`--speculative-algorithm DSPARK` is accepted",
               wheel("0.5.16", "sglang/srt/speculative/spec_info.py", "SpeculativeAlgorithm", 38,
                     "DSPARK is a member, so `from_string` takes it"),
               {"algorithm_choices": plus("DSPARK")}),
    ),
    doc_changes=(
        DocChange("the FP4 KV cache is spelled `nvfp4` or `fp4_mx_block16` (`fp4_e2m1` is "
                  "deprecated: SGLang refuses it when it builds the KV pool); `mxfp8` is new",
                  wheel("0.5.16", "sglang/srt/server_args.py", "ServerArgs._handle_kv4_compatibility",
                        5078, "the KV4 check keys on nvfp4 and fp4_mx_block16"),
                  page=tagged_page("0.5.16", "docs_new/docs/advanced_features/attention_backend.mdx"),
                  columns=(replace(MATRIX.column(ColumnId.FP4_KV),
                                   dtypes=(KvDtype.NVFP4, KvDtype.FP4_MX_BLOCK16)),),
                  requirements=(
            DtypeRequirement(KvDtype.NVFP4, "kv4-requires-cuda", platforms=frozenset({Platform.CUDA}),
                             min_cuda=(12, 8), torch_dtype="float4_e2m1fn_x2", evidence=LATER_RELEASES),
            DtypeRequirement(KvDtype.FP4_MX_BLOCK16, "kv4-requires-cuda",
                             platforms=frozenset({Platform.CUDA}), min_cuda=(12, 8),
                             torch_dtype="float4_e2m1fn_x2", evidence=LATER_RELEASES),
            DtypeRequirement(KvDtype.MXFP8, "kv-fp8-requirements", platforms=frozenset({Platform.CUDA}),
                             min_cuda=(12, 8), torch_dtype="float8_e4m3fn", evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
