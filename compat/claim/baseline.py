"""Every fact about SGLang's attention backends, written once.

The baseline is SGLang right after PR #14467 (December 2025). To change what the page
says and what the guard enforces, edit a cell here and run `compat docs`.
"""

from __future__ import annotations

from compat.claim.backends import Backend
from compat.claim.cells import Action, Cell, CellKind, PlatformSupport
from compat.claim.columns import (
    ALWAYS,
    Column,
    ColumnId,
    KvDtypeIn,
    ModelHas,
    PageSizeAbove,
    TopkRange,
)
from compat.claim.matrix import Matrix, Row, Table
from compat.claim.rules import (
    DtypeFallbackRule,
    DtypeRequirement,
    HybridCautionRule,
    PairingRule,
    SpecPagedRule,
)
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, KvFamily, ModelFeature, Phase, Platform

# -- sources ------------------------------------------------------------------------

BASELINE_DOC = Evidence(
    source="SGLang attention backend page at commit 0c078e6f (right after PR #14467)",
    url=(
        "https://github.com/sgl-project/sglang/blob/0c078e6f42685e4918bd79a94a025261c7f38942"
        "/docs/advanced_features/attention_backend.md"
    ),
)
PR_14467 = Evidence(
    source="SGLang PR #14467: KV4 compatibility check and the FP4 KV Cache column",
    url="https://github.com/sgl-project/sglang/pull/14467",
    tested_on="B200 (sm100)",
    models=("Qwen3-235B-A22B (MHA)", "DeepSeek-R1-0528-FP4 (MLA)"),
    note="Merged December 2025.",
)
SGLANG_SOURCE = Evidence(
    source="SGLang source: server argument handling and the attention backends (early 2026)",
    url="https://github.com/sgl-project/sglang/tree/main/python/sglang/srt",
    note="Hardware, model and default-backend facts the tables leave implicit.",
)

# -- cells --------------------------------------------------------------------------

YES = Cell(CellKind.SUPPORTED)
NO = Cell(CellKind.UNSUPPORTED)
NA = Cell(CellKind.NOT_APPLICABLE)


def native(*sizes: int, fixed: bool = False) -> Cell:
    """Native page sizes; `fixed` when the kernel cannot run any other size."""
    return Cell(CellKind.PAGE_SIZES, page_sizes=sizes, fixed=fixed)


def only_with_page_size(*sizes: int) -> Cell:
    return Cell(CellKind.CONDITIONAL, page_sizes=sizes)


def row(backend: str, display_name: str, **cells: Cell) -> Row:
    return Row(backend, display_name, {ColumnId(name): cell for name, cell in cells.items()})


# -- columns ------------------------------------------------------------------------

COLUMNS = (
    Column(
        ColumnId.NATIVE_PAGE_SIZES,
        "Paging inside the kernel: ✅ for any page size, or the sizes listed. Elsewhere a "
        "page size above 1 is emulated by expanding page tables.",
        Action.SNAP,
        "A kernel with fixed sizes cannot run another one, so SGLang replaces the page size "
        "with the largest native size and warns; emulated paging is reported as info.",
        when=PageSizeAbove(1),
        flags=("--page-size",),
    ),
    Column(
        ColumnId.FP8_KV,
        "Reads an FP8 KV cache.",
        Action.WARN,
        "The table is known to lag the kernels for FP8, so ❌ warns instead of refusing.",
        when=KvDtypeIn(KvFamily.FP8),
        flags=("--kv-cache-dtype",),
        dtypes=(KvDtype.FP8_E4M3, KvDtype.FP8_E5M2),
    ),
    Column(
        ColumnId.FP4_KV,
        "Reads an FP4 KV cache.",
        Action.ERROR,
        "An FP4 cache on another backend fails at the first request. SGLang's start-up check "
        "covers only part of this column (see who enforces what).",
        when=KvDtypeIn(KvFamily.FP4),
        flags=("--kv-cache-dtype",),
        evidence=PR_14467,
        dtypes=(KvDtype.FP4_E2M1,),
    ),
    Column(
        ColumnId.CHUNKED_PREFIX_CACHE,
        "Long prefills reuse the cached prefix chunk by chunk (MLA models).",
        Action.INFO,
        "SGLang turns chunked prefix cache off for this backend and starts anyway.",
        when=ALWAYS,
        phases=frozenset({Phase.PREFILL}),
    ),
    Column(
        ColumnId.SPEC_TOPK_1,
        "Speculative decoding with one draft token per step (classic EAGLE).",
        Action.ERROR,
        "The draft and verify kernels are missing; the server would fail at the first request.",
        when=TopkRange(1, 1),
        # Dropping the algorithm turns speculation off; a topk alone cannot.
        flags=("--speculative-algorithm", "--speculative-eagle-topk"),
    ),
    Column(
        ColumnId.SPEC_TOPK_GT1,
        "Speculative decoding that explores several draft branches per step (topk > 1).",
        Action.ERROR,
        "Tree verification is missing; the server would fail at the first request.",
        when=TopkRange(2),
        flags=("--speculative-eagle-topk",),
    ),
    Column(
        ColumnId.SLIDING_WINDOW,
        "Models with sliding-window attention layers.",
        Action.WARN,
        "The table is known to lag the kernels for sliding window, so ❌ warns.",
        when=ModelHas(ModelFeature.SLIDING_WINDOW),
    ),
    Column(
        ColumnId.MULTIMODAL,
        "A multimodal implementation exists for this backend family; the vision or audio "
        "encoder's own attention is chosen with `--mm-attention-backend`.",
        Action.WARN,
        "The language model still runs; only the multimodal path is unproven.",
        when=ModelHas(ModelFeature.MULTIMODAL),
    ),
)

