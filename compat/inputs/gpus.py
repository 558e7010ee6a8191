"""GPU (and CPU) names as operators know them, mapped to the platform and compute capability.

One table, used by `compat check --gpu` / `--compute-capability`, `compat matrix` and the
finder. A name is matched case-insensitively, ignoring spaces, hyphens and underscores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compat.vocab.hardware import ComputeCapability, RocmArch
from compat.vocab.spelling import closest, did_you_mean
from compat.vocab.terms import Platform


@dataclass(frozen=True)
class Gpu:
    name: str
    platform: Platform
    capability: ComputeCapability | None = None
    """CUDA compute capability; None off CUDA."""
    aliases: tuple[str, ...] = ()
    rocm_arch: RocmArch | None = None
    """The ROCm architecture SGLang's ROCm checks read (`gcnArchName`)."""

    @property
    def label(self) -> str:
        if self.rocm_arch is not None:
            return f"{self.name} ({self.platform.label} {self.rocm_arch.value})"
        if self.capability is None:
            return f"{self.name} ({self.platform.label})"
        return f"{self.name} ({self.capability})"


def _cuda(name: str, major: int, minor: int, *aliases: str) -> Gpu:
    return Gpu(name, Platform.CUDA, ComputeCapability(major, minor), aliases)


GPUS = (
    _cuda("A100", 8, 0, "A800"),
    _cuda("A10", 8, 6, "A10G", "RTX 3090", "A40"),
    _cuda("L4", 8, 9),
    _cuda("L40S", 8, 9, "L40", "RTX 4090"),
    _cuda("H100", 9, 0, "H800", "GH200"),
    _cuda("H200", 9, 0),
    _cuda("H20", 9, 0),
    _cuda("B200", 10, 0, "GB200"),
    _cuda("B300", 10, 3, "GB300"),
    # SM110 since CUDA 13 (CUDA 12.8 and 12.9 called it sm_101); SGLang's `is_sm110_supported`.
    _cuda("Jetson AGX Thor", 11, 0, "Thor", "Jetson Thor"),
    _cuda("RTX PRO 6000", 12, 0, "RTX PRO 6000 Blackwell"),
    _cuda("RTX 5090", 12, 0),
    _cuda("DGX Spark", 12, 1, "GB10"),
    Gpu("MI300X", Platform.ROCM, aliases=("MI300A",), rocm_arch=RocmArch.GFX942),
    Gpu("MI325X", Platform.ROCM, rocm_arch=RocmArch.GFX942),
    Gpu("MI355X", Platform.ROCM, rocm_arch=RocmArch.GFX950),
    Gpu("MI350X", Platform.ROCM, rocm_arch=RocmArch.GFX950),
    Gpu("Ascend 910B", Platform.NPU, aliases=("Ascend 910C",)),
    Gpu("Intel Data Center GPU Max", Platform.XPU, aliases=("Max 1550", "Max 1100")),
    Gpu("Xeon (CPU)", Platform.CPU, aliases=("CPU",)),
)


class UnknownGpuError(ValueError):
    def __init__(self, given: str, close: str | None) -> None:
        self.given, self.did_you_mean = given, close
        text = f"unknown GPU {given!r}{did_you_mean(close)}"
        names = ", ".join(gpu.name for gpu in GPUS)
        super().__init__(f"{text} (known GPUs: {names})")


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


_BY_KEY = {_key(name): gpu for gpu in GPUS for name in (gpu.name, *gpu.aliases)}
_SPELLED = {_key(name): name for gpu in GPUS for name in (gpu.name, *gpu.aliases)}


def find_gpu(name: str) -> Gpu | None:
    return _BY_KEY.get(_key(name))


def gpu_named(name: str) -> Gpu:
    """The GPU `name` names; UnknownGpuError (with a did-you-mean) otherwise."""
    found = find_gpu(name)
    if found is not None:
        return found
    close = suggested(name)
    raise UnknownGpuError(name, None if close is None else _SPELLED[close])


def _family(key: str) -> str:
    """A name's family: its letters before the first digit ("b" of B200, "mi" of MI300X)."""
    return re.match(r"[a-z]*", key).group()  # type: ignore[union-attr]  # always matches


def suggested(name: str) -> str | None:
    """The key of the known name most like `name`, by name and family: a name of the same
    family ("B100X": B200, a Blackwell) before a closer spelling of another (H100)."""
    import difflib  # only on error paths

    key = _key(name)
    family = _family(key)
    kin = [known for known in _BY_KEY if family and _family(known) == family]
    if kin:
        # The table's order breaks a tie: its first of a family is the common one.
        def likeness(known: str) -> float:
            return difflib.SequenceMatcher(None, key, known).ratio()

        best = max(kin, key=likeness)
        if likeness(best) >= _KIN_CUTOFF:
            return best
    return closest(key, _BY_KEY)


_KIN_CUTOFF = 0.4
"""Within a family, a looser likeness suffices: the family already says much."""


def gpus_with(capability: ComputeCapability) -> tuple[Gpu, ...]:
    return tuple(gpu for gpu in GPUS if gpu.capability == capability)
