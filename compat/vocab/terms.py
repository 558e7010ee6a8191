"""The names every other layer speaks: architectures, phases, platforms, dtypes, severities.

Only value types live here. They know nothing about any particular backend.
"""

from __future__ import annotations

import enum


class Term(enum.Enum):
    """An enum hashed by identity.

    Members are singletons compared by identity, so identity hashing is exact; it spares
    the guard's hot path Enum's Python-level `__hash__` on every dict and set lookup.
    """

    __hash__ = object.__hash__


class Arch(Term):
    """The attention architecture of a model."""

    MHA = "mha"
    MLA = "mla"

    def __init__(self, value: str) -> None:
        # A plain attribute: read on the guard's hot path, where properties cost.
        self.label = value.upper()


class Phase(Term):
    """The two phases a backend can serve; each has its own flag in SGLang."""

    PREFILL = "prefill"
    DECODE = "decode"

    def __init__(self, value: str) -> None:
        self.flag = f"--{value}-attention-backend"


_PLATFORM_LABELS = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "npu": "NPU (Ascend)",
    "xpu": "XPU (Intel GPU)",
    "cpu": "CPU",
}


class Platform(Term):
    CUDA = "cuda"
    ROCM = "rocm"
    NPU = "npu"
    XPU = "xpu"
    CPU = "cpu"

    def __init__(self, value: str) -> None:
        self.label = _PLATFORM_LABELS[value]


class KvFamily(Term):
    """A class of quantized KV dtypes that one table column speaks for."""

    FP8 = "fp8"
    FP4 = "fp4"


# Which family each quantized dtype belongs to; `auto` and `bf16` belong to none.
_KV_FAMILIES = {
    "fp8_e5m2": KvFamily.FP8,
    "fp8_e4m3": KvFamily.FP8,
    "mxfp8": KvFamily.FP8,
    "fp4_e2m1": KvFamily.FP4,
    "nvfp4": KvFamily.FP4,
    "fp4_mx_block16": KvFamily.FP4,
}


class KvDtype(Term):
    """A KV-cache dtype; `bf16` and `bfloat16` name the same one."""

    AUTO = "auto"
    FP8_E5M2 = "fp8_e5m2"
    FP8_E4M3 = "fp8_e4m3"
    BF16 = "bf16"
    FP4_E2M1 = "fp4_e2m1"
    MXFP8 = "mxfp8"
    NVFP4 = "nvfp4"
    FP4_MX_BLOCK16 = "fp4_mx_block16"

    def __init__(self, value: str) -> None:
        # Plain attributes: the guard reads them on its hot path, where properties cost.
        self.family = _KV_FAMILIES.get(value)
        """The quantized family, whose table column speaks for this dtype; None if unquantized."""
        self.is_fp8 = self.family is KvFamily.FP8
        self.is_fp4 = self.family is KvFamily.FP4

    def same_family(self, other: KvDtype) -> bool:
        """Whether a rule written for `other` covers this dtype.

        The FP4 kinds are interchangeable for the rules; the FP8 kinds are not (FA3 reads
        only e4m3, for instance), so an FP8 rule names its dtype exactly.
        """
        return self is other or (self.is_fp4 and other.is_fp4)


# Every spelling `--kv-cache-dtype` accepts in some release, in SGLang's order; each
# release's own list is in `compat.releases`.
KV_DTYPE_SPELLINGS: dict[str, KvDtype] = {
    "auto": KvDtype.AUTO,
    "fp8_e5m2": KvDtype.FP8_E5M2,
    "fp8_e4m3": KvDtype.FP8_E4M3,
    "bf16": KvDtype.BF16,
    "bfloat16": KvDtype.BF16,
    "fp4_e2m1": KvDtype.FP4_E2M1,
    "mxfp8": KvDtype.MXFP8,
    "nvfp4": KvDtype.NVFP4,
    "fp4_mx_block16": KvDtype.FP4_MX_BLOCK16,
}


class SpeculativeAttentionMode(Term):
    PREFILL = "prefill"
    DECODE = "decode"


_FEATURE_LABELS = {
    "sliding_window": "sliding-window attention",
    "multimodal": "multimodal inputs",
    "encoder_decoder": "an encoder-decoder architecture",
    "dual_chunk_attention": "a dual-chunk attention config",
    "sparse_dsa": "DeepSeek sparse attention (DSA)",
    "qsa_profile": "a QSA (Qwen sparse attention) indexer profile",
}


class ModelFeature(Term):
    """A property of the model that some backends require or cannot serve."""

    SLIDING_WINDOW = "sliding_window"
    MULTIMODAL = "multimodal"
    ENCODER_DECODER = "encoder_decoder"
    DUAL_CHUNK = "dual_chunk_attention"
    SPARSE_DSA = "sparse_dsa"
    QSA_PROFILE = "qsa_profile"
    """SGLang's `qsa_profile`: the config's compressed indexer (Qwen4-Exp), which selects
    QSA's own draft backends."""

    def __init__(self, value: str) -> None:
        self.label = _FEATURE_LABELS[value]
        """Completes "models with ...": the feature as a reader would name it."""


class Severity(Term):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
