"""SGLang 0.5.23: tokenspeed_mla becomes a deprecated alias of cutedsl_mla."""

from __future__ import annotations

from compat.releases.entry import Change, Release
from compat.releases.shared import code, snap

RELEASE = Release(
    "0.5.23",
    changes=(
        Change("tokenspeed_mla becomes a deprecated alias of cutedsl_mla (prefill on trtllm_mla, "
               "an FP8 e4m3 KV cache)",
               code("0.5.23", "handle_deprecated_args", "sglang/srt/arg_groups/serving_hook.py"),
               {"backend_aliases": {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"},
                "alias_kv_dtypes": {"tokenspeed_mla": "fp8_e4m3"},
                "page_snaps": snap("tokenspeed_mla", None),
                "gpu_gates": lambda before: tuple(g for g in before if g.backend != "tokenspeed_mla"),
                "kv_spellings": lambda before: tuple(k for k in before if k[0] != "tokenspeed_mla")}),
    ),
)  # fmt: skip
