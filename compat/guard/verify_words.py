"""The guard's words for where speculative decoding's first verify pass fails in the
target's attention backend, after the weights load.

The engine predicts the failure (`compat.engine.verify`); `finding()` words it, enforced at
the warm-up, naming each link of the chain in the release's code, the raise last.
"""

from __future__ import annotations

from compat.claim.words import join_and
from compat.engine.kernels import Site
from compat.engine.verify import VERIFY_RULE, VerifyFailure, VerifyRules
from compat.guard.report import Enforcement, Finding
from compat.vocab.terms import Severity


def _at(site: Site) -> str:
    return f"{site.file}:{site.line}"


def finding(failure: VerifyFailure, release: str) -> Finding:
    """The finding for a first verify pass that fails in `release`."""
    gap, backend = failure.gap, failure.backend
    chosen = (
        f" (the hybrid backend runs the verify on the prefill backend unless "
        f"--speculative-attention-mode decode, {_at(gap.select)})"
        if failure.hybrid
        else ""
    )
    # The flag that chose the verifying backend; with two backends, the mode that picks it.
    mode = ("--speculative-attention-mode",) if failure.hybrid else ()
    return Finding(
        VERIFY_RULE,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails in the first "
        f"{gap.algorithm} verify pass: the worker runs the target in TARGET_VERIFY mode "
        f"({_at(gap.verify)}), for which ForwardBatch.init_new leaves extend_prefix_lens "
        f"unset ({_at(gap.unset)}); {backend} runs the verify{chosen} through its "
        f"forward_extend ({_at(gap.dispatch)}, {_at(gap.passes)}), which reads the field's "
        f"shape: AttributeError: 'NoneType' object has no attribute 'shape' "
        f"(sglang {release}, {_at(gap.reads)}, {gap.reads.function})",
        (failure.flag, *mode, "--speculative-algorithm"),
        value=backend,
        backend=backend,
        enforced=Enforcement.WARMUP,
        raised_at=f"{_at(gap.reads)} ({gap.reads.function})",
    )


def gap_lines(rules: VerifyRules, backend: str, release: str) -> list[str]:
    """What `release`'s verify gaps say of `backend`: a line per failing read, naming the
    algorithms whose first verify meets it (none: it verifies)."""
    by_read: dict[tuple[Site, Site], list[str]] = {}
    for gap in rules.gaps:
        if backend in gap.backends:
            by_read.setdefault((gap.unset, gap.reads), []).append(gap.algorithm)
    return [
        f"SGLang {release}: the first verify of {join_and(algorithms)} fails on it: "
        f"ForwardBatch.init_new leaves extend_prefix_lens unset for TARGET_VERIFY "
        f"({_at(unset)}), and its forward_extend reads the field's shape ({_at(reads)}, "
        f"{reads.function})"
        for (unset, reads), algorithms in by_read.items()
    ]


def is_verify_finding(finding: Finding) -> bool:
    """Whether `finding` is a verify pass's failure in SGLang's first forward pass."""
    return finding.rule == VERIFY_RULE
