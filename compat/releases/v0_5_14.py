"""SGLang 0.5.14: MXFP4 checkpoints also run on the CPU engine; the page gains tokenspeed_mla's row."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import NO, YES, native, row
from compat.engine.model_rules import MachinePage, MambaCache
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import Change, DocChange, NewRow, Release
from compat.releases.families import (
    BAILING_V2_5,
    ON_CPU,
    ON_CUDA,
    ON_NPU,
    ON_ROCM_MXFP,
    added,
    chained,
    changed,
    extended,
    split,
)
from compat.releases.shared import code
from compat.vocab.terms import Arch

RELEASE = Release(
    "0.5.14",
    changes=(
        Change("the extra_buffer Mamba cache, now picked where a model supports it, is not "
               "JetNemotron's nor JetVLM's (they keep no_buffer), and is BailingMoeV2.5's",
               code("0.5.14", "ServerArgs._support_mamba_cache_extra_buffer (line 4246)"),
               {"model_rules": chained(
                   split("falcon-h1-backend", "jet-backend",
                         frozenset({"JetNemotronForCausalLM", "JetVLMForConditionalGeneration"}),
                         mamba=MambaCache.NO_BUFFER),
                   added(BAILING_V2_5))}),
        Change("hybrid models' Mamba cache picks its strategy: extra_buffer where the model "
               "supports it (Qwen3-Next, Nemotron-H, Falcon-H1; its FLA kernels need CUDA or NPU), "
               "else no_buffer, which runs page size 1 only and no trtllm_mha; Qwen3-Next's SM100 "
               "default sets the page size (64 with trtllm_mha, else 1)",
               code("0.5.14", "ServerArgs._handle_mamba_radix_cache"),
               {"hybrid_cache": lambda before: replace(
                   before, picks_strategy=True, page_one=False,
                   extra_buffer_machines=(ON_CUDA, ON_NPU)),
                "model_rules": changed("qwen3-next-backend", default_pages={"trtllm_mha": 64})}),
        Change("a model's extra_buffer support also needs --linear-attn-backend triton (the "
               "default); with another linear-attention kernel it takes no_buffer",
               code("0.5.14", "ServerArgs._support_mamba_cache_extra_buffer (line 4351)"),
               {"hybrid_cache": lambda before: replace(before, extra_buffer_linear_attn="triton")}),
        Change("DeepSeek V4 also runs a bfloat16 KV cache; on NPU its page is 128",
               code("0.5.14", "apply_deepseek_v4_defaults (lines 18-40)",
                    "sglang/srt/arg_groups/deepseek_v4_hook.py"),
               {"model_rules": chained(
                   extended("deepseek-v4-backend", kv_dtypes=("bfloat16",)),
                   changed("deepseek-v4-backend",
                           pages=(MachinePage(128, ON_NPU), MachinePage(256))))}),
        Change("mxfp4 quantization is registered on the CPU engine too",
               code("0.5.14", "QUANTIZATION_METHODS", "sglang/srt/layers/quantization/__init__.py"),
               {"quantization": lambda before: replace(
                   before, gated={"mxfp4": (ON_CPU, ON_CUDA, ON_ROCM_MXFP)})}),
    ),
    doc_changes=(
        DocChange("tokenspeed_mla's row is on the page now; its cells are those read from the "
                  "code in 0.5.12",
                  commit("99c18cceecece3d0705fce113774e0bfc5d12ba8", 28674, "2026-06-22",
                         "Sync server arguments and environment variables + update various "
                         "documentation"),
                  page=tagged_page("0.5.14", "docs_new/docs/advanced_features/attention_backend.mdx"),
                  rows=(NewRow(Arch.MLA, row("tokenspeed_mla", "TokenSpeed MLA (Blackwell)",
                        native_page_sizes=native(32, 64, fixed=True), fp8_kv=YES, fp4_kv=NO,
                        chunked_prefix_cache=YES, spec_topk_1=YES, spec_topk_gt1=NO)),)),
    ),
)  # fmt: skip
