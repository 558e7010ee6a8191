"""SGLang 0.5.17: new backend hpc_ops; trtllm_mha also runs page size 128."""

from __future__ import annotations

from dataclasses import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, LATER_RELEASES, MHA_ONLY
from compat.engine.rules import ANY_FLAG, PageSnap
from compat.releases.entry import Change, DocChange, Release, plus
from compat.releases.shared import COMPAT, OVERRIDES, TRTLLM_MHA_SNAP, code, snap
from compat.vocab.terms import ModelFeature

RELEASE = Release(
    "0.5.17",
    changes=(
        Change("new backend hpc_ops (page size 64)", code("0.5.17", COMPAT, OVERRIDES),
               {"backend_choices": plus("hpc_ops"),
                "page_snaps": snap("hpc_ops", PageSnap("hpc_ops", ANY_FLAG, frozenset({64})))}),
        Change("deterministic inference with a DeepSeek-type model also runs ascend and fa4",
               code("0.5.17", "ServerArgs._handle_deterministic_inference"),
               {"deterministic": lambda before: replace(
                   before, deepseek_backends=("ascend", "fa3", "fa4", "triton"))}),
        Change("trtllm_mha also runs page size 128",
               code("0.5.17", "_mla_backend_page_constraints", OVERRIDES),
               {"page_snaps": snap("trtllm_mha", replace(
                   TRTLLM_MHA_SNAP, sizes=frozenset({16, 32, 64, 128}), target=64))}),
    ),
    doc_changes=(
        DocChange("new backend hpc_ops", LATER_RELEASES, backends=(
            Backend("hpc_ops", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    refuses_features=frozenset({ModelFeature.ENCODER_DECODER}),
                    note="Page size 64; no speculative decoding.", evidence=LATER_RELEASES),
        )),
    ),
)  # fmt: skip
