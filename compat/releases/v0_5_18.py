"""SGLang 0.5.18: the extra_buffer Mamba cache runs on XPU too; the page's tables of 0.5.17."""

from __future__ import annotations

from msgspec.structs import replace

from compat.releases.doc import tagged_page
from compat.releases.entry import Change, DocChange, Release
from compat.releases.families import ON_CUDA, ON_NPU, ON_ROCM, ON_XPU, extended
from compat.releases.shared import code

PAGE = tagged_page("0.5.18", "docs/docs/advanced_features/attention_backend.mdx")

RELEASE = Release(
    "0.5.18",
    changes=(
        Change("deterministic inference counts GLM-4-MoE-Lite as a DeepSeek-type model",
               code("0.5.18", "_deterministic_is_deepseek_model (line 2058)",
                    "sglang/srt/arg_groups/overrides.py"),
               {"deterministic": lambda before: replace(
                   before, deepseek_architectures=before.deepseek_architectures
                   | {"Glm4MoeLiteForCausalLM"})}),
        Change("Qwen3.5's hybrid branch also takes InternS2MobiusForConditionalGeneration",
               code("0.5.18", "_qwen3_5_hybrid_overrides (line 1319)",
                    "sglang/srt/arg_groups/overrides.py"),
               {"model_rules": extended("qwen3-next-backend",
                                        architectures=("InternS2MobiusForConditionalGeneration",))}),
        Change("Gemma 4 also runs intel_amx",
               code("0.5.18", "ServerArgs._handle_model_specific_adjustments (line 5672)"),
               {"model_rules": extended("gemma4-backend", allowed=("intel_amx",))}),
        Change("hybrid models' extra_buffer Mamba cache also runs on XPU",
               code("0.5.18", "ServerArgs._validate_mamba_extra_buffer"),
               {"hybrid_cache": lambda before: replace(
                   before, extra_buffer_machines=(ON_CUDA, ON_NPU, ON_ROCM, ON_XPU))}),
    ),
    doc_changes=(DocChange("no change of the page's tables", PAGE, page=PAGE),),
)  # fmt: skip
