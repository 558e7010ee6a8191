"""SGLang 0.5.23: tokenspeed_mla becomes a deprecated alias of cutedsl_mla."""

from __future__ import annotations

from compat.releases.doc import unread_page, wheel
from compat.releases.entry import Change, DocChange, Release
from compat.releases.families import extended
from compat.releases.shared import code, snap

PAGE = unread_page("0.5.23")

RELEASE = Release(
    "0.5.23",
    changes=(
        Change("MiniCPM-V 4.6's branch also takes MiniCPMV4_7ForConditionalGeneration",
               code("0.5.23", "_minicpm_v4_6_overrides (line 14)",
                    "sglang/srt/arg_groups/model_overrides/minicpmv.py"),
               {"model_rules": extended("minicpm-v4-6-backend",
                                        architectures=("MiniCPMV4_7ForConditionalGeneration",))}),
        Change("tokenspeed_mla becomes a deprecated alias of cutedsl_mla (prefill on trtllm_mla, "
               "an FP8 e4m3 KV cache)",
               code("0.5.23", "handle_deprecated_args", "sglang/srt/arg_groups/serving_hook.py"),
               {"backend_aliases": {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"},
                "alias_kv_dtypes": {"tokenspeed_mla": "fp8_e4m3"},
                "page_snaps": snap("tokenspeed_mla", None),
                "gpu_gates": lambda before: tuple(g for g in before if g.backend != "tokenspeed_mla"),
                "kv_spellings": lambda before: tuple(k for k in before if k[0] != "tokenspeed_mla")}),
    ),
    doc_changes=(
        DocChange("no change of the page's tables is known (its tag could not be read)", PAGE,
                  page=PAGE),
        DocChange("tokenspeed_mla leaves with its row: it is another name for cutedsl_mla now",
                  wheel("0.5.23", "sglang/srt/arg_groups/serving_hook.py", "handle_deprecated_args",
                        304, "start-up rewrites tokenspeed_mla to cutedsl_mla; the attention "
                        "registry no longer has it"),
                  removed=("tokenspeed_mla",), aliases={"tokenspeed_mla": "cutedsl_mla"}),
    ),
)  # fmt: skip
