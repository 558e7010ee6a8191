"""Where speculative decoding's first verify pass fails in the target's attention backend.

SGLang starts, loads the weights and builds the backends; the warm-up request then runs the
speculative worker, whose verify pass is a forward pass of the target in `TARGET_VERIFY`
mode. The batch it builds carries no extend fields for that mode, and a backend that reads
them without asking the batch's speculative inputs fails there. Each such gap is data per
release (`compat.releases.verify`, read from the wheels by `tools/verify_gaps.py`), with
the line of each link of the chain.

A second kind fails in flashinfer's sliding-window path (`WindowGap`): with a target whose
model has a sliding window, the backend hands its prefill updater `prefix_lens=None` for the
verify, and the updater subtracts it (`compat.releases.window_data`, read by
`tools/window_gaps.py`).

`predict_verify` replays them after the backend build and the kernels, and returns the
first that fails.
"""

from __future__ import annotations

import msgspec

from compat.engine.kernels import Site
from compat.engine.launch import Launch
from compat.vocab.terms import ModelFeature, Phase, SpeculativeAttentionMode

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


class WindowGap(msgspec.Struct, frozen=True):
    """A speculative algorithm whose verify pass fails in flashinfer's sliding-window path,
    for a target whose model has a sliding window."""

    algorithm: str
    backends: frozenset[str]
    """The names of the backends that build flashinfer's."""
    architectures: frozenset[str]
    """The model classes that define `get_attention_sliding_window_size`, which the model
    runner reads into its `sliding_window_size` (a class may return None for a config
    without a window: the launch's model must have one too)."""
    verify: Site
    """Where the algorithm's worker switches the batch to `TARGET_VERIFY`."""
    select: Site
    """Where the hybrid backend runs the verify: on the prefill backend unless
    `--speculative-attention-mode decode`."""
    passes: Site
    """Where the backend's branch for the mode hands its updater `prefix_lens=None`."""
    window: Site
    """Where the updater switches to its sliding-window method."""
    reads: Site
    """The subtraction of `prefix_lens` that raises (`TypeError` on None)."""

    def meets(self, launch: Launch, model: str) -> bool:
        """Whether the launch's target has a window this gap reads."""
        return model in self.architectures and ModelFeature.SLIDING_WINDOW in launch.features


class VerifyRules(msgspec.Struct, frozen=True):
    """One release's verify gaps."""

    gaps: tuple[VerifyGap, ...] = ()
    window_gaps: tuple[WindowGap, ...] = ()


class VerifyFailure(msgspec.Struct, frozen=True):
    """Where the first verify pass fails: the gap, and the backend that runs the verify."""

    gap: VerifyGap | WindowGap
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
    model: str,
) -> VerifyFailure | None:
    """The first verify gap the launch's speculative algorithm meets on the backend that
    runs its verify, over the (prefill, decode) backends start-up resolved; `model` is the
    target's architecture (for the sliding-window gaps)."""
    if algorithm is None:
        return None
    phase = verify_phase(launch)
    backend = phases[1 if phase is Phase.DECODE else 0]
    gaps: tuple[VerifyGap | WindowGap, ...] = (*rules.gaps, *rules.window_gaps)
    for gap in gaps:
        if (
            gap.algorithm == algorithm
            and backend in gap.backends
            and (isinstance(gap, VerifyGap) or gap.meets(launch, model))
        ):
            own = launch.decode if phase is Phase.DECODE else launch.prefill
            flag = phase.flag if own is not None else "--attention-backend"
            return VerifyFailure(gap, backend, phases[0] != phases[1], flag)
    return None
