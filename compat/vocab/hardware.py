"""CUDA compute capabilities, and ranges of them, as SGLang's GPU checks compare them; the
ROCm architectures SGLang tells apart."""

from __future__ import annotations

import enum
import re

import msgspec

_CC_PATTERN = re.compile(r"^(?:sm_?)?(\d+)(?:\.(\d+))?$", re.IGNORECASE)


class ComputeCapability(msgspec.Struct, frozen=True, order=True):
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


class CapabilityRange(msgspec.Struct, frozen=True):
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


class RocmArch(enum.Enum):
    """A ROCm GPU architecture (`gcnArchName`), as SGLang's ROCm checks name them
    (`is_gfx95_supported` and the MX quantization that needs gfx950, for instance).

    torch's ROCm build answers `get_device_capability()` with 9.4 on gfx942 and 9.5 on
    gfx950: both pass a check of the major version 9 (the FA3 factory's, for one).
    """

    GFX942 = "gfx942"
    GFX950 = "gfx950"
