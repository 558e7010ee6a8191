"""The words every other module speaks: architectures, phases, platforms, dtypes, cells.

Only value types live here. They know nothing about any particular backend.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


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
}


class ModelFeature(Term):
    """A property of the model that some backends require or cannot serve."""

    SLIDING_WINDOW = "sliding_window"
    MULTIMODAL = "multimodal"
    ENCODER_DECODER = "encoder_decoder"
    DUAL_CHUNK = "dual_chunk_attention"
    SPARSE_DSA = "sparse_dsa"

    def __init__(self, value: str) -> None:
        self.label = _FEATURE_LABELS[value]
        """Completes "models with ...": the feature as a reader would name it."""


class Severity(Term):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_ACTION_SEVERITY = {
    "error": Severity.ERROR,
    "warn": Severity.WARNING,
    "snap": Severity.WARNING,
    "info": Severity.INFO,
    "documentation-only": Severity.INFO,
}


class Action(Term):
    """What the guard does when a configuration meets an unsupported cell of a column."""

    ERROR = "error"
    WARN = "warn"
    SNAP = "snap"
    INFO = "info"
    DOCUMENTATION_ONLY = "documentation-only"

    def __init__(self, value: str) -> None:
        self.severity = _ACTION_SEVERITY[value]
        """The severity of the finding for an unsupported cell."""


_CC_PATTERN = re.compile(r"^(?:sm_?)?(\d+)(?:\.(\d+))?$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class ComputeCapability:
    """A CUDA compute capability such as 10.0 (written sm100)."""

    major: int
    minor: int = 0

    @classmethod
    def parse(cls, text: str) -> ComputeCapability:
        """Accept `10.0`, `10`, `sm100`, `sm_90`, `100`, `90`, `8.6`, `86`."""
        match = _CC_PATTERN.match(text.strip())
        if match is None:
            raise ValueError(f"invalid compute capability {text!r}: write it as 10.0, sm100 or 100")
        whole, minor = match.group(1), match.group(2)
        if minor is not None:
            return cls(int(whole), int(minor))
        if len(whole) >= 3 or (len(whole) == 2 and not whole.startswith("1")):
            # "sm100", "100", "90", "86": the last digit is the minor version.
            return cls(int(whole[:-1]), int(whole[-1]))
        # "9", "10", "12": a bare major version.
        return cls(int(whole), 0)

    def __str__(self) -> str:
        return f"sm{self.major}{self.minor}"

    @property
    def dotted(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(frozen=True)
class CapabilityRange:
    """Compute capabilities whose major version lies in [min_major, max_major]."""

    min_major: int
    max_major: int | None = None

    def __contains__(self, capability: object) -> bool:
        if not isinstance(capability, ComputeCapability):
            return False
        if capability.major < self.min_major:
            return False
        return self.max_major is None or capability.major <= self.max_major

    @property
    def label(self) -> str:
        low = f"sm{self.min_major}x"
        if self.max_major is None:
            return f"{low} and newer"
        if self.max_major == self.min_major:
            return low
        return f"{low} to sm{self.max_major}x"


@dataclass(frozen=True)
class Evidence:
    """Where a claim comes from."""

    source: str
    url: str | None = None
    tested_on: str | None = None
    models: tuple[str, ...] = ()
    note: str | None = None


class PlatformSupport(Term):
    """How far a backend runs on a platform it lists (a platform it does not list: not at all)."""

    SUPPORTED = "supported"
    UNTESTED = "untested"


class CellKind(Term):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    PAGE_SIZES = "page_sizes"
    NOT_APPLICABLE = "n/a"
    CONDITIONAL = "conditional"
    UNTESTED = "untested"


@dataclass(frozen=True)
class Cell:
    """One claim of a table.

    PAGE_SIZES lists the native page sizes; `fixed` means the kernel only runs with
    them, so the engine snaps any other size to the largest. CONDITIONAL means
    supported only when the page size is one of `page_sizes`.
    """

    kind: CellKind
    page_sizes: tuple[int, ...] = ()
    fixed: bool = False
    evidence: Evidence | None = None

    @property
    def symbol(self) -> str:
        kind = self.kind
        if kind is CellKind.SUPPORTED:
            return "✅"
        if kind is CellKind.UNSUPPORTED:
            return "❌"
        if kind is CellKind.NOT_APPLICABLE:
            return "n/a"
        if kind is CellKind.UNTESTED:
            return "❔ untested"
        sizes = join_or([str(size) for size in self.page_sizes])
        if kind is CellKind.PAGE_SIZES:
            return sizes
        return f"⚠️ (page_size={sizes} only)"


def join_or(items: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`: the way the tables list alternatives."""
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} or {items[1]}"
    return ", ".join(items[:-1]) + f" or {items[-1]}"