# -- the two tables of the page ------------------------------------------------------

MHA_TABLE = Table(
    Arch.MHA,
    "MHA backends",
    (
        (ColumnId.NATIVE_PAGE_SIZES, "Page Size > 1 (native)"),
        (ColumnId.FP8_KV, "FP8 KV Cache"),
        (ColumnId.FP4_KV, "FP4 KV Cache"),
        (ColumnId.SPEC_TOPK_1, "Spec topk=1"),
        (ColumnId.SPEC_TOPK_GT1, "Spec topk>1"),
        (ColumnId.SLIDING_WINDOW, "Sliding Window"),
        (ColumnId.MULTIMODAL, "MultiModal"),
    ),
    (
        row("flashinfer", "FlashInfer", native_page_sizes=YES, fp8_kv=YES, fp4_kv=NO,
            spec_topk_1=YES, spec_topk_gt1=YES, sliding_window=YES, multimodal=NO),
        row("fa3", "FA3 (FlashAttention 3)", native_page_sizes=YES, fp8_kv=YES, fp4_kv=NO,
            spec_topk_1=YES, spec_topk_gt1=YES, sliding_window=YES, multimodal=YES),
        row("fa4", "FA4 (FlashAttention 4)", native_page_sizes=native(128),
            fp8_kv=NO, fp4_kv=YES, spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO,
            multimodal=NO),
        row("triton", "Triton", native_page_sizes=NO, fp8_kv=NO, fp4_kv=YES,
            spec_topk_1=YES, spec_topk_gt1=YES, sliding_window=YES, multimodal=YES),
        row("torch_native", "Torch Native (SDPA)", native_page_sizes=NO, fp8_kv=NO,
            fp4_kv=YES, spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO, multimodal=YES),
        row("flex_attention", "FlexAttention (PyTorch)", native_page_sizes=NO, fp8_kv=NO,
            fp4_kv=YES, spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO, multimodal=NO),
        row("trtllm_mha", "TRTLLM MHA", native_page_sizes=native(16, 32, 64, fixed=True),
            fp8_kv=YES, fp4_kv=YES, spec_topk_1=YES, spec_topk_gt1=NO, sliding_window=YES,
            multimodal=NO),
        row("dual_chunk_flash_attn", "Dual Chunk FlashAttention", native_page_sizes=YES,
            fp8_kv=NO, fp4_kv=NO, spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO,
            multimodal=NO),
        row("aiter", "AITER (ROCm)", native_page_sizes=YES, fp8_kv=NO, fp4_kv=NO,
            spec_topk_1=YES, spec_topk_gt1=YES, sliding_window=NO, multimodal=YES),
        row("wave", "Wave (ROCm)", native_page_sizes=YES, fp8_kv=NO, fp4_kv=NO,
            spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO, multimodal=NO),
        row("ascend", "Ascend (NPU)", native_page_sizes=YES, fp8_kv=NO, fp4_kv=NO,
            spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO, multimodal=YES),
        row("intel_xpu", "Intel XPU", native_page_sizes=YES, fp8_kv=NO, fp4_kv=NO,
            spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=YES, multimodal=NO),
        row("intel_amx", "Intel AMX (CPU)", native_page_sizes=NO, fp8_kv=NO, fp4_kv=NO,
            spec_topk_1=NO, spec_topk_gt1=NO, sliding_window=NO, multimodal=NO),
    ),
    BASELINE_DOC,
)

