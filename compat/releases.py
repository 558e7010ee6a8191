"""SGLang releases and the start-up rules of each, read from the release's own code.

The page's tables say what works; a release's start-up code decides what starts. The two
differ (SGLang does not check most columns at start-up, and its code accepts FlashMLA with
an FP4 cache that its doc marks ❌), so the start-up rules are facts of their own, each with
the file and function it was read from. Lists that the code and the page share are derived
from the matrix's cells; only where the code differs is a divergence written down.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from compat.matrix import MATRIX
from compat.schema import ColumnId, DtypeFallbackRule, Matrix
from compat.vocab import Arch, CellKind, Evidence, KvDtype, Platform, Term

if TYPE_CHECKING:
    from compat.config import Parsed


class BackendField(Term):
    """The three ServerArgs fields that name a backend; rules differ in which they read."""

    ATTENTION = "attention_backend"
    PREFILL = "prefill_attention_backend"
    DECODE = "decode_attention_backend"

    def __init__(self, value: str) -> None:
        self.flag = "--" + value.replace("_", "-")


AB, PB, DB = BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE
AB_OR_DB = frozenset({AB, DB})
ANY_FIELD = frozenset(BackendField)


@dataclass(frozen=True)
class GpuGate:
    """One of SGLang's GPU predicates: CUDA, a capability major in `majors`, a CUDA floor."""

    name: str
    majors: frozenset[int]
    min_cuda: tuple[int, int]

    @property
    def label(self) -> str:
        gpus = " or ".join(f"sm{major}x" for major in sorted(self.majors))
        return f"{self.name} ({gpus}, CUDA {self.min_cuda[0]}.{self.min_cuda[1]}+)"


@dataclass(frozen=True)
class DefaultBranch:
    """One branch of SGLang's default decision; the first whose conditions all hold wins."""

    backend: str
    arch: Arch | None = None
    platform: Platform | None = None
    gate: GpuGate | None = None
    needs_no_spec_or_topk_one: bool = False
    """Taken only without speculation, or with topk 1 and page size 1 (or unset)."""
    needs_topk_when_speculative: bool = False
    """With speculation, taken only when `--speculative-eagle-topk` was given."""
    architectures: frozenset[str] | None = None
    kv_heads: frozenset[int] | None = None
    """KV heads per tensor-parallel rank that the branch needs."""


@dataclass(frozen=True)
class ModelOverride:
    """A model-specific adjustment that runs before the default decision, so it wins."""

    rule: str
    architectures: frozenset[str]
    backend: str
    gate: GpuGate | None = None
    sparse: bool = False
    """Applies to the DeepSeek sparse-attention (DSA) members of the family only."""
    page_size: int | None = None
    kv_dtypes: frozenset[str] = frozenset()
    kv_aliases: Mapping[str, str] = field(default_factory=dict)
    auto_kv_dtype: Callable[[Parsed], str] | None = None


@dataclass(frozen=True)
class PageSnap:
    """A page-size rewrite with a warning: a size outside `sizes` becomes the largest one."""

    backend: str
    fields: frozenset[BackendField]
    sizes: frozenset[int]
    arch: Arch | None = None
    """Only for models of this architecture."""

    @property
    def snap_to(self) -> int:
        return max(self.sizes)


@dataclass(frozen=True)
class BackendGate:
    backend: str
    fields: frozenset[BackendField]
    gate: GpuGate


@dataclass(frozen=True)
class Kv4Rules:
    """`_handle_kv4_compatibility`: the FP4 cache's backend lists, per architecture."""

    spellings: frozenset[str]
    pair_prefill: str
    pair_partners: Mapping[Arch, tuple[str, ...]]
    single: Mapping[Arch, tuple[str, ...]]
    rule_ids: tuple[str, str, str]
    """The page's ids of the same rules: (CUDA only, FA4 pairing, hybrid pair)."""


@dataclass(frozen=True)
class SpecParams:
    steps: int
    topk: int
    draft_tokens: int


@dataclass(frozen=True)
class SpecAutoCase:
    params: SpecParams
    algorithm: str | None = None
    architectures: frozenset[str] | None = None


