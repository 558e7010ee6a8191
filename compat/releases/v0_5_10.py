"""SGLang 0.5.10: trtllm_mha's GPU check per phase; fa4's page size 128 only on SM100."""

from __future__ import annotations

from msgspec.structs import replace

from compat.claim.baseline import MATRIX, YES
from compat.claim.columns import ColumnId
from compat.engine.model_rules import SpecWithRadix
from compat.engine.rules import RUNS_DECODE, RUNS_PREFILL, BackendGate, DefaultBranch
from compat.releases.doc import commit, tagged_page
from compat.releases.entry import CellChange, Change, DocChange, Release
from compat.releases.families import (
    ON_ROCM,
    ON_SM90,
    ON_SM100,
    WHISPER,
    chained,
    changed,
    choices,
    extended,
)
from compat.releases.shared import (
    COMPAT,
    FA4_SNAP,
    MODEL_ADJUSTMENTS,
    SM100,
    TRTLLM_MHA_DECODE_GPUS,
    code,
    snap,
)
from compat.vocab.terms import Arch, Phase

RELEASE = Release(
    "0.5.10",
    changes=(
        Change("trtllm_mha: the prefill phase needs SM100; the decode phase SM90, SM100 or SM120",
               code("0.5.10", COMPAT),
               {"gpu_gates": lambda before: (
                   *(g for g in before if g.backend != "trtllm_mha"),
                   BackendGate("trtllm_mha", frozenset({RUNS_PREFILL}), SM100),
                   BackendGate("trtllm_mha", frozenset({RUNS_DECODE}), TRTLLM_MHA_DECODE_GPUS))}),
        Change("fa4 forces page size 128 only on SM100", code("0.5.10", COMPAT),
               {"page_snaps": snap("fa4", replace(FA4_SNAP, gate=SM100))}),
        Change("GPT-OSS runs aiter on ROCm by default and accepts it; Llama 4 accepts ascend",
               code("0.5.10", MODEL_ADJUSTMENTS),
               {"model_rules": chained(
                   changed("gpt-oss-backends", defaults=choices(
                       ("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("aiter", ON_ROCM),
                       ("triton", None))),
                   extended("gpt-oss-backends", allowed=("aiter",)),
                   extended("llama4-backends", allowed=("ascend",)))}),
        Change("hybrid models: speculative decoding with the radix cache is refused (no_buffer); "
               "Qwen3-Next on SM100 keeps the default decision's trtllm_mha when its cache can "
               "page (radix cache off, or speculative decoding)",
               code("0.5.10", "ServerArgs._handle_mamba_radix_cache"),
               {"hybrid_cache": lambda before: replace(before, spec=SpecWithRadix.REFUSE),
                "model_rules": changed("qwen3-next-backend", prefers="trtllm_mha")}),
        Change("Whisper runs flashinfer by default on every GPU",
               code("0.5.10", "ServerArgs._get_default_attn_backend"),
               {"defaults": lambda before: (
                   DefaultBranch("flashinfer", architectures=WHISPER), *before)}),
    ),
    doc_changes=(
        DocChange("FA4 serves prefill and decode",
                  commit("f51ddba131c65962cadc770b57eb7115a14df5c0", 18442, "2026-03-02",
                         "add FA4 SM90 paged KV decode support & update attention docs"),
                  page=tagged_page("0.5.10", "docs/advanced_features/attention_backend.md"),
                  backends=(replace(MATRIX.backend("fa4"), phases=frozenset(Phase), note=""),)),
        DocChange("Triton reads an FP8 KV cache (MHA); AITER and Ascend serve sliding-window "
                  "models (MHA); FA4 keeps chunked prefix cache (MLA)",
                  commit("0fd9a57d80dc3757d8b224aa7d048a45f8619efd", 20210, "2026-03-09",
                         "Verify and Modify some attention backend specs"),
                  cells=(CellChange(Arch.MHA, "triton", ColumnId.FP8_KV, YES),
                         CellChange(Arch.MHA, "aiter", ColumnId.SLIDING_WINDOW, YES),
                         CellChange(Arch.MHA, "ascend", ColumnId.SLIDING_WINDOW, YES),
                         CellChange(Arch.MLA, "fa4", ColumnId.CHUNKED_PREFIX_CACHE, YES))),
        DocChange("FA4 runs speculative decoding, topk 1 and above (MHA)",
                  commit("24763256b9681356b0f4631b4d51262d48e85524", 21080, "2026-04-04",
                         "Add FA4-based Spec Support"),
                  cells=(CellChange(Arch.MHA, "fa4", ColumnId.SPEC_TOPK_1, YES),
                         CellChange(Arch.MHA, "fa4", ColumnId.SPEC_TOPK_GT1, YES))),
    ),
)  # fmt: skip
