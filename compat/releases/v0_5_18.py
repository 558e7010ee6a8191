"""SGLang 0.5.18: the extra_buffer Mamba cache runs on XPU too."""

from __future__ import annotations

from dataclasses import replace

from compat.releases.entry import Change, Release
from compat.releases.families import ON_CUDA, ON_NPU, ON_ROCM, ON_XPU
from compat.releases.shared import code

RELEASE = Release(
    "0.5.18",
    changes=(
        Change("hybrid models' extra_buffer Mamba cache also runs on XPU",
               code("0.5.18", "ServerArgs._validate_mamba_extra_buffer"),
               {"hybrid_cache": lambda before: replace(
                   before, extra_buffer_machines=(ON_CUDA, ON_NPU, ON_ROCM, ON_XPU))}),
    ),
)  # fmt: skip