@dataclass(frozen=True)
class ReleaseRules:
    """Everything one release's start-up code decides about attention, with its sources."""

    release: str
    defaults: tuple[DefaultBranch, ...]
    model_overrides: tuple[ModelOverride, ...]
    assumed_architectures: Mapping[Arch, str]
    """The model assumed when none is named: the most common of each architecture."""
    page_snaps: tuple[PageSnap, ...]
    gpu_gates: tuple[BackendGate, ...]
    kv_spellings: tuple[tuple[str, tuple[str, ...]], ...]
    """Backends that take only these `--kv-cache-dtype` strings (as spelled)."""
    dtype_fallback: DtypeFallbackRule
    """The page's fallback rule; the code applies it to `--attention-backend` only."""
    prefill_only: tuple[str, ...]
    spec_refusing: tuple[str, ...]
    kv4: Kv4Rules
    eagle_family: frozenset[str]
    ngram: str
    ngram_bfs_breadth: int
    algorithm_aliases: Mapping[str, str]
    spec_auto_params: tuple[SpecAutoCase, ...]
    topk_one_only: tuple[str, ...]
    topk_paged_eagle: tuple[str, ...]
    topk_paged_ngram: tuple[str, ...]
    topk_paged_rule_id: str
    dual_chunk_backend: str
    backend_build: Mapping[tuple[str, str], str]
    """(documented rule id, backend) -> what fails when SGLang builds that backend."""
    evidence: Mapping[str, Evidence]
    """Rule -> where in the release's code it was read."""

    def assumed_architecture(self, arch: Arch) -> str:
        return self.assumed_architectures[arch]


# -- facts shared with the page ----------------------------------------------------------


def fp4_backends(matrix: Matrix, arch: Arch) -> tuple[str, ...]:
    """The backends whose FP4 KV cell is ✅ for `arch`, in table order."""
    return tuple(
        row.backend
        for row in matrix.table(arch).rows
        if row.cells[ColumnId.FP4_KV].kind is CellKind.SUPPORTED
    )


def _kv4_rules(
    matrix: Matrix, code_also_accepts: Mapping[Arch, tuple[str, ...]], spellings: frozenset[str]
) -> Kv4Rules:
    """The KV4 lists of the code: the FP4 column, less the pairing rule's exclusions and the
    prefill-only backends, plus what the code accepts beyond the page."""
    rule = matrix.pairing_rules[0]
    prefill_only = {b.name for b in matrix.backends if len(b.phases) == 1}
    single: dict[Arch, tuple[str, ...]] = {}
    partners: dict[Arch, tuple[str, ...]] = {}
    for arch in Arch:
        capable = tuple(b for b in fp4_backends(matrix, arch) if b not in prefill_only)
        single[arch] = capable + code_also_accepts.get(arch, ())
        partners[arch] = tuple(b for b in capable if b not in rule.excluded_decode)
    cuda = next(r.rule_id for r in matrix.dtype_requirements if r.dtype.is_fp4)
    ids = (cuda, rule.id, matrix.hybrid_caution_rules[0].id)
    return Kv4Rules(spellings, rule.prefill_backend, partners, single, ids)


def _snap(
    backend: str, fields: frozenset[BackendField], arch: Arch, *, mha_only: bool = False
) -> PageSnap:
    """A snap to the native page sizes the page's `arch` table gives `backend`."""
    row = MATRIX.row(arch, backend)
    assert row is not None, f"{backend} has no {arch.label} row"
    sizes = frozenset(row.cells[ColumnId.NATIVE_PAGE_SIZES].page_sizes)
    return PageSnap(backend, fields, sizes, Arch.MHA if mha_only else None)


def _spellings(backend: str) -> tuple[str, tuple[str, ...]]:
    """The page's KV dtypes of `backend`, as the code's string check spells them."""
    dtypes = MATRIX.backend(backend).kv_dtypes
    assert dtypes is not None
    return backend, tuple(d.value for d in KvDtype if d in dtypes)


# -- SGLang 0.5.7 ------------------------------------------------------------------------


def _code(function: str, file: str = "sglang/srt/server_args.py") -> Evidence:
    return Evidence(source=f"sglang 0.5.7 wheel, {file}, {function}")


