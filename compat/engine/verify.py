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

Before the first batch, the draft worker captures its draft-extend CUDA graphs
(`DraftWindowGap`): for an MTP draft the release runs with a sliding window, the Triton
backend's capture metadata for that mode leaves the window's KV indices None, and
`forward_extend` hands them to the extend kernel (`compat.releases.draft_window_data`, read
by `tools/draft_window_gaps.py`).

`predict_verify` replays them after the backend build and the kernels, and returns the
first that fails: the draft's capture, then the verify.
"""

from __future__ import annotations

import msgspec

from compat.engine.build import DRAFT_ALGORITHMS, BuildRules, draft_factory_backends, draft_launch
from compat.engine.kernels import Site
from compat.engine.launch import Launch
from compat.vocab.terms import ModelFeature, Phase, SpeculativeAttentionMode

VERIFY_RULE = "verify-extend-lens"
"""The rule id of the guard's finding for a verify pass that fails."""
DRAFT_EXTEND_RULE = "draft-extend-window"
"""The rule id of the guard's finding for a draft-extend capture that fails."""


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
    hybrid: frozenset[str] = frozenset()
    """The architectures the release's `ModelConfig` runs as hybrid sliding-window models,
    whose window the runner reads from the config (unless the hybrid pool is off)."""

    def meets(self, launch: Launch, model: str) -> bool:
        """Whether the launch's target has a window this gap reads."""
        if ModelFeature.SLIDING_WINDOW not in launch.features:
            return False
        if model in self.architectures:
            return True
        # The config's window, read only while the hybrid pool is on (the hierarchical
        # cache turns it off for some of these models: never predicted with it).
        return model in self.hybrid and launch.hybrid_swa_memory and not launch.hierarchical_cache


class DraftWindowGap(msgspec.Struct, frozen=True):
    """A draft worker whose draft-extend CUDA-graph capture fails in the Triton backend's
    sliding-window path, for an MTP draft the release runs with a window."""

    algorithms: frozenset[str]
    """The speculative algorithms whose draft worker captures a draft-extend graph."""
    backends: frozenset[str]
    """The names of the backends that build Triton's."""
    targets: frozenset[str]
    """The target architectures whose renamed MTP draft the release's `ModelConfig` runs
    as a hybrid sliding-window model with a window (when the checkpoint has one)."""
    drafts: frozenset[str]
    """Those drafts' architectures (`MiMoV2MTP`)."""
    runner: Site
    """Where the draft's model runner takes the config's window."""
    capture: Site
    """Where the capture metadata's draft-extend branch leaves the window's KV indices None."""
    reads: Site
    """Where `forward_extend` takes them for a window layer."""
    kernel: Site
    """The extend kernel's call they reach (it cannot compile a None pointer)."""

    def meets(self, launch: Launch, model: str) -> bool:
        """Whether the launch's draft is an MTP draft with a window this gap reads, and its
        worker captures CUDA graphs."""
        draft = launch.draft_architecture
        if draft is None:  # not known: with no draft attention given, the target's MTP draft
            windowed = launch.draft_arch is None and model in self.targets
        else:
            windowed = draft in self.drafts
        return (
            windowed
            and launch.cuda_graph
            and launch.hybrid_swa_memory
            # MiMo-V2's and Step-3.5's start-up turn the pool off with it in some releases:
            # never predicted with it (a gap can only miss a failure, never invent one).
            and not launch.hierarchical_cache
            and ModelFeature.SLIDING_WINDOW in launch.features
        )


class VerifyRules(msgspec.Struct, frozen=True):
    """One release's gaps in speculative decoding's passes after the weights load."""

    gaps: tuple[VerifyGap, ...] = ()
    window_gaps: tuple[WindowGap, ...] = ()
    draft_window_gaps: tuple[DraftWindowGap, ...] = ()


class VerifyFailure(msgspec.Struct, frozen=True):
    """Where the first verify pass (or the draft's capture before it) fails: the gap, and
    the backend that runs the pass."""

    gap: VerifyGap | WindowGap | DraftWindowGap
    backend: str
    hybrid: bool = False
    """The phases run different backends: the hybrid backend chose this one."""
    flag: str = "--attention-backend"
    """The flag that chose `backend`: the verifying phase's own flag, when the launch set it
    (for the draft's capture, the draft's own flag when set)."""
    algorithm: str = ""
    """The launch's speculative algorithm (after start-up's renames)."""


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
    draft_extend: str | None = None,
) -> VerifyFailure | None:
    """The first gap the launch's speculative algorithm meets: the draft's capture on its
    draft-extend backend (`draft_extend`, None for an algorithm without a draft worker),
    then the verify on the backend that runs it, over the (prefill, decode) backends
    start-up resolved; `model` is the target's architecture (for the sliding-window
    gaps)."""
    if algorithm is None:
        return None
    if draft_extend is not None:
        for draft_gap in rules.draft_window_gaps:
            if (
                algorithm in draft_gap.algorithms
                and draft_extend in draft_gap.backends
                and draft_gap.meets(launch, model)
            ):
                flag = _draft_extend_flag(launch)
                return VerifyFailure(draft_gap, draft_extend, False, flag, algorithm)
    phase = verify_phase(launch)
    backend = phases[1 if phase is Phase.DECODE else 0]
    gaps: tuple[VerifyGap | WindowGap, ...] = (*rules.gaps, *rules.window_gaps)
    for gap in gaps:
        if (
            gap.algorithm == algorithm
            and backend in gap.backends
            and (isinstance(gap, VerifyGap) or gap.meets(launch, model))
        ):
            flag = launch.chose(phase)
            return VerifyFailure(gap, backend, phases[0] != phases[1], flag, algorithm)
    return None


def _draft_extend_flag(launch: Launch) -> str:
    """The flag that chose the draft-extend backend: the draft's own, else the phase's whose
    backend `DraftBackendFactory` takes (decode under `--speculative-attention-mode
    decode`, else prefill) when the launch set it, else `--attention-backend`."""
    if launch.draft_backend is not None:
        return "--speculative-draft-attention-backend"
    return launch.chose(verify_phase(launch))


def draft_extend_backend(
    rules: BuildRules, launch: Launch, phases: tuple[str | None, str | None], algorithm: str | None
) -> str | None:
    """The backend the draft worker's `DraftBackendFactory` builds for its draft-extend
    pass, over the (prefill, decode) backends start-up resolved; None where the algorithm
    has no draft worker."""
    if algorithm not in DRAFT_ALGORITHMS or rules.draft is None:
        return None
    prefill, decode = phases
    decode = decode or prefill
    if decode is None:
        return None
    return draft_factory_backends(rules.draft, draft_launch(launch), (prefill or decode, decode))[0]
