"""SGLang releases 0.5.7 to 0.5.23 and the start-up rules of each, read from their code.

The page's tables say what works; a release's start-up code decides what starts. The two
differ (SGLang checks few columns at start-up, and 0.5.7's code accepts FlashMLA with an
FP4 cache that its doc marks ❌), so start-up rules are facts of their own. SGLang 0.5.7 is
written out whole; every later release lists only what changed, each change with the
file and function it was read from. A release whose rules did not change shares the
previous one's data. Lists that the code shares with the page come from the matrix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from compat.claim.baseline import LATER_BACKENDS, LATER_RELEASES, MATRIX
from compat.engine.rules import (
    AB,
    AB_OR_DB,
    ANY_FLAG,
    EITHER_PHASE,
    PB,
    RUNS_DECODE,
    RUNS_PREFILL,
    BackendGate,
    DefaultBranch,
    GpuGate,
    ModelOverride,
    PageSnap,
    ReleaseRules,
    SpecAutoCase,
    SpecParams,
    kv4_rules,
    native_snap,
    spellings_of,
)
from compat.claim.matrix import Matrix
from compat.vocab.terms import Arch, Evidence, Phase, Platform

if TYPE_CHECKING:
    from compat.inputs.config import Parsed


def code(release: str, function: str, file: str = "sglang/srt/server_args.py") -> Evidence:
    return Evidence(source=f"sglang {release} wheel, {file}, {function}")


_COMPAT = "ServerArgs._handle_attention_backend_compatibility"
_OVERRIDES = "sglang/srt/arg_groups/overrides.py"
_ATTENTION_HOOK = "sglang/srt/arg_groups/attention_hook.py"
_KV_HOOK = "sglang/srt/arg_groups/kv_cache_hook.py"
_CHOICES = "sglang/srt/arg_groups/choices.py"

HOPPER = GpuGate("Hopper", frozenset({9}), (12, 3))
SM100 = GpuGate("SM100", frozenset({10}), (12, 8))
SM100_OR_SM120 = GpuGate("SM100 or SM120", frozenset({10, 12}), (12, 8))
BLACKWELL = GpuGate("Blackwell", frozenset({10, 12}), (12, 8))
BLACKWELL_0_5_9 = GpuGate("Blackwell", frozenset({10, 11, 12}), (12, 8))
TRTLLM_MHA_DECODE_GPUS = GpuGate("SM90, SM100 or SM120", frozenset({9, 10, 12}), (12, 3))

# `is_fa3_default_architecture` (sglang/srt/utils/common.py).
FA3_DEFAULT_ARCHITECTURES = frozenset({
    "Llama4ForConditionalGeneration", "LlamaForCausalLM", "Olmo2ForCausalLM",
    "Gemma2ForCausalLM", "Gemma3ForConditionalGeneration", "Qwen2ForCausalLM",
    "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Glm4MoeForCausalLM",
    "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration",
    "Step3VLForConditionalGeneration",
})  # fmt: skip
DEEPSEEK_FAMILY = frozenset(
    {"DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"}
)
MTP_PARAMS = SpecParams(3, 1, 4)
TREE_PARAMS = SpecParams(5, 4, 8)
MTP_ARCHITECTURES = frozenset({
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM",
    "GptOssForCausalLM", "Glm4MoeForCausalLM", "BailingMoeForCausalLM",
    "BailingMoeV2ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
    "MiMoV2FlashForCausalLM",
})  # fmt: skip
BASELINE_BACKENDS = (
    "triton", "torch_native", "flex_attention", "nsa", "cutlass_mla", "fa3", "fa4",
    "flashinfer", "flashmla", "trtllm_mla", "trtllm_mha", "dual_chunk_flash_attn", "aiter",
    "wave", "intel_amx", "ascend", "intel_xpu",
)  # fmt: skip
BASELINE_KV = ("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1")
BASELINE_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")


def _dsa_auto_kv(parsed: Parsed) -> str:
    major = parsed.capability.major if parsed.capability is not None else 0
    return "fp8_e4m3" if major >= 10 else "bfloat16"


def _defaults(fa3_architectures: frozenset[str] | None) -> tuple[DefaultBranch, ...]:
    return (
        DefaultBranch("fa3", Arch.MHA, gate=HOPPER, needs_no_spec_or_topk_one=True,
                      architectures=fa3_architectures),
        DefaultBranch("trtllm_mha", Arch.MHA, gate=SM100, needs_no_spec_or_topk_one=True,
                      needs_topk_when_speculative=True),
        DefaultBranch("aiter", Arch.MHA, platform=Platform.ROCM),
        DefaultBranch("flashinfer", Arch.MHA, platform=Platform.CUDA),
        DefaultBranch("triton", Arch.MHA),
        DefaultBranch("fa3", Arch.MLA, gate=HOPPER),
        DefaultBranch("flashinfer", Arch.MLA, gate=SM100),
        DefaultBranch("aiter", Arch.MLA, platform=Platform.ROCM, kv_heads=frozenset({16, 128})),
        DefaultBranch("triton", Arch.MLA),
    )  # fmt: skip


def _overrides(family: frozenset[str], dsa_backend: str) -> tuple[ModelOverride, ...]:
    return (
        ModelOverride("dsa-backend", family, dsa_backend, sparse=True, page_size=64,
                      kv_dtypes=frozenset({"bfloat16", "fp8_e4m3"}),
                      kv_aliases={"bf16": "bfloat16"}, auto_kv_dtype=_dsa_auto_kv),
        ModelOverride("deepseek-backend", family, "trtllm_mla", gate=SM100),
    )  # fmt: skip


def _snaps(backends: tuple[str, ...], *extra: PageSnap, fa4: PageSnap) -> tuple[PageSnap, ...]:
    """The page-size snaps in SGLang's order: the fixed-size MLA kernels, then the rest."""
    chain = [
        native_snap(MATRIX, "flashmla", AB_OR_DB, Arch.MLA),
        native_snap(MATRIX, "cutlass_mla", AB_OR_DB, Arch.MLA),
        native_snap(MATRIX, "trtllm_mla", AB_OR_DB, Arch.MLA),
        *extra,
        fa4,
        # No cell of the page holds these: Intel XPU has no MHA page-size limit there.
        PageSnap("intel_xpu", frozenset({AB}), frozenset({32, 64, 128})),
    ]
    return tuple(snap for snap in chain if snap.backend in backends)


