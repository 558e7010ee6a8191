"""SGLang 0.5.8: fa4 runs decode too; fa3 is Hopper's MHA default for every architecture."""

from __future__ import annotations

from compat.engine.model_rules import MachinePage
from compat.engine.rules import SpecAutoCase
from compat.releases.entry import Change, DocChange, Release
from compat.releases.families import ON_NPU, ON_ROCM, changed, extended
from compat.releases.shared import COMPAT, MODEL_ADJUSTMENTS, MTP_PARAMS, code, defaults
from compat.vocab.terms import Phase

RELEASE = Release(
    "0.5.8",
    changes=(
        Change("fa4 may serve the decode phase (and `--attention-backend fa4`)",
               code("0.5.8", COMPAT), {"prefill_only": ()}),
        Change("the Hopper MHA default is fa3 for every model architecture",
               code("0.5.8", COMPAT), {"defaults": defaults(None)}),
        Change("GPT-OSS also runs ascend", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": extended("gpt-oss-backends", allowed=("ascend",))}),
        Change("DeepSeek DSA runs page size 1 on ROCm, and turns DP attention on only for its "
               "prefill context parallelism", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": changed("dsa-backend", forces_dp_attention=False, pages=(
                   MachinePage(None, ON_NPU), MachinePage(1, ON_ROCM), MachinePage(64)))}),
        Change("Nemotron-H: speculative decoding turns the radix cache off, and with it the "
               "SM100 default", code("0.5.8", MODEL_ADJUSTMENTS),
               {"model_rules": changed("nemotron-h-backend", default_without_speculation=True)}),
        Change("a decode server with DP above 1 no longer needs the round-robin balance",
               code("0.5.8", "ServerArgs._handle_pd_disaggregation"),
               {"decode_dp_needs_round_robin": False}),
        Change("automatic speculative parameters: (3, 1, 4) for every other architecture",
               code("0.5.8", "auto_choose_speculative_params"),
               {"spec_auto_params": lambda before: (*before[:-1], SpecAutoCase(MTP_PARAMS))}),
    ),
    doc_changes=(
        DocChange("fa4 serves both phases", code("0.5.8", COMPAT),
                  phases={"fa4": frozenset(Phase)}),
    ),
)  # fmt: skip
