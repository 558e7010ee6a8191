"""SGLang 0.5.15: fa4's page size 128 from any backend flag; trtllm_mha's topk on phases."""

from __future__ import annotations

from msgspec.structs import replace

from compat.engine.rules import ANY_FLAG, EITHER_PHASE
from compat.releases.doc import tagged_page
from compat.releases.entry import Change, DocChange, Release
from compat.releases.families import OVERRIDES_FILE, changed, extended, moved
from compat.releases.shared import (
    FA4_SNAP,
    MODEL_ADJUSTMENTS,
    OVERRIDES,
    SM100,
    SPECULATIVE_HOOK,
    code,
    snap,
)

PAGE = tagged_page("0.5.15", "docs_new/docs/advanced_features/attention_backend.mdx")

RELEASE = Release(
    "0.5.15",
    changes=(
        Change("deterministic inference's list is checked in the override registry's "
               "post-process (`_deterministic_attention_backend`), which the handler runs",
               code("0.5.15", "_deterministic_attention_backend (line 1469)", OVERRIDES),
               {"deterministic": lambda before: replace(
                   before, source="arg_groups/overrides.py, _deterministic_attention_backend")}),
        Change("Nemotron-H's branch also takes NemotronHPuzzleForCausalLM",
               code("0.5.15", "_nemotron_h_overrides (line 727)", OVERRIDES),
               {"model_rules": extended("nemotron-h-backend",
                                        architectures=("NemotronHPuzzleForCausalLM",))}),
        Change("Gemma 4's default moves to the override registry (its list stays in the "
               "model branch, line 4135, and also runs ascend)",
               code("0.5.15", "_gemma4_overrides (line 609)", OVERRIDES),
               {"model_rules": extended("gemma4-backend", allowed=("ascend",))}),
        Change("fa4 forces page size 128 from any backend flag, on SM100, with topk of at most 1",
               code("0.5.15", "_fa4_page_constraint", OVERRIDES),
               {"page_snaps": snap("fa4", replace(
                   FA4_SNAP, fields=ANY_FLAG, gate=SM100, max_topk=1))}),
        Change("the Llama 4 branch takes its two architectures by name (no longer any name "
               "containing Llama4)", code("0.5.15", MODEL_ADJUSTMENTS),
               {"model_rules": changed("llama4-backends", substring=None)}),
        Change("trtllm_mha's topk 1 limit reads the phases' backends, not the flags",
               code("0.5.15", "_handle_eagle_family", SPECULATIVE_HOOK),
               {"topk_one_only_fields": EITHER_PHASE}),
        Change("DeepSeek V4's backend and page move to the override registry, its KV dtype to "
               "a resolution pass",
               code("0.5.15", "_deepseek_v4_overrides (line 684), _deepseek_v4_kv_cache_dtype "
                    "(line 1299)", OVERRIDES),
               {"model_rules": moved(f"{OVERRIDES_FILE}, _deepseek_v4_overrides",
                                     "deepseek-v4-backend")}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables", PAGE, page=PAGE),
    ),
)  # fmt: skip