MLA_TABLE = Table(
    Arch.MLA,
    "MLA backends",
    (
        (ColumnId.NATIVE_PAGE_SIZES, "Native Page Sizes"),
        (ColumnId.FP8_KV, "FP8 KV Cache"),
        (ColumnId.FP4_KV, "FP4 KV Cache"),
        (ColumnId.CHUNKED_PREFIX_CACHE, "Chunked Prefix Cache"),
        (ColumnId.SPEC_TOPK_1, "Spec topk=1"),
        (ColumnId.SPEC_TOPK_GT1, "Spec topk>1"),
    ),
    (
        row("flashinfer", "FlashInfer MLA", native_page_sizes=native(1), fp8_kv=NO,
            fp4_kv=YES, chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=NO),
        row("flashmla", "FlashMLA", native_page_sizes=native(64, fixed=True), fp8_kv=YES,
            fp4_kv=NO, chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=NO),
        row("cutlass_mla", "Cutlass MLA", native_page_sizes=native(128, fixed=True),
            fp8_kv=YES, fp4_kv=YES, chunked_prefix_cache=YES, spec_topk_1=YES,
            spec_topk_gt1=NO),
        row("trtllm_mla", "TRTLLM MLA (Blackwell)", native_page_sizes=native(32, 64, fixed=True),
            fp8_kv=YES, fp4_kv=YES, chunked_prefix_cache=YES, spec_topk_1=YES,
            spec_topk_gt1=NO),
        row("fa3", "FA3 (FlashAttention 3)", native_page_sizes=NA, fp8_kv=NO, fp4_kv=NO,
            chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=only_with_page_size(1)),
        row("triton", "Triton", native_page_sizes=NA, fp8_kv=NO, fp4_kv=NO,
            chunked_prefix_cache=NO, spec_topk_1=YES, spec_topk_gt1=only_with_page_size(1)),
        row("fa4", "FA4", native_page_sizes=native(1), fp8_kv=NO, fp4_kv=YES,
            chunked_prefix_cache=NO, spec_topk_1=NO, spec_topk_gt1=NO),
        row("ascend", "Ascend MLA (NPU)", native_page_sizes=native(128, fixed=True), fp8_kv=NO,
            fp4_kv=NO, chunked_prefix_cache=NO, spec_topk_1=NO, spec_topk_gt1=NO),
    ),
    BASELINE_DOC,
)

# -- backends: what each needs beyond its cells ----------------------------------------

BOTH = frozenset(Phase)
CUDA_ONLY = {Platform.CUDA: PlatformSupport.SUPPORTED}
SM80_UP = CapabilityRange(8)
HOPPER = CapabilityRange(9, 9)
BLACKWELL = CapabilityRange(10, 10)
MLA_ONLY = frozenset({Arch.MLA})
MHA_ONLY = frozenset({Arch.MHA})

