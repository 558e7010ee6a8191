"""The guard's words for where the first prefill fails compiling a kernel over the model's
shapes, after the weights load.

The engine predicts the failure (`compat.engine.shapes`); `finding()` words it, enforced at
the warm-up, naming each link of the chain in the release's code, the kernel's range last.
"""

from __future__ import annotations

from compat.engine.kernels import Site
from compat.engine.shapes import SHAPE_RULE, ShapeFailure
from compat.guard.report import Enforcement, Finding
from compat.vocab.terms import Severity


def _at(site: Site) -> str:
    return f"{site.file}:{site.line}"


def finding(failure: ShapeFailure, release: str) -> Finding:
    """The finding for a first prefill whose kernel cannot compile the model's shapes."""
    gap, backend, site = failure.gap, failure.backend, failure.site
    return Finding(
        SHAPE_RULE,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails in the first prefill: "
        f"on {backend}, the MLA attention takes its MHA path ({_at(gap.handler)}) and "
        f"concatenates the keys with a Triton kernel ({_at(gap.branch)}, {_at(gap.launch)}) "
        f"whose range over the model's {failure.dim} is not a power of two: Triton refuses "
        f'to compile it ("arange\'s range must be a power of 2") (sglang {release}, '
        f"{_at(site)}, {site.function}). Another prefill backend concatenates by slicing",
        (failure.flag,),
        value=backend,
        backend=backend,
        enforced=Enforcement.WARMUP,
        raised_at=f"{_at(site)} ({site.function})",
    )


def is_shape_finding(finding: Finding) -> bool:
    """Whether `finding` is a kernel's failure over the model's shapes."""
    return finding.rule == SHAPE_RULE
