"""SGLang 0.5.17: new backend hpc_ops; trtllm_mha also runs page size 128."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.backends import Backend
from compat.claim.baseline import BOTH, CUDA_ONLY, MHA_ONLY, NO, YES, native, row
from compat.engine.model_rules import MachineChoice, MachinePage
from compat.engine.rules import ANY_FLAG, PageSnap
from compat.releases.doc import commit, tagged_page, wheel
from compat.releases.entry import Change, DocChange, NewRow, Release, plus
from compat.releases.families import KIMI_K3, ON_ROCM, ON_SM90, ON_SM100, added, changed, extended
from compat.releases.shared import COMPAT, OVERRIDES, TRTLLM_MHA_SNAP, code, snap
from compat.vocab.terms import Arch, ModelFeature

RELEASE = Release(
    "0.5.17",
    changes=(
        Change("Kimi-K3 on SM100 with no backend flag (and no DSPARK or decode context "
               "parallelism) prefills and decodes on trtllm_mla",
               code("0.5.17", "_kimi_k3_overrides (lines 443-452)", OVERRIDES),
               {"model_rules": added(KIMI_K3)}),
        Change("MiniMax-M3 on SM100 with `--kv-cache-dtype fp8_e4m3` and no backend flag runs "
               "trtllm_mha (its fp8 attention GEMMs), which also takes page size 128",
               code("0.5.17", "_minimax_m3_overrides (lines 746-768)", OVERRIDES),
               {"model_rules": changed(
                   "minimax-m3-backend",
                   defaults=(MachineChoice("triton", ON_ROCM),
                             MachineChoice("trtllm_mha", ON_SM100, kv="fp8_e4m3"),
                             MachineChoice("fa4", ON_SM100), MachineChoice("fa3", ON_SM90)),
                   pages=(MachinePage(None, ON_ROCM),
                          MachinePage(128, ON_SM100, backends=frozenset({"fa4", "trtllm_mha"}),
                                      unset_only=True),
                          MachinePage(128, ON_SM90, backends=frozenset({"fa3"}),
                                      unset_only=True)))}),
        Change("LFM2's branch also takes Lfm2MoeForCausalLM",
               code("0.5.17", "_lfm2_overrides (line 1074)", OVERRIDES),
               {"model_rules": extended("lfm2-backend", architectures=("Lfm2MoeForCausalLM",))}),
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
        DocChange("new backend hpc_ops (MHA)",
                  commit("0a6d1930c36079dc08aeee6df41be5ebef195f39", 30540, "2026-07-22",
                         "Add HPC-Ops attention backend"),
                  page=tagged_page("0.5.17", "docs/docs/advanced_features/attention_backend.mdx"),
                  backends=(
            Backend("hpc_ops", BOTH, CUDA_ONLY, archs=MHA_ONLY,
                    refuses_features=frozenset({ModelFeature.ENCODER_DECODER}),
                    note="Page size 64; no speculative decoding.",
                    evidence=wheel("0.5.17", "sglang/srt/layers/attention/attention_registry.py",
                                   "create_hpc_ops_backend", 263,
                                   "the factory refuses MLA and encoder-decoder models")),
        ), rows=(NewRow(Arch.MHA, row("hpc_ops", "HPC-Ops",
                 native_page_sizes=native(64, fixed=True), fp8_kv=YES, fp4_kv=NO, spec_topk_1=NO,
                 spec_topk_gt1=NO, sliding_window=NO, multimodal=NO)),)),
    ),
)  # fmt: skip
