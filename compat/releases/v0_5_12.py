"""SGLang 0.5.12: new backends dsv4 (alias compressed) and tokenspeed_mla; DeepSeek V3.2."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BLACKWELL as BLACKWELL_CC
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, MLA_ONLY, NO, YES, native, row
from compat.engine.rules import AB_OR_DB, PageSnap
from compat.releases.doc import LATER_RELEASES, backed, not_stated, tagged_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.families import (
    DEEPSEEK_V4,
    MINICPM_V4_6,
    ON_NPU,
    added,
    chained,
    changed,
    extended,
    with_family,
)
from compat.releases.preshuffle import DSA_PAGES_0_5_12, PRESHUFFLE_0_5_12
from compat.releases.shared import (
    BLACKWELL_0_5_9,
    COMPAT,
    MODEL_ADJUSTMENTS,
    code,
    gate,
    snap,
)
from compat.vocab.terms import Arch, KvDtype

MINTLIFY_PAGE = "docs_new/docs/advanced_features/attention_backend.mdx"

DSV4_ROW = NewRow(Arch.MHA, row("dsv4", "DeepSeek V4",
    native_page_sizes=backed(native(256, fixed=True), wheel("0.5.12", "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", 16,
                  "for DeepSeek V4 models start-up sets the backend to dsv4 and the page size to 256 unconditionally (no user value survives)")),
    fp8_kv=backed(YES, wheel("0.5.12", "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", 34,
                  "auto becomes fp8_e4m3 and an assert admits only fp8_e4m3 (e5m2, bf16 and FP4 are refused)")),
    fp4_kv=backed(NO, wheel("0.5.12", "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", 34,
                  "the same assert refuses every dtype except fp8_e4m3; also sglang 0.5.12 wheel, sglang/srt/server_args.py, ServerArgs._handle_kv4_compatibility (line 2934): dsv4 is not in the KV4 MHA single-backend list")),
    spec_topk_1=backed(YES, wheel("0.5.12", "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", 41,
                  "EAGLE with topk 1 is the one speculative mode accepted for V4; also sglang 0.5.12 wheel, sglang/srt/speculative/draft_utils.py, DraftBackendFactory.create_decode_backend (line 60): the draft factory has dsv4 draft-decode and draft-extend backends")),
    spec_topk_gt1=backed(NO, wheel("0.5.12", "sglang/srt/arg_groups/deepseek_v4_hook.py", "apply_deepseek_v4_defaults", 41,
                  "an assert refuses topk other than 1")),
    sliding_window=not_stated(wheel("0.5.12", "sglang/srt/layers/attention/deepseek_v4_backend.py", "SWA_WINDOW", 67,
                  "the backend implements DeepSeek V4's own sliding-window layers (window 128, separate SWA page table)"),
              "dsv4 serves only DeepSeek V4; the code does not say whether other sliding-window models could use it"),
    multimodal=backed(NO, wheel("0.5.12", "sglang/srt/server_args.py", "ServerArgs.add_cli_args, --mm-attention-backend choices", 5719,
                  "the --mm-attention-backend choices (sdpa, fa3, fa4, triton_attn, ascend_attn, aiter_attn, flashinfer_cudnn) hold nothing of the dsv4 family")),
))

TOKENSPEED_ROW = NewRow(Arch.MLA, row("tokenspeed_mla", "TokenSpeed MLA (Blackwell)",
    native_page_sizes=backed(native(32, 64, fixed=True), wheel("0.5.12", "sglang/srt/server_args.py", "ServerArgs._handle_attention_backend_compatibility", 2743,
                  "start-up rewrites any page size outside {32, 64} to 64 with a warning; also sglang 0.5.12 wheel, sglang/srt/layers/attention/tokenspeed_mla_backend.py, TokenspeedMLABackend.__init__ (line 104): the backend constructor raises for any other page size")),
    fp8_kv=backed(YES, wheel("0.5.12", "sglang/srt/server_args.py", "ServerArgs._handle_attention_backend_compatibility", 2748,
                  "start-up refuses any --kv-cache-dtype other than fp8_e4m3 (e5m2 is refused)")),
    fp4_kv=backed(NO, wheel("0.5.12", "sglang/srt/server_args.py", "ServerArgs._handle_kv4_compatibility", 2921,
                  "tokenspeed_mla is not in the KV4 single-backend list for MLA, and its own dtype check admits only fp8_e4m3")),
    chunked_prefix_cache=backed(YES, wheel("0.5.12", "sglang/srt/model_executor/model_runner.py", "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS", 254,
                  "tokenspeed_mla is in the list of backends for which the model runner keeps chunked prefix cache on")),
    spec_topk_1=backed(YES, wheel("0.5.12", "sglang/srt/speculative/draft_utils.py", "DraftBackendFactory.create_decode_backend", 56,
                  "the EAGLE draft factory has a multi-step draft-decode backend for tokenspeed_mla (and a draft-extend one); verify is inherited from TRTLLMMLABackend")),
    spec_topk_gt1=backed(NO, wheel("0.5.12", "sglang/srt/server_args.py", "ServerArgs._handle_speculative_decoding", 3840,
                  "topk > 1 with page size > 1 is refused unless --attention-backend is flashinfer or fa3; tokenspeed_mla always runs page 32/64")),
))

RELEASE = Release(
    "0.5.12",
    changes=(
        Change("DeepSeek DSA runs page size 1 on ROCm only where aiter's preshuffle paged-MQA "
               "path is unusable (SGLANG_USE_AITER, SGLANG_NSA_HIP_DISABLE_PRESHUFFLE, "
               "AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS, Triton >= 3.5.0); else 64",
               code("0.5.12", f"{MODEL_ADJUSTMENTS} (line 1862), {PRESHUFFLE_0_5_12.source}"),
               {"model_rules": changed("dsa-backend", pages=DSA_PAGES_0_5_12),
                "preshuffle": PRESHUFFLE_0_5_12}),
        Change("Qwen3.5's hybrid branch also takes InternS2PreviewForConditionalGeneration; "
               "MiniCPM-V 4.6 (a Qwen3.5 backbone) runs triton on SM100 with no backend flag, "
               "with the extra_buffer Mamba cache",
               code("0.5.12", f"{MODEL_ADJUSTMENTS} (lines 2286-2354)"),
               {"model_rules": chained(
                   extended("qwen3-next-backend",
                            architectures=("InternS2PreviewForConditionalGeneration",)),
                   added(MINICPM_V4_6))}),
        Change("hybrid models' asked-for extra_buffer Mamba cache also runs on NPU",
               code("0.5.12", "ServerArgs._handle_mamba_radix_cache"),
               {"hybrid_cache": lambda before: replace(
                   before, extra_buffer_machines=(*before.extra_buffer_machines, ON_NPU))}),
        Change("new backends dsv4 (alias compressed) and tokenspeed_mla",
               code("0.5.12", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsv4", "compressed", "tokenspeed_mla"),
                "backend_aliases": {"compressed": "dsv4"}}),
        Change("DeepSeek V4 runs dsv4 at page 256 whatever the flags, with an FP8 (e4m3) KV "
               "cache only (auto becomes fp8_e4m3), speculative decoding only as EAGLE (as spelled) with "
               "--speculative-eagle-topk 1",
               code("0.5.12", "apply_deepseek_v4_defaults (lines 15-42; called from "
                    f"server_args.py, {MODEL_ADJUSTMENTS}, line 1784)",
                    "sglang/srt/arg_groups/deepseek_v4_hook.py"),
               {"model_rules": added(DEEPSEEK_V4)}),
        Change("tokenspeed_mla: Blackwell only, page size 32 or 64, FP8 (e4m3) KV cache only",
               code("0.5.12", COMPAT),
               {"page_snaps": snap(
                   "tokenspeed_mla", PageSnap("tokenspeed_mla", AB_OR_DB, frozenset({32, 64}))),
                "gpu_gates": gate("tokenspeed_mla", AB_OR_DB, BLACKWELL_0_5_9),
                "kv_spellings": lambda before: (*before, ("tokenspeed_mla", ("fp8_e4m3",)))}),
        Change("the DeepSeek rules cover DeepSeek V3.2", code("0.5.12", MODEL_ADJUSTMENTS),
               {"model_rules": with_family("DeepseekV32ForCausalLM")}),
        Change("SGLang reads deepseek_v32 configs itself (no reload as DeepseekV3)",
               code("0.5.12", "_CONFIG_REGISTRY", "sglang/srt/utils/hf_transformers/common.py"),
               {"loader": lambda before: replace(
                   before, reloads={},
                   source="utils/hf_transformers/config.py, get_config (transformers 5.6.0)")}),
        Change("deterministic inference runs before the default decision and picks its own "
               "backend when `--attention-backend` is unset",
               code("0.5.12", "ServerArgs.__post_init__"),
               {"deterministic": lambda before: replace(before, picks_default=True)}),
        Change("`--speculative-algorithm FROZEN_KV_MTP` is accepted: the flag is free text, "
               "checked by `SpeculativeAlgorithm.from_string`, whose enum adds FROZEN_KV_MTP",
               wheel("0.5.12", "sglang/srt/speculative/spec_info.py", "SpeculativeAlgorithm", 35,
                     "FROZEN_KV_MTP is a member; add_cli_args (server_args.py line 5786) "
                     "declares the flag without choices"),
               {"algorithm_choices": plus("FROZEN_KV_MTP")}),
        Change("`--speculative-algorithm` takes its values in any case",
               wheel("0.5.12", "sglang/srt/server_args.py",
                     "ServerArgs._handle_speculative_decoding", 3562,
                     "the free-text value is upper-cased before it is resolved"),
               {"algorithm_any_case": True}),
    ),
    doc_changes=(
        DocChange("new backends dsv4 (MHA; `compressed` another name for it) and tokenspeed_mla "
                  "(MLA), their rows read from the code (the page has none yet)", LATER_RELEASES,
                  page=tagged_page("0.5.12", MINTLIFY_PAGE),
                  backends=(
            Backend("dsv4", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    note="DeepSeek V4 models only (SGLang types them MHA).",
                    evidence=wheel("0.5.12", "sglang/srt/configs/model_config.py",
                                   "ModelConfig._derive_model_shapes", 655,
                                   "DeepSeek V4 architectures are given AttentionArch.MHA")),
            Backend("tokenspeed_mla", BOTH, CUDA_ONLY, capability={Arch.MLA: BLACKWELL_CC},
                    archs=MLA_ONLY, kv_dtypes=frozenset({KvDtype.FP8_E4M3}),
                    note="Blackwell; an FP8 (e4m3) KV cache only.", evidence=LATER_RELEASES),
        ), rows=(DSV4_ROW, TOKENSPEED_ROW), aliases={"compressed": "dsv4"}),
    ),
)  # fmt: skip
