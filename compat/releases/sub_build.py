"""Each release's checks of the sub-backends it builds, with the line that raises.

Read from each release's wheel: `sglang/srt/layers/attention/vision.py` (the vision
encoder's `_determine_attention_backend` and its encoder classes' constructors) and, from
0.5.16, `sglang/srt/layers/attention/dsa_backend.py` (`DeepseekSparseAttnBackend.__init__`,
whose checks 0.5.22 moved into `_validate_flashmla_sparse_q8_backend` and
`_validate_triton_sparse_mla_backend`). What each check means is
`compat.engine.sub_build`; a release absent from a table has its predecessor's lines.
`tests/engine/test_sub_build.py` reads every line back from every wheel: a `raise` right
after the condition each check models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from compat.engine.predicates import GpuGate
from compat.engine.sub_build import SubBuildCheck, SubCheck
from compat.vocab.terms import Platform

MM, DSA_PREFILL, DSA_DECODE = "mm_attention_backend", "dsa_prefill_backend", "dsa_decode_backend"
DETERMINE = "VisionAttention._determine_attention_backend"

# The vision encoder's classes (`QKV_BACKEND_IMPL`), each with the machines its constructor
# accepts (`if not _is_cuda: raise`, `if not _is_hip: raise`, ...; 0.5.11's fa3 takes MUSA
# too, a machine not modelled). `sdpa` and `triton_attn` check nothing.
ENCODERS: Mapping[str, tuple[str, frozenset[Platform]]] = {
    "fa3": ("VisionFlash3Attention", frozenset({Platform.CUDA})),
    "fa4": ("VisionFlash4Attention", frozenset({Platform.CUDA})),
    "flashinfer_cudnn": ("VisionFlashInferAttention", frozenset({Platform.CUDA})),
    "ascend_attn": ("VisionAscendAttention", frozenset({Platform.NPU})),
    "aiter_attn": ("VisionAiterAttention", frozenset({Platform.ROCM})),
    "amx_attn": ("VisionAMXAttention", frozenset({Platform.CPU})),
    "xpu_attn": ("VisionIntelXPUAttention", frozenset({Platform.XPU})),
}

# release -> (the line of `raise ValueError("The 'fa3' backend is not supported on Blackwell
# GPUs")`, {encoder: the line its constructor raises}).
VISION_LINES: Mapping[str, tuple[int, Mapping[str, int]]] = {
    "0.5.7": (659, {"fa3": 348, "ascend_attn": 452, "aiter_attn": 407}),
    "0.5.8": (675, {"fa3": 350, "ascend_attn": 454, "aiter_attn": 409}),
    "0.5.9": (745, {"fa3": 350, "fa4": 409, "ascend_attn": 506, "aiter_attn": 461}),
    "0.5.10": (919, {"fa3": 386, "fa4": 445, "flashinfer_cudnn": 497, "ascend_attn": 664,
                     "aiter_attn": 619}),
    "0.5.11": (973, {"fa3": 391, "fa4": 458, "flashinfer_cudnn": 512, "ascend_attn": 682,
                     "aiter_attn": 635}),
    "0.5.13": (1107, {"fa3": 418, "fa4": 485, "flashinfer_cudnn": 539, "ascend_attn": 709,
                      "aiter_attn": 662, "amx_attn": 766, "xpu_attn": 820}),
    "0.5.14": (1106, {"fa3": 418, "fa4": 485, "flashinfer_cudnn": 539, "ascend_attn": 709,
                      "aiter_attn": 662, "amx_attn": 765, "xpu_attn": 819}),
    "0.5.16": (1185, {"fa3": 485, "fa4": 549, "flashinfer_cudnn": 601, "ascend_attn": 784,
                      "aiter_attn": 733, "amx_attn": 847, "xpu_attn": 901}),
    "0.5.17": (1247, {"fa3": 525, "fa4": 589, "flashinfer_cudnn": 641, "ascend_attn": 824,
                      "aiter_attn": 773, "amx_attn": 904, "xpu_attn": 958}),
    "0.5.18": (1256, {"fa3": 527, "fa4": 591, "flashinfer_cudnn": 643, "ascend_attn": 826,
                      "aiter_attn": 775, "amx_attn": 906, "xpu_attn": 960}),
    "0.5.19": (1276, {"fa3": 530, "fa4": 594, "flashinfer_cudnn": 646, "ascend_attn": 829,
                      "aiter_attn": 778, "amx_attn": 909, "xpu_attn": 963}),
    "0.5.20": (1319, {"fa3": 529, "fa4": 593, "flashinfer_cudnn": 645, "ascend_attn": 827,
                      "aiter_attn": 777, "amx_attn": 952, "xpu_attn": 1006}),
    "0.5.21": (1324, {"fa3": 529, "fa4": 593, "flashinfer_cudnn": 650, "ascend_attn": 832,
                      "aiter_attn": 782, "amx_attn": 957, "xpu_attn": 1011}),
    "0.5.22": (1326, {"fa3": 526, "fa4": 586, "flashinfer_cudnn": 643, "ascend_attn": 825,
                      "aiter_attn": 775, "amx_attn": 950, "xpu_attn": 1004}),
    "0.5.23": (1331, {"fa3": 531, "fa4": 591, "flashinfer_cudnn": 648, "ascend_attn": 830,
                      "aiter_attn": 780, "amx_attn": 955, "xpu_attn": 1009}),
}  # fmt: skip

# The DSA backend's checks, in its order: `flashmla_sparse_q8` as the prefill kernel off
# SM90 (`device_sm_major != 9`), as the decode kernel at all; from 0.5.22
# `triton_sparse_mla` (prefill) on ROCm (`_is_hip`), then below SM90 (`device_sm_major < 9`).
Q8 = "flashmla_sparse_q8"
TRITON_SPARSE = "triton_sparse_mla"
_INIT = "DeepseekSparseAttnBackend.__init__"
_Q8_CHECK = "_validate_flashmla_sparse_q8_backend"
_TRITON_CHECK = "_validate_triton_sparse_mla_backend"
_DsaKey = tuple[str, str, SubCheck]
_HOPPER, _HOPPER_ON = frozenset({9}), frozenset(range(9, 13))
DSA_LINES: Mapping[str, Mapping[_DsaKey, tuple[str, int]]] = {
    "0.5.16": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 468),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 477)},
    "0.5.17": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 417),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 426)},
    "0.5.18": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 419),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 428)},
    "0.5.19": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 420),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 429)},
    "0.5.20": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 456),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 465)},
    "0.5.21": {(DSA_PREFILL, Q8, SubCheck.GPU): (_INIT, 509),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_INIT, 518)},
    "0.5.22": {(DSA_PREFILL, Q8, SubCheck.GPU): (_Q8_CHECK, 453),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_Q8_CHECK, 476),
               (DSA_PREFILL, TRITON_SPARSE, SubCheck.PLATFORM): (_TRITON_CHECK, 361),
               (DSA_PREFILL, TRITON_SPARSE, SubCheck.GPU): (_TRITON_CHECK, 366)},
    "0.5.23": {(DSA_PREFILL, Q8, SubCheck.GPU): (_Q8_CHECK, 461),
               (DSA_DECODE, Q8, SubCheck.PHASE): (_Q8_CHECK, 484),
               (DSA_PREFILL, TRITON_SPARSE, SubCheck.PLATFORM): (_TRITON_CHECK, 369),
               (DSA_PREFILL, TRITON_SPARSE, SubCheck.GPU): (_TRITON_CHECK, 374)},
}  # fmt: skip
# What each DSA check accepts: q8 SM90 alone; triton_sparse_mla any CUDA GPU from SM90
# (the majors the modelled GPUs have); its platform check refuses ROCm alone (`_is_hip`).
_DSA_ACCEPTS: Mapping[tuple[str, SubCheck], dict[str, Any]] = {
    (Q8, SubCheck.GPU): {"majors": _HOPPER},
    (TRITON_SPARSE, SubCheck.GPU): {"majors": _HOPPER_ON},
    (TRITON_SPARSE, SubCheck.PLATFORM): {"platforms": frozenset(Platform) - {Platform.ROCM}},
}


def sub_build_checks(
    release: str, blackwell: GpuGate, before: tuple[SubBuildCheck, ...]
) -> tuple[SubBuildCheck, ...]:
    """`release`'s sub-backend checks, in SGLang's order: the vision encoder's, then the DSA
    backend's. Each part's come from the release's own row, else they are those of the
    release `before` (as every part of a release folds). `blackwell` is the release's
    `is_blackwell()`, the registry's too."""
    vision: list[SubBuildCheck] = [
        msgspec.structs.replace(check, gate=blackwell) if check.gate is not None else check
        for check in before
        if check.field == MM
    ]
    if release in VISION_LINES:
        vision_line, encoders = VISION_LINES[release]
        vision = [SubBuildCheck(MM, "fa3", SubCheck.BLACKWELL, DETERMINE, vision_line,
                                gate=blackwell)]  # fmt: skip
        for name, line in encoders.items():
            cls, platforms = ENCODERS[name]
            vision.append(SubBuildCheck(MM, name, SubCheck.PLATFORM, f"{cls}.__init__", line,
                                        platforms=platforms))  # fmt: skip
    dsa = [check for check in before if check.field != MM]
    if release in DSA_LINES:
        dsa = [
            SubBuildCheck(field, value, check, function, line, **_DSA_ACCEPTS.get((value, check), {}))
            for (field, value, check), (function, line) in DSA_LINES[release].items()
        ]
    return (*vision, *dsa)
