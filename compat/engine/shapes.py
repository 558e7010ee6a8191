"""Where the first prefill fails compiling a kernel whose ranges are the model's own shapes.

SGLang starts, loads the weights and builds the backends; the warm-up's prefill then runs
the model's attention. With the prefill phase on aiter (ROCm), DeepSeek's MLA attention
takes its MHA path for a prefill without a prefix and concatenates the keys' two halves with
a Triton kernel whose `tl.arange` ranges are the heads per rank, `qk_nope_head_dim` and
`qk_rope_head_dim`; Triton compiles only power-of-two ranges, and nothing on that branch
asks (the CUDA branch does, and falls back to slicing). The data is per release
(`compat.releases.shape_data`, read from the wheels by `tools/shape_gaps.py`), with the
line of each link of the chain.
"""

from __future__ import annotations

import msgspec

from compat.engine.kernels import Site
from compat.engine.launch import Launch
from compat.vocab.terms import Arch, Phase, Platform

SHAPE_RULE = "kernel-power-of-two"
"""The rule id of the guard's finding for a kernel that cannot compile the model's shapes."""


class PowerOfTwoGap(msgspec.Struct, frozen=True):
    """A kernel the prefill backend's path launches with the model's shapes as `tl.arange`
    ranges, which Triton compiles only for powers of two."""

    backends: frozenset[str]
    """The prefill backends whose path launches it (aiter's)."""
    architectures: frozenset[str]
    """The model classes that run the attention that launches it."""
    padded: tuple[Site, Site] | None
    """Where the launcher hands a head count that is not a power of two to a padding kernel
    (from 0.5.18): that kernel's ranges over `qk_nope_head_dim` and `qk_rope_head_dim`
    (only the dims then fail)."""
    handler: Site
    """Where the backend's handler takes the MHA path for a prefill."""
    branch: Site
    """The backend's branch of the key concatenation, which does not ask for powers of two."""
    launch: Site
    """Its call of the kernel's launcher."""
    heads: Site
    """The kernel's `tl.arange` over the heads per rank."""
    nope: Site
    """Over `qk_nope_head_dim`."""
    rope: Site
    """Over `qk_rope_head_dim`."""


class ShapeRules(msgspec.Struct, frozen=True):
    """One release's kernels that need power-of-two shapes."""

    gaps: tuple[PowerOfTwoGap, ...] = ()


class ShapeFailure(msgspec.Struct, frozen=True):
    """Where the first prefill fails: the gap, the prefill backend, and the range that is
    not a power of two (its name, its value, the kernel's line)."""

    gap: PowerOfTwoGap
    backend: str
    dim: str
    value: int
    site: Site
    flag: str = "--attention-backend"
    """The flag that chose the prefill backend: `--prefill-attention-backend` when set."""


def predict_shapes(
    rules: ShapeRules, launch: Launch, prefill: str | None, model: str
) -> ShapeFailure | None:
    """The first gap the launch's prefill backend meets with the model's shapes (None where
    the launch does not give them, or each is a power of two)."""
    if launch.platform is not Platform.ROCM or launch.arch is not Arch.MLA or prefill is None:
        return None
    for gap in rules.gaps:
        if prefill not in gap.backends or model not in gap.architectures:
            continue
        heads = heads_per_rank(launch)
        # Heads that are not a power of two go to the padding kernel, where it exists.
        padded = gap.padded is not None and heads is not None and not _power_of_two(heads)
        nope, rope = gap.padded if padded and gap.padded is not None else (gap.nope, gap.rope)
        ranges = [
            (f"qk_nope_head_dim {launch.qk_nope_head_dim}", launch.qk_nope_head_dim, nope),
            (f"qk_rope_head_dim {launch.qk_rope_head_dim}", launch.qk_rope_head_dim, rope),
        ]
        if gap.padded is None:
            ranges.insert(0, (f"{heads} heads per rank", heads, gap.heads))
        for dim, value, site in ranges:
            if value is not None and not _power_of_two(value):
                flag = launch.chose(Phase.PREFILL)
                return ShapeFailure(gap, prefill, dim, value, site, flag)
    return None


def heads_per_rank(launch: Launch) -> int | None:
    """The attention's heads on each rank: the model's, over the attention's tensor
    parallelism (`--tp-size`, divided by `--dp-size` under `--enable-dp-attention`)."""
    if launch.q_heads is None:
        return None
    attention_tp = launch.tp_size // launch.dp_size if launch.dp_attention else launch.tp_size
    return launch.q_heads // max(1, attention_tp)


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0
