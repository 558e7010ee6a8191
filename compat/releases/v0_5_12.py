"""SGLang 0.5.12: new backends dsv4 (alias compressed) and tokenspeed_mla; DeepSeek V3.2."""

from __future__ import annotations

from dataclasses import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BLACKWELL as BLACKWELL_CC
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES, MLA_ONLY
from compat.engine.rules import AB_OR_DB, PageSnap
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.families import with_family
from compat.releases.shared import (
    BLACKWELL_0_5_9,
    COMPAT,
    MODEL_ADJUSTMENTS,
    code,
    gate,
    snap,
)
from compat.vocab.terms import Arch, KvDtype

RELEASE = Release(
    "0.5.12",
    changes=(
        Change("new backends dsv4 (alias compressed) and tokenspeed_mla",
               code("0.5.12", "ATTENTION_BACKEND_CHOICES"),
               {"backend_choices": plus("dsv4", "compressed", "tokenspeed_mla"),
                "backend_aliases": {"compressed": "dsv4"}}),
        Change("tokenspeed_mla: Blackwell only, page size 32 or 64, FP8 (e4m3) KV cache only",
               code("0.5.12", COMPAT),
               {"page_snaps": snap(
                   "tokenspeed_mla", PageSnap("tokenspeed_mla", AB_OR_DB, frozenset({32, 64}))),
                "gpu_gates": gate("tokenspeed_mla", AB_OR_DB, BLACKWELL_0_5_9),
                "kv_spellings": lambda before: (*before, ("tokenspeed_mla", ("fp8_e4m3",)))}),
        Change("the DeepSeek rules cover DeepSeek V3.2", code("0.5.12", MODEL_ADJUSTMENTS),
               {"model_rules": with_family("DeepseekV32ForCausalLM")}),
        Change("SGLang reads deepseek_v32 configs itself (no reload as DeepseekV3)",
               code("0.5.12", "_CONFIG_REGISTRY", "sglang/srt/utils/hf_transformers/common.py"),
               {"loader": lambda before: replace(
                   before, reloads={},
                   source="utils/hf_transformers/config.py, get_config (transformers 5.6.0)")}),
        Change("deterministic inference runs before the default decision and picks its own "
               "backend when `--attention-backend` is unset",
               code("0.5.12", "ServerArgs.__post_init__"),
               {"deterministic": lambda before: replace(before, picks_default=True)}),
    ),
    doc_changes=(
        DocChange("new backends dsv4 and tokenspeed_mla", LATER_RELEASES, backends=(
            Backend("dsv4", BOTH, CUDA_ONLY, archs=MLA_ONLY,
                    note="DeepSeek V4 models only; `compressed` is its deprecated name.",
                    evidence=LATER_RELEASES),
            Backend("tokenspeed_mla", BOTH, CUDA_ONLY, capability={Arch.MLA: BLACKWELL_CC},
                    archs=MLA_ONLY, kv_dtypes=frozenset({KvDtype.FP8_E4M3}),
                    note="Blackwell; an FP8 (e4m3) KV cache only.", evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
