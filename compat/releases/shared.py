"""What several release entries share: SGLang's GPU predicates, model lists, update helpers.

The values are read from the releases' code (each entry names where); the helpers build the
updates a `Change` applies to the previous release's rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from compat.engine.launch import Launch
from compat.engine.rules import (
    AB,
    ANY_FLAG,
    PB,
    BackendGate,
    DefaultBranch,
    GpuGate,
    Kv4Rules,
    PageSnap,
    SpecParams,
)
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, Platform


def code(release: str, function: str, file: str = "sglang/srt/server_args.py") -> Evidence:
    """Evidence: a function of a file of a release's wheel."""
    return Evidence(source=f"sglang {release} wheel, {file}, {function}")


COMPAT = "ServerArgs._handle_attention_backend_compatibility"
MODEL_ADJUSTMENTS = "ServerArgs._handle_model_specific_adjustments"
OVERRIDES = "sglang/srt/arg_groups/overrides.py"
ATTENTION_HOOK = "sglang/srt/arg_groups/attention_hook.py"
KV_HOOK = "sglang/srt/arg_groups/kv_cache_hook.py"
SPECULATIVE_HOOK = "sglang/srt/arg_groups/speculative_hook.py"
CHOICES = "sglang/srt/arg_groups/choices.py"

# SGLang's GPU predicates (`sglang/srt/utils/common.py`).
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
MTP_PARAMS = SpecParams(3, 1, 4)
TREE_PARAMS = SpecParams(5, 4, 8)
MTP_ARCHITECTURES = frozenset({
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM",
    "GptOssForCausalLM", "Glm4MoeForCausalLM", "BailingMoeForCausalLM",
    "BailingMoeV2ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
    "MiMoV2FlashForCausalLM",
})  # fmt: skip

# The page-size snaps more than one release keeps or changes.
TRTLLM_MHA_SNAP = PageSnap("trtllm_mha", ANY_FLAG, frozenset({16, 32, 64}))
FA4_SNAP = PageSnap("fa4", frozenset({PB}), frozenset({128}), arch=Arch.MHA)
INTEL_XPU_SNAP = PageSnap("intel_xpu", frozenset({AB}), frozenset({32, 64, 128}))


def dsa_auto_kv(launch: Launch) -> str:
    """A DSA model's KV dtype when `auto`: FP8 (e4m3) from SM100 on, else bfloat16."""
    major = launch.capability.major if launch.capability is not None else 0
    return "fp8_e4m3" if major >= 10 else "bfloat16"


def defaults(fa3_architectures: frozenset[str] | None) -> tuple[DefaultBranch, ...]:
    """The default decision, its branches in SGLang's order."""
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


# -- updates: functions of the previous release's value ----------------------------------------


def gate(backend: str, fields: frozenset[Any], gpus: GpuGate) -> Callable[..., Any]:
    """One backend's GPU check, replaced (or added last)."""

    def change(before: tuple[BackendGate, ...]) -> tuple[BackendGate, ...]:
        kept = tuple(g for g in before if g.backend != backend)
        return (*kept, BackendGate(backend, fields, gpus))

    return change


def snap(backend: str, new: PageSnap | None) -> Callable[..., Any]:
    """Replace, add (before fa4's, in SGLang's order) or, with None, drop one backend's snap."""

    def change(before: tuple[PageSnap, ...]) -> tuple[PageSnap, ...]:
        kept = [s for s in before if s.backend != backend]
        if new is None:
            return tuple(kept)
        at = next((i for i, s in enumerate(before) if s.backend == backend), None)
        if at is None:
            at = next(i for i, s in enumerate(kept) if s.backend == "fa4")
        kept.insert(at, new)
        return tuple(kept)

    return change


def intel_xpu_snaps(fields: frozenset[Any]) -> Callable[..., Any]:
    """Intel XPU's page sizes per architecture, read from the phases it runs (last in order)."""

    def change(before: tuple[PageSnap, ...]) -> tuple[PageSnap, ...]:
        kept = tuple(s for s in before if s.backend != "intel_xpu")
        return (*kept, PageSnap("intel_xpu", fields, frozenset({64, 128}), arch=Arch.MHA),
                PageSnap("intel_xpu", fields, frozenset({16, 32, 64, 128}), arch=Arch.MLA))  # fmt: skip

    return change




def kv4_without(backend: str) -> Callable[[Kv4Rules], Kv4Rules]:
    """The KV4 check with `backend` gone from its MLA lists."""

    def change(before: Kv4Rules) -> Kv4Rules:
        def drop(lists: dict[Arch, tuple[str, ...]] | Any) -> dict[Arch, tuple[str, ...]]:
            return {arch: tuple(b for b in names if b != backend) for arch, names in lists.items()}

        return replace(before, single=drop(before.single), pair_partners=drop(before.pair_partners))

    return change
