"""The guard's words for where speculative decoding's first verify pass fails in the
target's attention backend, after the weights load.

The engine predicts the failure (`compat.engine.verify`); `finding()` words it, enforced at
the warm-up, naming each link of the chain in the release's code, the raise last: the
extend fields a backend reads (`VerifyGap`), flashinfer's sliding-window updater
(`WindowGap`), or, before the first verify, the draft's draft-extend capture on Triton's
window path (`DraftWindowGap`).
"""

from __future__ import annotations

from compat.claim.words import join_and
from compat.engine.kernels import Site
from compat.engine.verify import (
    DRAFT_EXTEND_RULE,
    VERIFY_RULE,
    DraftWindowGap,
    VerifyFailure,
    VerifyGap,
    VerifyRules,
    WindowGap,
)
from compat.guard.report import Enforcement, Finding
from compat.vocab.terms import Severity


def finding(failure: VerifyFailure, release: str) -> Finding:
    """The finding for a first verify pass (or the draft's capture) that fails in `release`."""
    gap, backend = failure.gap, failure.backend
    if isinstance(gap, DraftWindowGap):
        return _draft_finding(failure, gap, release)
    chosen = (
        f" (the hybrid backend runs the verify on the prefill backend unless "
        f"--speculative-attention-mode decode, {gap.select.at})"
        if failure.hybrid
        else ""
    )
    # The flag that chose the verifying backend; with two backends, the mode that picks it.
    mode = ("--speculative-attention-mode",) if failure.hybrid else ()
    if isinstance(gap, WindowGap):
        chain = (
            f"{backend} runs the verify{chosen}, and for a target with a sliding window its "
            f"branch for the mode hands its prefill updater prefix_lens=None "
            f"({gap.passes.at}); the updater's sliding-window method ({gap.window.at}) "
            f"subtracts it: TypeError: unsupported operand type(s) for -: 'Tensor' and "
            f"'NoneType', at the target's CUDA-graph capture in that mode (without CUDA "
            f"graphs, at the first verify batch)"
        )
    else:
        chain = (
            f"ForwardBatch.init_new leaves extend_prefix_lens unset for it "
            f"({gap.unset.at}); {backend} runs the verify{chosen} through its "
            f"forward_extend ({gap.dispatch.at}, {gap.passes.at}), which reads the "
            f"field's shape: AttributeError: 'NoneType' object has no attribute 'shape'"
        )
    return Finding(
        VERIFY_RULE,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails in the first "
        f"{gap.algorithm} verify pass: the worker runs the target in TARGET_VERIFY mode "
        f"({gap.verify.at}); {chain} "
        f"(sglang {release}, {gap.reads.at}, {gap.reads.function})",
        (failure.flag, *mode, "--speculative-algorithm"),
        value=backend,
        backend=backend,
        enforced=Enforcement.WARMUP,
        raised_at=f"{gap.reads.at} ({gap.reads.function})",
    )


def _draft_finding(failure: VerifyFailure, gap: DraftWindowGap, release: str) -> Finding:
    backend = failure.backend
    return Finding(
        DRAFT_EXTEND_RULE,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails capturing the "
        f"{failure.algorithm} draft's draft-extend CUDA graphs: the model's MTP draft runs "
        f"with a sliding window ({gap.runner.at}); {backend} builds the capture's "
        f"metadata for that mode with the window's KV indices None ({gap.capture.at}), "
        f"and forward_extend takes them for a window layer ({gap.reads.at}) and hands "
        f"them to the extend kernel, which cannot compile a None pointer "
        f"(sglang {release}, {gap.kernel.at}, {gap.kernel.function}; "
        f"--disable-cuda-graph skips the capture)",
        (failure.flag, "--speculative-algorithm", "--disable-cuda-graph"),
        value=backend,
        backend=backend,
        enforced=Enforcement.WARMUP,
        raised_at=f"{gap.kernel.at} ({gap.kernel.function})",
    )


def gap_lines(rules: VerifyRules, backend: str, release: str) -> list[str]:
    """What `release`'s verify gaps say of `backend`: a line per failing read, naming the
    algorithms whose first verify meets it (none: it verifies)."""
    # One line per failing read: the gaps of one chain differ only in the worker's switch.
    chains: dict[tuple[type, Site], tuple[VerifyGap | WindowGap, list[str]]] = {}
    gaps: tuple[VerifyGap | WindowGap, ...] = (*rules.gaps, *rules.window_gaps)
    for gap in gaps:
        if backend in gap.backends:
            chains.setdefault((type(gap), gap.reads), (gap, []))[1].append(gap.algorithm)
    lines = [
        f"SGLang {release}: the first verify of {join_and(algorithms)} fails on it"
        f"{_chain_line(gap)}"
        for gap, algorithms in chains.values()
    ]
    return lines + [
        f"SGLang {release}: the draft's draft-extend CUDA-graph capture fails on it for the "
        f"MTP draft of {join_and(sorted(draft.targets))} when the checkpoint has a sliding "
        f"window: the window's KV indices stay None ({draft.capture.at}) and "
        f"forward_extend hands them to the extend kernel ({draft.kernel.at})"
        for draft in rules.draft_window_gaps
        if backend in draft.backends
    ]


def _chain_line(gap: VerifyGap | WindowGap) -> str:
    reads = f"{gap.reads.at}, {gap.reads.function}"
    if isinstance(gap, WindowGap):
        return (
            f" for a target whose model has a sliding window "
            f"({join_and(sorted(gap.architectures))} define one): its branch for "
            f"TARGET_VERIFY hands its prefill updater "
            f"prefix_lens=None ({gap.passes.at}), and the updater's sliding-window method "
            f"subtracts it ({reads})"
        )
    return (
        f": ForwardBatch.init_new leaves extend_prefix_lens unset for TARGET_VERIFY "
        f"({gap.unset.at}), and its forward_extend reads the field's shape ({reads})"
    )


def is_verify_finding(finding: Finding) -> bool:
    """Whether `finding` is a verify pass's failure in SGLang's first forward pass, or the
    draft's capture before it."""
    return finding.rule in (VERIFY_RULE, DRAFT_EXTEND_RULE)