_TRTLLM_MHA_SNAP = native_snap(MATRIX, "trtllm_mha", ANY_FLAG, Arch.MHA)
_FA4_SNAP = PageSnap("fa4", frozenset({PB}), frozenset({128}), arch=Arch.MHA)

RELEASE_0_5_7 = ReleaseRules(
    release="0.5.7",
    backend_choices=BASELINE_BACKENDS,
    kv_choices=BASELINE_KV,
    algorithm_choices=BASELINE_ALGORITHMS,
    backend_aliases={},
    defaults=_defaults(FA3_DEFAULT_ARCHITECTURES),
    model_overrides=_overrides(DEEPSEEK_FAMILY, "nsa"),
    assumed_architectures={Arch.MHA: "LlamaForCausalLM", Arch.MLA: "DeepseekV3ForCausalLM"},
    page_snaps=_snaps(BASELINE_BACKENDS, _TRTLLM_MHA_SNAP, fa4=_FA4_SNAP),
    gpu_gates=(
        BackendGate("trtllm_mla", AB_OR_DB, BLACKWELL),
        BackendGate("trtllm_mha", ANY_FLAG, SM100),
    ),
    kv_spellings=(spellings_of(MATRIX, "trtllm_mla"),),
    kv_gates={},
    kv_refused_at_build={},
    dtype_fallback=MATRIX.dtype_fallback_rules[0],
    prefill_only=tuple(b.name for b in MATRIX.backends if b.phases == {Phase.PREFILL}),
    decode_only={},
    mla_prefill_refused=(),
    spec_refusing=("flex_attention",),
    kv4=kv4_rules(MATRIX, frozenset({"fp4_e2m1"}), BASELINE_BACKENDS, {Arch.MLA: ("flashmla",)}),
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
        "defaults": code("0.5.7", _COMPAT),
        "fa3-architectures": code("0.5.7", "is_fa3_default_architecture",
                                  "sglang/srt/utils/common.py"),
        "model-overrides": code("0.5.7", "ServerArgs._handle_model_specific_adjustments"),
        "page-snaps": code("0.5.7", _COMPAT),
        "kv4": code("0.5.7", "ServerArgs._handle_kv4_compatibility"),
        "speculative": code("0.5.7", "ServerArgs._handle_speculative_decoding"),
        "spec-auto-params": code("0.5.7", "auto_choose_speculative_params"),
        "backend-build": code("0.5.7", "create_*_backend",
                              "sglang/srt/layers/attention/attention_registry.py"),
    },
)  # fmt: skip


