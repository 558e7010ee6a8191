"""Each release's attention-registry checks, with the line of its registry that raises.

Read from `sglang/srt/layers/attention/attention_registry.py` of each release's wheel: the
factories' checks (`create_<backend>_backend`) and `attn_backend_wrapper`'s hybrid GDN
allow-lists. The registry grows in every release, so the lines move in almost every one;
one table keeps them side by side. A release absent from `LINES` has its predecessor's
registry. `tests/engine/test_conformance_build.py` runs each release's own registry over
the build grid and checks every prediction, line included.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from compat.engine.build import BuildCheck, BuildRules, DraftRules, FactoryCheck, HybridGdnCheck
from compat.engine.predicates import GpuGate
from compat.releases.draft import draft_rules
from compat.releases.shared import BLACKWELL, BLACKWELL_0_5_9
from compat.releases.sub_build import sub_build_checks

NEEDS_MLA, NEEDS_MHA = BuildCheck.NEEDS_MLA, BuildCheck.NEEDS_MHA
NO_ENC_DEC, NO_SPEC, GPU = BuildCheck.NO_ENCODER_DECODER, BuildCheck.NO_SPECULATIVE, BuildCheck.GPU

# `create_flashattention_v3_backend`: `(major == 8 and not runner.use_mla_backend) or
# major == 9` on every platform but MUSA.
FA3_MHA_MAJORS, FA3_MLA_MAJORS = frozenset({8, 9}), frozenset({9})
# `is_sm120_supported` (sglang/srt/utils/common.py; 0.5.19+ reads it as
# `get_platform().is_sm120`, which runtime_context maps to the same predicate).
SM120 = GpuGate("SM120", frozenset({12}), (12, 8))

# `hybrid_gdn_config`: the config classes it answers for, by their `model_type`
# (sglang/srt/model_executor/model_runner.py up to 0.5.15, configs/hybrid_arch.py after).
_GDN_0_5_7 = frozenset({"qwen3_next", "jet_nemotron", "jet_vlm"})
_GDN_0_5_9 = _GDN_0_5_7 | {"qwen3_5", "qwen3_5_moe"}
_GDN_0_5_12 = _GDN_0_5_9 | {"intern_s2_preview"}
_TRITON_TRTLLM = frozenset({"triton", "trtllm_mha"})
_FOUR = _TRITON_TRTLLM | {"fa4", "flashinfer"}

# release -> {(backend, check): line} and (hybrid GDN line, model types, is_blackwell,
# allow-list, SM120 allow-list or None). Checks are listed in each factory's order.
_Lines = tuple[
    dict[tuple[str, BuildCheck], int],
    tuple[int, frozenset[str], GpuGate, frozenset[str], frozenset[str] | None],
]
LINES: Mapping[str, _Lines] = {
    "0.5.7": ({("trtllm_mla", NEEDS_MLA): 51, ("triton", NO_ENC_DEC): 89, ("fa3", GPU): 132,
               ("trtllm_mha", NEEDS_MHA): 158},
              (204, _GDN_0_5_7, BLACKWELL, _TRITON_TRTLLM, None)),
    "0.5.9": ({("trtllm_mla", NEEDS_MLA): 51, ("triton", NO_ENC_DEC): 89, ("fa3", GPU): 132,
               ("trtllm_mha", NEEDS_MHA): 158},
              (205, _GDN_0_5_9, BLACKWELL_0_5_9, _TRITON_TRTLLM, None)),
    "0.5.10": ({("trtllm_mla", NEEDS_MLA): 51, ("triton", NO_ENC_DEC): 89, ("fa3", GPU): 132,
                ("trtllm_mha", NEEDS_MHA): 158},
               (213, _GDN_0_5_9, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.11": ({("trtllm_mla", NEEDS_MLA): 59, ("triton", NO_ENC_DEC): 97, ("fa3", GPU): 132,
                ("trtllm_mha", NEEDS_MHA): 170},
               (237, _GDN_0_5_9, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.12": ({("trtllm_mla", NEEDS_MLA): 59, ("tokenspeed_mla", NEEDS_MLA): 68,
                ("triton", NO_ENC_DEC): 117, ("fa3", GPU): 152, ("trtllm_mha", NEEDS_MHA): 190},
               (257, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.13": ({("trtllm_mla", NEEDS_MLA): 60, ("tokenspeed_mla", NEEDS_MLA): 69,
                ("cutedsl_mla", NEEDS_MLA): 80, ("triton", NO_ENC_DEC): 151, ("fa3", GPU): 186,
                ("trtllm_mha", NEEDS_MHA): 224},
               (291, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.14": ({("trtllm_mla", NEEDS_MLA): 62, ("tokenspeed_mla", NEEDS_MLA): 71,
                ("cutedsl_mla", NEEDS_MLA): 82, ("triton", NO_ENC_DEC): 157, ("fa3", GPU): 192,
                ("trtllm_mha", NEEDS_MHA): 230},
               (297, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.15": ({("trtllm_mla", NEEDS_MLA): 62, ("tokenspeed_mla", NEEDS_MLA): 71,
                ("cutedsl_mla", NEEDS_MLA): 82, ("triton", NO_ENC_DEC): 157, ("fa3", GPU): 192,
                ("trtllm_mha", NEEDS_MHA): 230},
               (298, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, None)),
    "0.5.16": ({("trtllm_mla", NEEDS_MLA): 71, ("tokenspeed_mla", NEEDS_MLA): 80,
                ("cutedsl_mla", NEEDS_MLA): 91, ("triton", NO_ENC_DEC): 166, ("fa3", GPU): 201,
                ("trtllm_mha", NEEDS_MHA): 241},
               (343, _GDN_0_5_12, BLACKWELL_0_5_9, _TRITON_TRTLLM | {"fa4"},
                _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.17": ({("trtllm_mla", NEEDS_MLA): 72, ("tokenspeed_mla", NEEDS_MLA): 93,
                ("cutedsl_mla", NEEDS_MLA): 104, ("triton", NO_ENC_DEC): 179, ("fa3", GPU): 214,
                ("trtllm_mha", NEEDS_MHA): 254, ("hpc_ops", NEEDS_MHA): 263,
                ("hpc_ops", NO_ENC_DEC): 265, ("hpc_ops", NO_SPEC): 269},
               (406, _GDN_0_5_12, BLACKWELL_0_5_9, _TRITON_TRTLLM | {"fa4"},
                _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.18": ({("trtllm_mla", NEEDS_MLA): 72, ("tokenspeed_mla", NEEDS_MLA): 93,
                ("cutedsl_mla", NEEDS_MLA): 104, ("triton", NO_ENC_DEC): 179, ("fa3", GPU): 214,
                ("trtllm_mha", NEEDS_MHA): 254, ("hpc_ops", NEEDS_MHA): 263,
                ("hpc_ops", NO_ENC_DEC): 265, ("hpc_ops", NO_SPEC): 269},
               (398, _GDN_0_5_12, BLACKWELL_0_5_9, _TRITON_TRTLLM | {"fa4"},
                _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.19": ({("trtllm_mla", NEEDS_MLA): 80, ("tokenspeed_mla", NEEDS_MLA): 99,
                ("cutedsl_mla", NEEDS_MLA): 110, ("triton", NO_ENC_DEC): 185, ("fa3", GPU): 220,
                ("trtllm_mha", NEEDS_MHA): 260, ("hpc_ops", NEEDS_MHA): 269,
                ("hpc_ops", NO_ENC_DEC): 271, ("hpc_ops", NO_SPEC): 275},
               (444, _GDN_0_5_12, BLACKWELL_0_5_9, _TRITON_TRTLLM | {"fa4"},
                _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.20": ({("trtllm_mla", NEEDS_MLA): 81, ("tokenspeed_mla", NEEDS_MLA): 99,
                ("cutedsl_mla", NEEDS_MLA): 110, ("triton", NO_ENC_DEC): 197, ("fa3", GPU): 232,
                ("trtllm_mha", NEEDS_MHA): 265, ("hpc_ops", NEEDS_MHA): 274,
                ("hpc_ops", NO_ENC_DEC): 276, ("hpc_ops", NO_SPEC): 280},
               (440, _GDN_0_5_12, BLACKWELL_0_5_9, _TRITON_TRTLLM | {"fa4"},
                _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.21": ({("trtllm_mla", NEEDS_MLA): 81, ("tokenspeed_mla", NEEDS_MLA): 99,
                ("cutedsl_mla", NEEDS_MLA): 110, ("triton", NO_ENC_DEC): 197, ("fa3", GPU): 232,
                ("trtllm_mha", NEEDS_MHA): 265, ("hpc_ops", NEEDS_MHA): 274,
                ("hpc_ops", NO_ENC_DEC): 276, ("hpc_ops", NO_SPEC): 280},
               (444, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.22": ({("llada2_cfg_flashinfer", NEEDS_MHA): 83, ("trtllm_mla", NEEDS_MLA): 97,
                ("tokenspeed_mla", NEEDS_MLA): 115, ("cutedsl_mla", NEEDS_MLA): 126,
                ("triton", NO_ENC_DEC): 213, ("fa3", GPU): 248, ("trtllm_mha", NEEDS_MHA): 285,
                ("hpc_ops", NEEDS_MHA): 294, ("hpc_ops", NO_ENC_DEC): 296,
                ("hpc_ops", NO_SPEC): 300},
               (469, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, _TRITON_TRTLLM | {"flashinfer"})),
    "0.5.23": ({("llada2_cfg_flashinfer", NEEDS_MHA): 83, ("trtllm_mla", NEEDS_MLA): 97,
                ("cutedsl_mla", NEEDS_MLA): 121, ("triton", NO_ENC_DEC): 208, ("fa3", GPU): 243,
                ("trtllm_mha", NEEDS_MHA): 280, ("hpc_ops", NEEDS_MHA): 289,
                ("hpc_ops", NO_ENC_DEC): 291, ("hpc_ops", NO_SPEC): 295},
               (473, _GDN_0_5_12, BLACKWELL_0_5_9, _FOUR, _TRITON_TRTLLM | {"flashinfer"})),
}  # fmt: skip


_NO_MAJORS: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
# Factories not named `create_<backend>_backend`.
_FACTORIES = {"fa3": "create_flashattention_v3_backend"}
# Up to 0.5.10 the FA3 factory reads `torch.cuda.get_device_capability()` itself, which
# raises on a machine without a CUDA device, on the line before its assert; 0.5.11 reads
# SGLang's `get_device_capability()`, which answers (None, None) there.
_NO_GPU_LINES = {("0.5.7", "fa3"): 131, ("0.5.9", "fa3"): 131, ("0.5.10", "fa3"): 131}


# The backends' constructors: the checks of the model family and the GPU, per release, with
# the line that raises (read in each release's wheel; tests/engine/test_conformance_build.py
# reads each line back). A factory calls its class after its own checks, so these come last.
_HPC_OPS = "sglang/srt/layers/attention/hpc_ops_backend.py"
_MINICPM = "sglang/srt/layers/attention/minicpm/backend.py"
_MINICPM_TYPES = frozenset({"minicpm_sala"})  # `MiniCPMHybridConfig.model_type`


def _constructors(release: str) -> tuple[FactoryCheck, ...]:
    minor = int(release.split(".")[2])
    checks: list[FactoryCheck] = []
    if minor >= 17:
        line = {22: 138, 23: 140}.get(minor, 137)
        checks.append(FactoryCheck("hpc_ops", GPU, line, frozenset({9}), frozenset({9}),
                                   "HPCOpsAttnBackend.__init__", file=_HPC_OPS))  # fmt: skip
    if minor >= 19:
        line = 164 if minor == 19 else 165
        for name in ("minicpm_flashattn", "minicpm_flashinfer"):
            checks.append(FactoryCheck(name, BuildCheck.MODEL_FAMILY, line,
                                       function="MiniCPMSparseBackend.__init__",
                                       model_types=_MINICPM_TYPES, file=_MINICPM))  # fmt: skip
    return tuple(checks)


def _rules(release: str, lines: _Lines, draft: DraftRules | None) -> BuildRules:
    factories, (gdn_line, types, blackwell, allowed, sm120_allowed) = lines
    checks = tuple(
        FactoryCheck(backend, check, line,
                     *((FA3_MHA_MAJORS, FA3_MLA_MAJORS) if check is GPU else _NO_MAJORS),
                     function=_FACTORIES.get(backend, ""),
                     no_gpu_line=_NO_GPU_LINES.get((release, backend), 0))
        for (backend, check), line in factories.items()
    ) + _constructors(release)  # fmt: skip
    gdn = HybridGdnCheck(
        gdn_line,
        types,
        blackwell,
        allowed,
        None if sm120_allowed is None else SM120,
        sm120_allowed or frozenset(),
    )
    return BuildRules(checks, gdn, draft)


def build_rules(release: str, before: BuildRules) -> BuildRules:
    """The registry checks of `release`: its row of `LINES`, else those of the one before;
    and its draft factory (`compat.releases.draft`)."""
    lines = LINES.get(release)
    draft = draft_rules(release, before.draft)
    rules = (
        msgspec.structs.replace(before, draft=draft)
        if lines is None
        else _rules(release, lines, draft)
    )
    assert rules.hybrid_gdn is not None  # every release's registry has the wrapper
    checks = sub_build_checks(release, rules.hybrid_gdn.blackwell, before.sub_checks)
    return msgspec.structs.replace(rules, sub_checks=checks)
