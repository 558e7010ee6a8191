"""SGLang 0.5.7, the baseline: its start-up rules in full, and the page of PR #14467.

Every later release's entry lists only what changed since the release before it.
"""

from __future__ import annotations

from compat.claim.baseline import MATRIX, NO, YES, native, row
from compat.engine.model_rules import (
    DeterministicRules,
    HybridCacheRules,
    LoaderRules,
    QuantizationRules,
    SpecWithRadix,
)
from compat.engine.rules import (
    AB_OR_DB,
    ANY_FLAG,
    BackendGate,
    DtypeFallback,
    Kv4Rules,
    PageSnap,
    ReleaseRules,
    SpecAutoCase,
)
from compat.releases.doc import backed, wheel
from compat.releases.entry import DocChange, NewRow, Release
from compat.releases.families import (
    DEEPSEEK,
    DEEPSEEK_FAMILY,
    FALCON_H1,
    GPT_OSS,
    KIMI_LINEAR,
    LLAMA4_RULE,
    NEMOTRON_H,
    OLMO2,
    ON_CUDA,
    ON_ROCM_MXFP,
    QWEN3_NEXT,
    dsa,
)
from compat.releases.image import MOVES
from compat.releases.shared import (
    BLACKWELL,
    COMPAT,
    FA3_DEFAULT_ARCHITECTURES,
    FA4_SNAP,
    INTEL_XPU_SNAP,
    MODEL_ADJUSTMENTS,
    MTP_ARCHITECTURES,
    MTP_PARAMS,
    SM100,
    SM100_OR_SM120,
    TREE_PARAMS,
    TRTLLM_MHA_SNAP,
    code,
    defaults,
)
from compat.vocab.terms import Arch

_ARGS = "sglang/srt/server_args.py"
_DSA = "ServerArgs._handle_model_specific_adjustments"
NSA_ROW = NewRow(Arch.MLA, row("nsa", "NSA (native sparse attention)",
    native_page_sizes=backed(native(64, fixed=True), wheel("0.5.7", _ARGS, _DSA, 1058,
        "for DSA models on CUDA start-up sets page size 64 whatever the user gave")),
    fp8_kv=backed(YES, wheel("0.5.7", _ARGS, _DSA, 1066,
        "auto becomes fp8_e4m3 on compute capability 10 and up (bfloat16 below); an assert "
        "admits bfloat16 or fp8_e4m3 only")),
    fp4_kv=backed(NO, wheel("0.5.7", _ARGS, _DSA, 1075,
        "the same assert refuses an FP4 KV cache; nsa is in none of the KV4 lists")),
    chunked_prefix_cache=backed(NO, wheel("0.5.7", "sglang/srt/model_executor/model_runner.py",
        "CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS", 200,
        "nsa is not in the list, so the model runner turns chunked prefix cache off")),
    spec_topk_1=backed(YES, wheel("0.5.7", "sglang/srt/speculative/draft_utils.py",
        "DraftBackendFactory.create_decode_backend", 56,
        "the EAGLE draft factory has nsa draft-decode and draft-extend backends")),
    spec_topk_gt1=backed(NO, wheel("0.5.7", _ARGS, "ServerArgs._handle_speculative_decoding", 2082,
        "topk > 1 with page size > 1 is refused unless --attention-backend is flashinfer or "
        "fa3; nsa runs page size 64")),
))  # fmt: skip

RELEASE = Release(
    "0.5.7",
    doc_changes=(
        DocChange("nsa gets an MLA row, read from the code (PR #14467's page has none)",
                  wheel("0.5.7", "sglang/srt/layers/attention/attention_registry.py",
                        "create_nsa_backend", 80, "the nsa backend is registered"),
                  rows=(NSA_ROW,)),
    ),
)  # fmt: skip
DOCUMENTED = MATRIX
"""The page as of PR #14467, the baseline every later release's page changes; 0.5.7's own
matrix adds the rows its `doc_changes` read from the code."""

_BACKENDS = (
    "triton", "torch_native", "flex_attention", "nsa", "cutlass_mla", "fa3", "fa4",
    "flashinfer", "flashmla", "trtllm_mla", "trtllm_mha", "dual_chunk_flash_attn", "aiter",
    "wave", "intel_amx", "ascend", "intel_xpu",
)  # fmt: skip