# -- what changed in each later release ---------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One change of the start-up rules in one release, with where it was read."""

    summary: str
    evidence: Evidence
    updates: Mapping[str, Any]
    """ReleaseRules field -> new value, or a function of the previous value."""


@dataclass(frozen=True)
class ReleaseChanges:
    release: str
    changes: tuple[Change, ...]


def plus(*names: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    return lambda before: (*before, *(n for n in names if n not in before))


def minus(*names: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    return lambda before: tuple(n for n in before if n not in names)


def _with_family(*names: str) -> Callable[[tuple[ModelOverride, ...]], tuple[ModelOverride, ...]]:
    def add(before: tuple[ModelOverride, ...]) -> tuple[ModelOverride, ...]:
        return tuple(replace(o, architectures=o.architectures | set(names)) for o in before)

    return add


def _dsa_backend(name: str) -> Callable[[tuple[ModelOverride, ...]], tuple[ModelOverride, ...]]:
    return lambda before: tuple(replace(o, backend=name) if o.sparse else o for o in before)


def _gate(backend: str, fields: frozenset[Any], gate: GpuGate) -> Callable[..., Any]:
    def change(before: tuple[BackendGate, ...]) -> tuple[BackendGate, ...]:
        kept = tuple(g for g in before if g.backend != backend)
        return (*kept, BackendGate(backend, fields, gate))

    return change


def _snap_update(backend: str, snap: PageSnap | None) -> Callable[..., Any]:
    """Replace, add (before fa4's, in SGLang's order) or, with None, drop one backend's snap."""

    def change(before: tuple[PageSnap, ...]) -> tuple[PageSnap, ...]:
        kept = [s for s in before if s.backend != backend]
        if snap is None:
            return tuple(kept)
        at = next((i for i, s in enumerate(before) if s.backend == backend), None)
        if at is None:
            at = next(i for i, s in enumerate(kept) if s.backend == "fa4")
        kept.insert(at, snap)
        return tuple(kept)

    return change


def _intel_xpu_snaps(fields: frozenset[Any]) -> Callable[..., Any]:
    """Intel XPU's page sizes per architecture, read from the phases it runs (last in order)."""

    def change(before: tuple[PageSnap, ...]) -> tuple[PageSnap, ...]:
        kept = tuple(s for s in before if s.backend != "intel_xpu")
        return (*kept, PageSnap("intel_xpu", fields, frozenset({64, 128}), arch=Arch.MHA),
                PageSnap("intel_xpu", fields, frozenset({16, 32, 64, 128}), arch=Arch.MLA))

    return change


def _mtp_for(*names: str) -> Callable[..., Any]:
    def change(before: tuple[SpecAutoCase, ...]) -> tuple[SpecAutoCase, ...]:
        return tuple(
            replace(case, architectures=case.architectures | set(names))
            if case.params == MTP_PARAMS and case.architectures is not None else case
            for case in before
        )

    return change


def _kv4(spellings: frozenset[str], backends: tuple[str, ...]) -> Any:
    return kv4_rules(MATRIX, spellings, backends)


_BACKENDS_0_5_13 = (*BASELINE_BACKENDS, "dsv4", "compressed", "tokenspeed_mla", "dsa", "cutedsl_mla")
_BACKENDS_0_5_20 = tuple(
    b for b in (*_BACKENDS_0_5_13, "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "qsa")
    if b not in ("cutlass_mla", "dual_chunk_flash_attn")
)
_NEW_KV = frozenset({"nvfp4", "fp4_mx_block16"})

CHANGES: tuple[ReleaseChanges, ...] = (
    ReleaseChanges("0.5.8", (
        Change("fa4 may serve the decode phase (and `--attention-backend fa4`)",
               code("0.5.8", _COMPAT),
               {"prefill_only": (), "backend_phases": {"fa4": frozenset(Phase)}}),
        Change("the Hopper MHA default is fa3 for every model architecture",
               code("0.5.8", _COMPAT), {"defaults": _defaults(None)}),
        Change("automatic speculative parameters: (3, 1, 4) for every other architecture",
               code("0.5.8", "auto_choose_speculative_params"),
               {"spec_auto_params": lambda before: (*before[:-1], SpecAutoCase(MTP_PARAMS))}),
    )),
    ReleaseChanges("0.5.9", (
        Change("trtllm_mla's Blackwell check also admits SM110", code("0.5.9", _COMPAT),
               {"gpu_gates": _gate("trtllm_mla", AB_OR_DB, BLACKWELL_0_5_9)}),
        Change("the DeepSeek rules cover Kimi K2.5 and GLM-MoE-DSA",
               code("0.5.9", "ServerArgs._handle_model_specific_adjustments"),
               {"model_overrides": _with_family("KimiK25ForConditionalGeneration",
                                                "GlmMoeDsaForCausalLM")}),
    )),
    ReleaseChanges("0.5.10", (
        Change("trtllm_mha: the prefill phase needs SM100; the decode phase SM90, SM100 or SM120",
               code("0.5.10", _COMPAT),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", frozenset({RUNS_PREFILL}), SM100),
                   BackendGate("trtllm_mha", frozenset({RUNS_DECODE}), TRTLLM_MHA_DECODE_GPUS))}),
        Change("fa4 forces page size 128 only on SM100", code("0.5.10", _COMPAT),
               {"page_snaps": _snap_update("fa4", replace(_FA4_SNAP, gate=SM100))}),
    )),
    ReleaseChanges("0.5.11", (
        Change("intel_xpu cannot run the prefill phase of an MLA model; its page sizes follow "
               "the decode phase: 64 or 128 for MHA, 16 to 128 for MLA", code("0.5.11", _COMPAT),
               {"mla_prefill_refused": ("intel_xpu",),
                "page_snaps": _intel_xpu_snaps(frozenset({RUNS_DECODE}))}),
        Change("`--speculative-algorithm DFLASH` is accepted",
               code("0.5.11", "ServerArgs.add_cli_args"),
               {"algorithm_choices": plus("DFLASH")}),
    )),
    ReleaseChanges("0.5.12", (
        Change("new backends dsv4 (alias compressed) and tokenspeed_mla",
               code("0.5.12", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsv4", "compressed", "tokenspeed_mla"),
                "backend_aliases": {"compressed": "dsv4"}}),
        Change("tokenspeed_mla: Blackwell only, page size 32 or 64, FP8 (e4m3) KV cache only",
               code("0.5.12", _COMPAT),
               {"page_snaps": _snap_update(
                   "tokenspeed_mla", PageSnap("tokenspeed_mla", AB_OR_DB, frozenset({32, 64}))),
                "gpu_gates": _gate("tokenspeed_mla", AB_OR_DB, BLACKWELL_0_5_9),
                "kv_spellings": lambda before: (*before, ("tokenspeed_mla", ("fp8_e4m3",)))}),
        Change("the DeepSeek rules cover DeepSeek V3.2",
               code("0.5.12", "ServerArgs._handle_model_specific_adjustments"),
               {"model_overrides": _with_family("DeepseekV32ForCausalLM")}),
    )),
    ReleaseChanges("0.5.13", (
        Change("new backends dsa (nsa becomes its alias) and cutedsl_mla",
               code("0.5.13", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsa", "cutedsl_mla"),
                "model_overrides": _dsa_backend("dsa")}),
        Change("cutedsl_mla: decode only (prefill runs trtllm_mla), SM100, page size 32 or 64",
               code("0.5.13", _COMPAT),
               {"decode_only": {"cutedsl_mla": "trtllm_mla"},
                "page_snaps": _snap_update(
                    "cutedsl_mla", PageSnap("cutedsl_mla", ANY_FLAG, frozenset({32, 64}))),
                "gpu_gates": _gate("cutedsl_mla", ANY_FLAG, SM100),
                "kv_spellings": lambda before: (
                    *before, ("cutedsl_mla", ("fp8_e4m3", "bf16", "bfloat16", "auto")))}),
        Change("speculative topk > 1 with page size > 1 also runs on triton",
               code("0.5.13", "_handle_eagle_family", "sglang/srt/arg_groups/speculative_hook.py"),
               {"topk_paged_eagle": plus("triton")}),
    )),
    ReleaseChanges("0.5.15", (
        Change("fa4 forces page size 128 from any backend flag, on SM100, with topk of at most 1",
               code("0.5.15", "_fa4_page_constraint", _OVERRIDES),
               {"page_snaps": _snap_update("fa4", replace(
                   _FA4_SNAP, fields=ANY_FLAG, gate=SM100, max_topk=1))}),
        Change("trtllm_mha's topk 1 limit reads the phases' backends, not the flags",
               code("0.5.15", "_handle_eagle_family", "sglang/srt/arg_groups/speculative_hook.py"),
               {"topk_one_only_fields": EITHER_PHASE}),
    )),
    ReleaseChanges("0.5.16", (
        Change("new KV dtypes mxfp8, nvfp4 and fp4_mx_block16; the KV4 check keys on the new two",
               code("0.5.16", "ServerArgs._handle_kv4_compatibility"),
               {"kv_choices": plus("mxfp8", "nvfp4", "fp4_mx_block16"),
                "kv4": _kv4(_NEW_KV, _BACKENDS_0_5_13)}),
        Change("flashmla leaves the KV4 list (the code now agrees with the page)",
               code("0.5.16", "ServerArgs._handle_kv4_compatibility"), {}),
        Change("nvfp4 needs SM100 or SM120; mxfp8 needs Blackwell",
               code("0.5.16", "ServerArgs._handle_mxfp8_kv_cache_compatibility"),
               {"kv_gates": {"nvfp4": SM100_OR_SM120, "mxfp8": BLACKWELL_0_5_9}}),
        Change("fp4_e2m1 is deprecated: start-up lets it through, the KV pool refuses it",
               code("0.5.16", "kv_cache_dtype", "sglang/srt/mem_cache/kv_cache_dtype.py"),
               {"kv_refused_at_build": {"fp4_e2m1": "deprecated: use nvfp4 or fp4_mx_block16"}}),
    )),
    ReleaseChanges("0.5.17", (
        Change("new backend hpc_ops (page size 64)", code("0.5.17", _COMPAT, _OVERRIDES),
               {"backend_choices": plus("hpc_ops"),
                "page_snaps": _snap_update(
                    "hpc_ops", PageSnap("hpc_ops", ANY_FLAG, frozenset({64})))}),
        Change("trtllm_mha also runs page size 128", code("0.5.17", "_mla_backend_page_constraints",
                                                           _OVERRIDES),
               {"page_snaps": _snap_update("trtllm_mha", replace(
                   _TRTLLM_MHA_SNAP, sizes=frozenset({16, 32, 64, 128}), target=64))}),
    )),
    ReleaseChanges("0.5.19", (
        Change("trtllm_mha's prefill phase also runs on SM90 and SM120",
               code("0.5.19", "handle_attention_backend_compatibility", _ATTENTION_HOOK),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", EITHER_PHASE, TRTLLM_MHA_DECODE_GPUS))}),
        Change("new backends minicpm_flashattn and minicpm_flashinfer",
               code("0.5.19", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("minicpm_flashattn", "minicpm_flashinfer")}),
        Change("a ServerArgs holds the raw flags; `resolve_once()` resolves them",
               code("0.5.19", "ServerArgs.resolve_once"), {}),
    )),
    ReleaseChanges("0.5.20", (
        Change("cutlass_mla and dual_chunk_flash_attn are removed; qsa is new",
               code("0.5.20", "ATTENTION_BACKEND_CHOICES", _CHOICES),
               {"backend_choices": lambda before: plus("qsa")(
                   minus("cutlass_mla", "dual_chunk_flash_attn")(before)),
                "page_snaps": _snap_update("cutlass_mla", None),
                "kv4": _kv4(_NEW_KV, _BACKENDS_0_5_20),
                "dual_chunk_backend": None}),
        Change("intel_xpu may run the prefill phase of an MLA model; its page sizes follow "
               "either phase", code("0.5.20", "handle_attention_backend_compatibility",
                                    _ATTENTION_HOOK),
               {"mla_prefill_refused": (), "page_snaps": _intel_xpu_snaps(EITHER_PHASE)}),
    )),
    ReleaseChanges("0.5.21", (
        Change("fp4_e2m1 is no longer accepted", code("0.5.21", "kv_cache_dtype choices",
                                                      "sglang/srt/arg_groups/fields/model.py"),
               {"kv_choices": minus("fp4_e2m1"), "kv_refused_at_build": {},
                "replacements": {"fp4_e2m1": ("nvfp4", "fp4_mx_block16")}}),
        Change("trtllm_mla no longer takes an FP4 KV cache",
               code("0.5.21", "_mla_kv_cache_dtype_checks", _OVERRIDES),
               {"kv_spellings": lambda before: tuple(
                   (n, tuple(d for d in kinds if d != "fp4_e2m1")) for n, kinds in before)}),
        Change("nvfp4 picks its prefill and decode backends (trtllm_mha on SM100)",
               code("0.5.21", "handle_nvfp4_prefill_kv_dequant_dtype", _KV_HOOK),
               {"nvfp4_prefill_backends": {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}}),
    )),
    ReleaseChanges("0.5.22", (
        Change("new backend llada2_cfg_flashinfer", code("0.5.22", "ATTENTION_BACKEND_CHOICES",
                                                         _CHOICES),
               {"backend_choices": plus("llada2_cfg_flashinfer")}),
    )),
    ReleaseChanges("0.5.23", (
        Change("tokenspeed_mla becomes a deprecated alias of cutedsl_mla (prefill on trtllm_mla, "
               "an FP8 e4m3 KV cache)",
               code("0.5.23", "handle_deprecated_args", "sglang/srt/arg_groups/serving_hook.py"),
               {"backend_aliases": {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"},
                "alias_kv_dtypes": {"tokenspeed_mla": "fp8_e4m3"},
                "page_snaps": _snap_update("tokenspeed_mla", None),
                "gpu_gates": lambda before: tuple(g for g in before if g.backend != "tokenspeed_mla"),
                "kv_spellings": lambda before: tuple(k for k in before if k[0] != "tokenspeed_mla")}),
    )),
)  # fmt: skip

# Releases whose attention start-up rules are those of the release before.
SAME_AS_BEFORE = ("0.5.14", "0.5.18")


RELEASE_NAMES = tuple(f"0.5.{minor}" for minor in range(7, 24))
CHANGES_BY_RELEASE = {delta.release: delta for delta in CHANGES}
assert set(CHANGES_BY_RELEASE) | set(SAME_AS_BEFORE) == set(RELEASE_NAMES[1:]), "a release is missing"


class _Releases(Mapping[str, ReleaseRules]):
    """Release -> rules, folded from the baseline on first use: a guard loads only its own."""

    def __init__(self) -> None:
        self._folded: dict[str, ReleaseRules] = {"0.5.7": RELEASE_0_5_7}

    def __getitem__(self, release: str) -> ReleaseRules:
        rules = self._folded.get(release)
        if rules is None:
            if release not in RELEASE_NAMES:
                raise KeyError(release)
            before = self[RELEASE_NAMES[RELEASE_NAMES.index(release) - 1]]
            rules = self._folded[release] = _apply(before, release)
        return rules

    def __iter__(self) -> Iterator[str]:
        return iter(RELEASE_NAMES)

    def __len__(self) -> int:
        return len(RELEASE_NAMES)

    def __contains__(self, release: object) -> bool:
        return release in RELEASE_NAMES


def _apply(before: ReleaseRules, release: str) -> ReleaseRules:
    delta = CHANGES_BY_RELEASE.get(release)
    if delta is None:  # the same rules as the release before
        return replace(before, release=release)
    updates: dict[str, Any] = {"release": release}
    for change in delta.changes:
        for name, value in change.updates.items():
            current = updates.get(name, getattr(before, name))
            updates[name] = value(current) if callable(value) else value
    return replace(before, **updates)


# -- which release --------------------------------------------------------------------

RELEASES: Mapping[str, ReleaseRules] = _Releases()
NEWEST: str = RELEASE_NAMES[-1]
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
def release_matrix(release: str) -> Matrix:
    """The page's matrix as of `release`: the baseline with the release's backend changes."""
    rules = RELEASES[release]
    added = tuple(b for b in LATER_BACKENDS if b.name in rules.backend_set)
    if not rules.backend_phases and not added:
        return MATRIX
    backends = tuple(
        replace(b, phases=rules.backend_phases.get(b.name, b.phases)) for b in MATRIX.backends
    )
    sources = (*MATRIX.sources, LATER_RELEASES) if added else MATRIX.sources
    return replace(MATRIX, backends=backends + added, sources=sources)


def releases_accepting(attribute: str, value: str) -> tuple[str, ...]:
    """The releases whose `attribute` (e.g. kv_choices) holds `value`."""
    return tuple(r for r, rules in RELEASES.items() if value in getattr(rules, attribute))


@cache
def installed_sglang_version() -> str | None:
    """The installed `sglang` distribution's version, read from its metadata (never imported)."""
    from importlib import metadata

    try:
        return metadata.version("sglang")
    except metadata.PackageNotFoundError:
        return None
