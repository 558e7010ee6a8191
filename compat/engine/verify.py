"""Where speculative decoding's first verify pass fails in the target's attention backend.

SGLang starts, loads the weights and builds the backends; the warm-up request then runs the
speculative worker, whose verify pass is a forward pass of the target in `TARGET_VERIFY`
mode. The batch it builds carries no extend fields for that mode, and a backend that reads
them without asking the batch's speculative inputs fails there. Each such gap is data per
release (`compat.releases.verify`, read from the wheels by `tools/verify_gaps.py`), with
the line of each link of the chain.

`predict_verify` replays them after the backend build and the kernels, and returns the
first that fails.
"""

from __future__ import annotations

import msgspec

from compat.engine.kernels import Site
from compat.engine.launch import Launch
from compat.vocab.terms import Phase, SpeculativeAttentionMode

VERIFY_RULE = "verify-extend-lens"
"""The rule id of the guard's finding for a verify pass that fails."""


class VerifyGap(msgspec.Struct, frozen=True):
    """A speculative algorithm whose verify pass fails in some backends' extend path."""

    algorithm: str
    backends: frozenset[str]
    """The names of the backends whose `forward_extend` fails on the verify batch."""
    verify: Site
    """Where the algorithm's worker switches the batch to `TARGET_VERIFY`."""
    unset: Site
    """Where `ForwardBatch.init_new` leaves the extend fields unset for that mode."""
    select: Site
    """Where the hybrid backend runs the verify: on the prefill backend unless
    `--speculative-attention-mode decode`."""
    dispatch: Site
    """Where the backends' common `forward` sends the mode to `forward_extend`."""
    passes: Site
    """Where the backend hands `extend_prefix_lens` on."""
    reads: Site
    """The read of its shape that raises (`AttributeError` on None)."""


class VerifyRules(msgspec.Struct, frozen=True):
    """One release's verify gaps."""

    gaps: tuple[VerifyGap, ...] = ()


class VerifyFailure(msgspec.Struct, frozen=True):
    """Where the first verify pass fails: the gap, and the backend that runs the verify."""

    gap: VerifyGap
    backend: str
    hybrid: bool = False
    """The phases run different backends: the hybrid backend chose this one."""
    flag: str = "--attention-backend"
    """The flag that chose `backend`: the verifying phase's own flag, when the launch set it."""


def verify_phase(launch: Launch) -> Phase:
    """The phase whose backend runs the target's verify pass: prefill, or decode under
    `--speculative-attention-mode decode` (the same backend where both phases share one)."""
    return Phase.DECODE if launch.spec_mode is SpeculativeAttentionMode.DECODE else Phase.PREFILL


def predict_verify(
    rules: VerifyRules,
    launch: Launch,
    phases: tuple[str | None, str | None],
    algorithm: str | None,
) -> VerifyFailure | None:
    """The first verify gap the launch's speculative algorithm meets on the backend that
    runs its verify, over the (prefill, decode) backends start-up resolved."""
    if algorithm is None:
        return None
    phase = verify_phase(launch)
    backend = phases[1 if phase is Phase.DECODE else 0]
    for gap in rules.gaps:
        if gap.algorithm == algorithm and backend in gap.backends:
            own = launch.decode if phase is Phase.DECODE else launch.prefill
            flag = phase.flag if own is not None else "--attention-backend"
            return VerifyFailure(gap, backend, phases[0] != phases[1], flag)
    return None