BACKENDS = (
    Backend("triton", BOTH,
            {Platform.CUDA: PlatformSupport.SUPPORTED, Platform.ROCM: PlatformSupport.SUPPORTED,
             Platform.XPU: PlatformSupport.SUPPORTED},
            refuses_features=frozenset({ModelFeature.ENCODER_DECODER}),
            note="Any GPU.", evidence=SGLANG_SOURCE),
    Backend("torch_native", BOTH, {platform: PlatformSupport.SUPPORTED for platform in Platform},
            disables_cuda_graph=True, note="Any platform; turns CUDA graphs off.",
            evidence=SGLANG_SOURCE),
    Backend("flex_attention", BOTH, CUDA_ONLY, disables_cuda_graph=True,
            note="PyTorch FlexAttention; no speculative decoding; turns CUDA graphs off.",
            evidence=SGLANG_SOURCE),
    Backend("nsa", BOTH, {Platform.CUDA: PlatformSupport.SUPPORTED, Platform.ROCM: PlatformSupport.UNTESTED},
            capability={Arch.MLA: CapabilityRange(9, 10)}, archs=MLA_ONLY,
            requires_features=frozenset({ModelFeature.SPARSE_DSA}),
            note="Native sparse attention for DeepSeek V3.2 (DSA) models; ROCm through tilelang.",
            evidence=SGLANG_SOURCE),
    Backend("cutlass_mla", BOTH, CUDA_ONLY, capability={Arch.MLA: BLACKWELL},
            archs=MLA_ONLY, evidence=SGLANG_SOURCE),
    Backend("fa3", BOTH, CUDA_ONLY,
            capability={Arch.MHA: CapabilityRange(8, 9), Arch.MLA: HOPPER},
            note="Not on Blackwell.", evidence=SGLANG_SOURCE),
    Backend("fa4", frozenset({Phase.PREFILL}), CUDA_ONLY,
            capability={Arch.MHA: BLACKWELL, Arch.MLA: BLACKWELL},
            note="Prefill only at the baseline.", evidence=SGLANG_SOURCE),
    Backend("flashinfer", BOTH, CUDA_ONLY, capability={Arch.MHA: SM80_UP, Arch.MLA: SM80_UP},
            evidence=SGLANG_SOURCE),
    Backend("flashmla", BOTH, CUDA_ONLY, capability={Arch.MLA: CapabilityRange(9, 10)},
            archs=MLA_ONLY, evidence=SGLANG_SOURCE),
    Backend("trtllm_mla", BOTH, CUDA_ONLY, capability={Arch.MLA: BLACKWELL},
            archs=MLA_ONLY,
            kv_dtypes=frozenset({KvDtype.FP8_E4M3, KvDtype.FP4_E2M1, KvDtype.BF16, KvDtype.AUTO}),
            evidence=SGLANG_SOURCE),
    Backend("trtllm_mha", BOTH, CUDA_ONLY, capability={Arch.MHA: BLACKWELL},
            archs=MHA_ONLY, evidence=SGLANG_SOURCE),
    Backend("dual_chunk_flash_attn", BOTH, CUDA_ONLY,
            requires_features=frozenset({ModelFeature.DUAL_CHUNK}),
            note="Only for models with a dual-chunk attention config.", evidence=SGLANG_SOURCE),
    Backend("aiter", BOTH, {Platform.ROCM: PlatformSupport.SUPPORTED},
            note="The MLA default on ROCm when KV heads per rank are 16 or 128.",
            evidence=SGLANG_SOURCE),
    Backend("wave", BOTH, {Platform.ROCM: PlatformSupport.SUPPORTED}, evidence=SGLANG_SOURCE),
    Backend("intel_amx", BOTH, {Platform.CPU: PlatformSupport.SUPPORTED},
            note="Needs a CPU with AMX; SGLang falls back to torch_native without it.",
            evidence=SGLANG_SOURCE),
    Backend("ascend", BOTH, {Platform.NPU: PlatformSupport.SUPPORTED}, evidence=SGLANG_SOURCE),
    Backend("intel_xpu", BOTH, {Platform.XPU: PlatformSupport.SUPPORTED},
            note="MLA models only in the decode phase (no MLA row).", evidence=SGLANG_SOURCE),
)

# -- cross-field rules ------------------------------------------------------------------

DTYPE_REQUIREMENTS = (
    DtypeRequirement(KvDtype.FP4_E2M1, "kv4-requires-cuda", platforms=frozenset({Platform.CUDA}),
                     min_cuda=(12, 8), min_torch=(2, 8), torch_dtype="float4_e2m1fn_x2",
                     evidence=PR_14467),
    DtypeRequirement(KvDtype.FP8_E4M3, "kv-fp8-requirements", min_cuda=(11, 8),
                     torch_dtype="float8_e4m3fn", evidence=BASELINE_DOC),
    DtypeRequirement(KvDtype.FP8_E5M2, "kv-fp8-requirements", min_cuda=(11, 8),
                     torch_dtype="float8_e5m2", evidence=BASELINE_DOC),
    DtypeRequirement(KvDtype.BF16, "kv-bf16-requirements", torch_dtype="bfloat16",
                     evidence=BASELINE_DOC),
)

PAIRING_RULES = (
    PairingRule("kv4-fa4-decode-partner", KvFamily.FP4, "fa4", frozenset({"trtllm_mha"}),
                PR_14467),
)

HYBRID_CAUTION_RULES = (HybridCautionRule("kv4-hybrid-pair", KvFamily.FP4, PR_14467),)

SPEC_PAGED_RULES = (
    SpecPagedRule("spec-topk-gt1-paged", Arch.MHA, frozenset({"flashinfer"}), BASELINE_DOC),
)

DTYPE_FALLBACK_RULES = (
    DtypeFallbackRule("fa3-fp8-e5m2-fallback", "fa3", KvDtype.FP8_E5M2, "triton",
                      "FA3 reads an FP8 KV cache only as e4m3.", SGLANG_SOURCE),
)

MATRIX = Matrix(
    backends=BACKENDS,
    columns=COLUMNS,
    tables=(MHA_TABLE, MLA_TABLE),
    dtype_requirements=DTYPE_REQUIREMENTS,
    pairing_rules=PAIRING_RULES,
    hybrid_caution_rules=HYBRID_CAUTION_RULES,
    spec_paged_rules=SPEC_PAGED_RULES,
    dtype_fallback_rules=DTYPE_FALLBACK_RULES,
    sources=(BASELINE_DOC, PR_14467, SGLANG_SOURCE),
)
