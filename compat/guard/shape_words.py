"""The guard's words for where the first prefill fails compiling a kernel over the model's
shapes, after the weights load.

The engine predicts the failure (`compat.engine.shapes`); `finding()` words it, enforced at
the warm-up, naming each link of the chain in the release's code, the kernel's range last.
"""

from __future__ import annotations

from compat.engine.shapes import SHAPE_RULE, ShapeFailure, ShapeRules
from compat.guard.report import Enforcement, Finding
from compat.vocab.spelling import join_or
from compat.vocab.terms import Severity


def finding(failure: ShapeFailure, release: str) -> Finding:
    """The finding for a first prefill whose kernel cannot compile the model's shapes."""
    gap, backend, site = failure.gap, failure.backend, failure.site
    return Finding(
        SHAPE_RULE,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails in the first prefill: "
        f"on {backend}, the MLA attention takes its MHA path ({gap.handler.at}) and "
        f"concatenates the keys with a Triton kernel ({gap.branch.at}, {gap.launch.at}) "
        f"whose range over the model's {failure.dim} is not a power of two: Triton refuses "
        f'to compile it ("arange\'s range must be a power of 2") (sglang {release}, '
        f"{site.at}, {site.function}). Another prefill backend concatenates by slicing",
        (failure.flag,),
        value=backend,
        backend=backend,
        enforced=Enforcement.WARMUP,
        raised_at=f"{site.at} ({site.function})",
    )


def gap_lines(rules: ShapeRules, backend: str, release: str) -> list[str]:
    """What `release`'s kernels over the model's shapes say of `backend` as the prefill
    backend: a line per gap (none: its first prefill compiles whatever the shapes)."""
    lines = []
    for gap in rules.gaps:
        if backend not in gap.backends:
            continue
        ranges = ["qk_nope_head_dim", "qk_rope_head_dim"]
        if gap.padded is None:  # from 0.5.18 the launcher pads the heads
            ranges.insert(0, "the heads per rank")
        lines.append(
            f"SGLang {release}: on ROCm, the first prefill of an MLA model that runs DeepSeek's "
            f"attention ({len(gap.architectures)} classes) fails on it when "
            f"{join_or(ranges)} is not a power of two: its MHA path concatenates the "
            f"keys with a Triton kernel over those ranges ({gap.launch.at}, {gap.nope.at})"
        )
    return lines


def is_shape_finding(finding: Finding) -> bool:
    """Whether `finding` is a kernel's failure over the model's shapes."""
    return finding.rule == SHAPE_RULE
