"""What SGLang's start-up rules test: a backend flag or phase, a GPU predicate, the machine.

The lowest layer of a release's rules (`compat.engine.rules` and
`compat.engine.model_rules` build on it): each test here is SGLang's own predicate, with
the launch it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from compat.vocab.terms import Platform, Term

if TYPE_CHECKING:
    from compat.engine.launch import Launch


class BackendField(Term):
    """Where a start-up rule looks for a backend: one of the three flags, or a resolved phase.

    SGLang's rules differ: some read `--attention-backend` alone (so an unused default
    still acts), some any of the three flags, later ones the backend each phase runs.
    """

    ATTENTION = "attention_backend"
    PREFILL = "prefill_attention_backend"
    DECODE = "decode_attention_backend"
    RUNS_PREFILL = "prefill phase"
    RUNS_DECODE = "decode phase"

    def __init__(self, value: str) -> None:
        self.flag = "--" + value.replace("_", "-") if "_" in value else f"the {value}"


AB, PB, DB = BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE
RUNS_PREFILL, RUNS_DECODE = BackendField.RUNS_PREFILL, BackendField.RUNS_DECODE
AB_OR_DB = frozenset({AB, DB})
ANY_FLAG = frozenset({AB, PB, DB})
EITHER_PHASE = frozenset({RUNS_PREFILL, RUNS_DECODE})


class GpuGate(msgspec.Struct, frozen=True):
    """One of SGLang's GPU predicates: CUDA, a capability major in `majors`, a CUDA floor."""

    name: str
    majors: frozenset[int]
    min_cuda: tuple[int, int]

    @property
    def label(self) -> str:
        gpus = " or ".join(f"sm{major}x" for major in sorted(self.majors))
        return f"{self.name} ({gpus}, CUDA {self.min_cuda[0]}.{self.min_cuda[1]}+)"


def gpu_gate_holds(gate: GpuGate, launch: Launch) -> bool:
    """SGLang's GPU predicates (e.g. `is_sm100_supported`): CUDA, a CC major, a CUDA floor.

    A CUDA version not given is the release's image's; an unknown compute capability fails.
    """
    if launch.platform is not Platform.CUDA or launch.capability is None:
        return False
    if launch.capability.major not in gate.majors:
        return False
    return launch.cuda >= gate.min_cuda


class Machine(msgspec.Struct, frozen=True):
    """A test SGLang's model-specific code makes of the machine; every part given must hold.

    The GPU predicates read the machine even under `--device cpu` (a GPU host's GPU is
    still there); `device` reads `--device` as SGLang resolved it.
    """

    label: str
    """How a message names it: "SM100", "ROCm", "a CPU with AMX"."""
    gate: GpuGate | None = None
    platform: Platform | None = None
    min_major: int | None = None
    """`get_device_sm() >= 80`: a CUDA GPU of this capability major or newer."""
    min_capability: tuple[int, int] | None = None
    """A capability of at least this (ROCm's gfx950 reports 9.5); unknown fails."""
    device: str | None = None
    """`--device` (or the machine's own device) is this one."""

    def holds(self, launch: Launch) -> bool:
        if self.gate is not None and not gpu_gate_holds(self.gate, launch):
            return False
        if self.platform is not None and launch.platform is not self.platform:
            return False
        if self.min_major is not None and (
            launch.platform is not Platform.CUDA
            or launch.capability is None
            or launch.capability.major < self.min_major
        ):
            return False
        if self.min_capability is not None and (
            launch.capability is None
            or (launch.capability.major, launch.capability.minor) < self.min_capability
        ):
            return False
        return self.device is None or launch.on_device == self.device