_SERVER_ARGS = "ServerArgs._handle_attention_backend_compatibility"
HOPPER = GpuGate("Hopper", frozenset({9}), (12, 3))
SM100 = GpuGate("SM100", frozenset({10}), (12, 8))
BLACKWELL = GpuGate("Blackwell", frozenset({10, 12}), (12, 8))

# `is_fa3_default_architecture` (sglang/srt/utils/common.py).
FA3_DEFAULT_ARCHITECTURES = frozenset(
    {
        "Llama4ForConditionalGeneration",
        "LlamaForCausalLM",
        "Olmo2ForCausalLM",
        "Gemma2ForCausalLM",
        "Gemma3ForConditionalGeneration",
        "Qwen2ForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration",
        "Glm4MoeForCausalLM",
        "Glm4vForConditionalGeneration",
        "Glm4vMoeForConditionalGeneration",
        "Step3VLForConditionalGeneration",
    }
)
DEEPSEEK_FAMILY = frozenset(
    {"DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"}
)
_MTP_DEFAULT = SpecParams(3, 1, 4)
_TREE_DEFAULT = SpecParams(5, 4, 8)


def _dsa_auto_kv(parsed: Parsed) -> str:
    major = parsed.capability.major if parsed.capability is not None else 0
    return "fp8_e4m3" if major >= 10 else "bfloat16"