RULES = ReleaseRules(
    release="0.5.7",
    backend_choices=_BACKENDS,
    kv_choices=("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"),
    algorithm_choices=("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"),
    algorithm_any_case=False,  # argparse choices, compared as spelled
    backend_aliases={},
    defaults=defaults(FA3_DEFAULT_ARCHITECTURES),
    model_rules=(dsa("nsa"), DEEPSEEK, GPT_OSS, LLAMA4_RULE, OLMO2, KIMI_LINEAR, NEMOTRON_H,
                 QWEN3_NEXT, FALCON_H1),
    deterministic=DeterministicRules(
        backends=("flashinfer", "fa3", "triton"),
        deepseek_architectures=DEEPSEEK_FAMILY | {"DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM"},
        deepseek_backends=("fa3", "triton"),
        picks_default=False,
        default_gate=SM100_OR_SM120,
        source="server_args.py, ServerArgs._handle_deterministic_inference",
    ),
    quantization=QuantizationRules(
        gated={"mxfp4": (ON_CUDA, ON_ROCM_MXFP)},
        source="configs/model_config.py, ModelConfig._verify_quantization",
    ),
    loader=LoaderRules(
        reloads={"deepseek_v32": "DeepseekV3ForCausalLM"},
        source="utils/hf_transformers_utils.py, get_config (transformers 4.57.1)",
    ),
    hybrid_cache=HybridCacheRules(
        handled=False, picks_strategy=False, page_one=False, spec=SpecWithRadix.RADIX_OFF,
        # An asked-for extra_buffer asserts is_cuda() and FLA_CHUNK_SIZE (64) % page_size.
        extra_buffer_machines=(ON_CUDA,), page_divides=64,
        source="server_args.py, ServerArgs._handle_model_specific_adjustments",
    ),
    assumed_architectures={Arch.MHA: "LlamaForCausalLM", Arch.MLA: "DeepseekV3ForCausalLM"},
    page_snaps=(
        PageSnap("flashmla", AB_OR_DB, frozenset({64})),
        PageSnap("cutlass_mla", AB_OR_DB, frozenset({128})),
        PageSnap("trtllm_mla", AB_OR_DB, frozenset({32, 64})),
        TRTLLM_MHA_SNAP,
        FA4_SNAP,
        INTEL_XPU_SNAP,
    ),
    gpu_gates=(
        BackendGate("trtllm_mla", AB_OR_DB, BLACKWELL),
        BackendGate("trtllm_mha", ANY_FLAG, SM100),
    ),
    kv_spellings=(("trtllm_mla", ("auto", "fp8_e4m3", "bf16", "fp4_e2m1")),),
    kv_gates={},
    dtype_fallback=DtypeFallback("fa3-fp8-e5m2-fallback", "fa3", "fp8_e5m2", "triton"),
    prefill_only=("fa4",),
    decode_only={},
    mla_prefill_refused=(),
    spec_refusing=("flex_attention",),
    # The code's lists: MLA also takes flashmla, which the page marks ❌ (0.5.16 drops it).
    kv4=Kv4Rules(
        spellings=frozenset({"fp4_e2m1"}),
        pair_prefill="fa4",
        pair_partners={
            Arch.MHA: ("triton", "torch_native", "flex_attention"),
            Arch.MLA: ("flashinfer", "cutlass_mla", "trtllm_mla"),
        },
        single={
            Arch.MHA: ("triton", "torch_native", "flex_attention", "trtllm_mha"),
            Arch.MLA: ("flashinfer", "cutlass_mla", "trtllm_mla", "flashmla"),
        },
        rule_ids=("kv4-requires-cuda", "kv4-fa4-decode-partner", "kv4-hybrid-pair", "fp4-kv"),
    ),
    nvfp4_prefill_backends=None,
    eagle_family=frozenset({"EAGLE", "EAGLE3", "STANDALONE"}),
    ngram="NGRAM",
    ngram_bfs_breadth=10,
    algorithm_aliases={"NEXTN": "EAGLE"},
    spec_auto_params=(
        SpecAutoCase(MTP_PARAMS, algorithm="STANDALONE"),
        SpecAutoCase(TREE_PARAMS, architectures=frozenset({"LlamaForCausalLM"})),
        SpecAutoCase(MTP_PARAMS, architectures=MTP_ARCHITECTURES),
        SpecAutoCase(TREE_PARAMS),
    ),
    topk_one_only=("trtllm_mha",),
    topk_one_only_fields=ANY_FLAG,
    topk_one_only_rule="spec-topk-gt1",
    # The page names flashinfer only; the EAGLE path of the code also takes fa3.
    topk_paged_eagle=("flashinfer", "fa3"),
    topk_paged_ngram=("flashinfer",),
    topk_paged_rule_id="spec-topk-gt1-paged",
    dual_chunk_backend="dual_chunk_flash_attn",
    backend_build={
        ("compute-capability", "fa3"): "the FA3 backend asserts on this GPU",
        ("arch-refused", "trtllm_mla"): "the TRTLLM MLA backend refuses a non-MLA model",
        ("arch-refused", "trtllm_mha"): "the TRTLLM MHA backend refuses an MLA model",
        ("model-feature-refused", "triton"): "Triton refuses encoder-decoder models",
    },
    decode_dp_needs_round_robin=True,
    image_cuda=MOVES["0.5.7"],
    evidence={
        "defaults": code("0.5.7", COMPAT),
        "fa3-architectures": code("0.5.7", "is_fa3_default_architecture",
                                  "sglang/srt/utils/common.py"),
        "model-overrides": code("0.5.7", MODEL_ADJUSTMENTS),
        "deterministic": code("0.5.7", "ServerArgs._handle_deterministic_inference"),
        "quantization": code("0.5.7", "ModelConfig._verify_quantization",
                             "sglang/srt/configs/model_config.py"),
        "loader": code("0.5.7", "get_config", "sglang/srt/utils/hf_transformers_utils.py"),
        "page-snaps": code("0.5.7", COMPAT),
        "kv4": code("0.5.7", "ServerArgs._handle_kv4_compatibility"),
        "speculative": code("0.5.7", "ServerArgs._handle_speculative_decoding"),
        "spec-auto-params": code("0.5.7", "auto_choose_speculative_params"),
        "backend-build": code("0.5.7", "create_*_backend",
                              "sglang/srt/layers/attention/attention_registry.py"),
    },
)  # fmt: skip