RELEASE_0_5_7 = ReleaseRules(
    release="0.5.7",
    defaults=(
        DefaultBranch(
            "fa3",
            Arch.MHA,
            gate=HOPPER,
            needs_no_spec_or_topk_one=True,
            architectures=FA3_DEFAULT_ARCHITECTURES,
        ),
        DefaultBranch(
            "trtllm_mha",
            Arch.MHA,
            gate=SM100,
            needs_no_spec_or_topk_one=True,
            needs_topk_when_speculative=True,
        ),
        DefaultBranch("aiter", Arch.MHA, platform=Platform.ROCM),
        DefaultBranch("flashinfer", Arch.MHA, platform=Platform.CUDA),
        DefaultBranch("triton", Arch.MHA),
        DefaultBranch("fa3", Arch.MLA, gate=HOPPER),
        DefaultBranch("flashinfer", Arch.MLA, gate=SM100),
        DefaultBranch("aiter", Arch.MLA, platform=Platform.ROCM, kv_heads=frozenset({16, 128})),
        DefaultBranch("triton", Arch.MLA),
    ),
    model_overrides=(
        ModelOverride(
            "dsa-backend",
            DEEPSEEK_FAMILY,
            "nsa",
            sparse=True,
            page_size=64,
            kv_dtypes=frozenset({"bfloat16", "fp8_e4m3"}),
            kv_aliases={"bf16": "bfloat16"},
            auto_kv_dtype=_dsa_auto_kv,
        ),
        ModelOverride("deepseek-backend", DEEPSEEK_FAMILY, "trtllm_mla", gate=SM100),
    ),
    assumed_architectures={Arch.MHA: "LlamaForCausalLM", Arch.MLA: "DeepseekV3ForCausalLM"},
    page_snaps=(
        _snap("flashmla", AB_OR_DB, Arch.MLA),
        _snap("cutlass_mla", AB_OR_DB, Arch.MLA),
        _snap("trtllm_mla", AB_OR_DB, Arch.MLA),
        _snap("trtllm_mha", ANY_FIELD, Arch.MHA),
        _snap("fa4", frozenset({PB}), Arch.MHA, mha_only=True),
        # No cell of the page holds these: Intel XPU has no MHA page-size limit there.
        PageSnap("intel_xpu", frozenset({AB}), frozenset({32, 64, 128})),
    ),
    gpu_gates=(
        BackendGate("trtllm_mla", AB_OR_DB, BLACKWELL),
        BackendGate("trtllm_mha", ANY_FIELD, SM100),
    ),
    kv_spellings=(_spellings("trtllm_mla"),),
    dtype_fallback=MATRIX.dtype_fallback_rules[0],
    prefill_only=tuple(b.name for b in MATRIX.backends if len(b.phases) == 1),
    spec_refusing=("flex_attention",),
    kv4=_kv4_rules(MATRIX, {Arch.MLA: ("flashmla",)}, frozenset({"fp4_e2m1"})),
    eagle_family=frozenset({"EAGLE", "EAGLE3", "STANDALONE"}),
    ngram="NGRAM",
    ngram_bfs_breadth=10,
    algorithm_aliases={"NEXTN": "EAGLE"},
    spec_auto_params=(
        SpecAutoCase(_MTP_DEFAULT, algorithm="STANDALONE"),
        SpecAutoCase(_TREE_DEFAULT, architectures=frozenset({"LlamaForCausalLM"})),
        SpecAutoCase(
            _MTP_DEFAULT,
            architectures=frozenset(
                {
                    "DeepseekV32ForCausalLM",
                    "DeepseekV3ForCausalLM",
                    "DeepseekV2ForCausalLM",
                    "GptOssForCausalLM",
                    "Glm4MoeForCausalLM",
                    "BailingMoeForCausalLM",
                    "BailingMoeV2ForCausalLM",
                    "MistralLarge3ForCausalLM",
                    "PixtralForConditionalGeneration",
                    "MiMoV2FlashForCausalLM",
                }
            ),
        ),
        SpecAutoCase(_TREE_DEFAULT),
    ),
    topk_one_only=("trtllm_mha",),
    # The page names flashinfer only; the EAGLE path of the code also takes fa3.
    topk_paged_eagle=(*sorted(MATRIX.spec_paged_rules[0].backends), "fa3"),
    topk_paged_ngram=tuple(sorted(MATRIX.spec_paged_rules[0].backends)),
    topk_paged_rule_id=MATRIX.spec_paged_rules[0].id,
    dual_chunk_backend="dual_chunk_flash_attn",
    backend_build={
        ("compute-capability", "fa3"): "the FA3 backend asserts on this GPU",
        ("arch-refused", "trtllm_mla"): "the TRTLLM MLA backend refuses a non-MLA model",
        ("arch-refused", "trtllm_mha"): "the TRTLLM MHA backend refuses an MLA model",
        ("model-feature-refused", "triton"): "Triton refuses encoder-decoder models",
    },
    evidence={
        "defaults": _code(_SERVER_ARGS),
        "fa3-architectures": _code("is_fa3_default_architecture", "sglang/srt/utils/common.py"),
        "model-overrides": _code("ServerArgs._handle_model_specific_adjustments"),
        "page-snaps": _code(_SERVER_ARGS),
        "gpu-gates": _code(_SERVER_ARGS),
        "kv-spellings": _code(_SERVER_ARGS),
        "dtype-fallback": _code(_SERVER_ARGS),
        "prefill-only": _code(_SERVER_ARGS),
        "spec-refusing": _code(_SERVER_ARGS),
        "kv4": _code("ServerArgs._handle_kv4_compatibility"),
        "speculative": _code("ServerArgs._handle_speculative_decoding"),
        "spec-auto-params": _code("auto_choose_speculative_params"),
        "backend-build": _code(
            "create_*_backend", "sglang/srt/layers/attention/attention_registry.py"
        ),
    },
)

# -- which release --------------------------------------------------------------------

RELEASES: Mapping[str, ReleaseRules] = {"0.5.7": RELEASE_0_5_7}
NEWEST = "0.5.7"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:\.?post\d+|rc\d+)?$")


class UnknownReleaseError(ValueError):
    """A release this matrix does not model."""


def release_rules(version: str) -> ReleaseRules:
    """The rules of `version` (post releases share their release's rules)."""
    match = _VERSION.match(version.strip())
    key = ".".join(match.groups()) if match else version
    rules = RELEASES.get(key)
    if rules is None:
        raise UnknownReleaseError(
            f"SGLang {version} is not modelled; known releases: {', '.join(RELEASES)}"
        )
    return rules


@cache
def installed_sglang_version() -> str | None:
    """The installed `sglang` distribution's version, read from its metadata (never imported)."""
    from importlib import metadata

    try:
        return metadata.version("sglang")
    except metadata.PackageNotFoundError:
        return None
