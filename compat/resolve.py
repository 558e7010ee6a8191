"""Turn flags into what SGLang would run: phase inheritance, defaults, dtype and page-size fixes.

Each adjustment is recorded as a finding, so nothing the engine would change goes unsaid.
"""

from __future__ import annotations

from compat.config import Parsed
from compat.matrix import MATRIX
from compat.plan import backend_plan
from compat.report import Finding, Resolved
from compat.schema import DefaultChoice, Matrix
from compat.vocab import Phase, Platform, Severity


def phase_flag(parsed: Parsed, phase: Phase) -> str:
    """The flag that chose this phase's backend (`--attention-backend` when inherited)."""
    own = parsed.prefill if phase is Phase.PREFILL else parsed.decode
    return phase.flag if own is not None else "--attention-backend"


def default_backend(parsed: Parsed, matrix: Matrix = MATRIX) -> tuple[DefaultChoice, str] | None:
    """The default-table line that applies and the backend it yields, or None."""
    for choice in matrix.defaults:
        if choice.matches(parsed.platform, parsed.arch, parsed.capability, parsed.cuda_version):
            backend = choice.backend
            if choice.fallback is not None and not _hardware_fits(parsed, backend, matrix):
                backend = choice.fallback
            return choice, backend
    return None


def _hardware_fits(parsed: Parsed, name: str, matrix: Matrix) -> bool:
    backend = matrix.backend(name)
    if parsed.platform not in backend.platforms:
        return False
    needed = backend.capability.get(parsed.arch)
    return needed is None or parsed.capability is None or parsed.capability in needed


def resolve(parsed: Parsed, findings: list[Finding], matrix: Matrix = MATRIX) -> Resolved:
    prefill = parsed.prefill or parsed.backend
    decode = parsed.decode or parsed.backend
    if prefill is None or decode is None:
        default = default_backend(parsed, matrix)
        if default is None:
            findings.append(
                Finding(
                    "no-default-backend",
                    Severity.WARNING,
                    f"no default attention backend is known for {parsed.arch.label} models on "
                    f"{parsed.platform.label}; pass --attention-backend to have it checked",
                    ("--attention-backend",),
                    value=None,
                    allowed=tuple(
                        b.name for b in matrix.backends if parsed.platform in b.platforms
                    ),
                )
            )
        else:
            _, chosen = default
            findings.append(
                Finding(
                    "default-backend",
                    Severity.INFO,
                    f"--attention-backend is unset: SGLang picks {chosen} for "
                    f"{parsed.arch.label} models on {_where(parsed)}",
                    ("--attention-backend",),
                    value=chosen,
                    backend=chosen,
                )
            )
            prefill = prefill or chosen
            decode = decode or chosen
    prefill, decode = _dtype_fallback(parsed, prefill, decode, findings, matrix)
    topk = parsed.topk
    if parsed.speculative and topk is None:
        topk = 1
    elif not parsed.speculative and topk is not None:
        findings.append(
            Finding(
                "spec-topk-without-algorithm",
                Severity.INFO,
                f"--speculative-eagle-topk {topk} has no effect without --speculative-algorithm",
                ("--speculative-eagle-topk",),
                value=str(topk),
            )
        )
        topk = None
    page_size = _page_size(parsed, (prefill, decode), findings, matrix)
    return Resolved(
        arch=parsed.arch,
        platform=parsed.platform,
        compute_capability=parsed.capability,
        prefill_backend=prefill,
        decode_backend=decode,
        kv_dtype=parsed.kv_dtype,
        page_size=page_size,
        speculative=parsed.speculative,
        topk=topk,
    )


def _where(parsed: Parsed) -> str:
    if parsed.platform is Platform.CUDA and parsed.capability is not None:
        return f"{parsed.platform.label} {parsed.capability}"
    return parsed.platform.label


def _dtype_fallback(
    parsed: Parsed,
    prefill: str | None,
    decode: str | None,
    findings: list[Finding],
    matrix: Matrix,
) -> tuple[str | None, str | None]:
    for rule in matrix.dtype_fallback_rules:
        if parsed.kv_dtype is not rule.kv_dtype:
            continue
        phases = tuple(
            phase
            for phase, name in ((Phase.PREFILL, prefill), (Phase.DECODE, decode))
            if name == rule.backend
        )
        if not phases:
            continue
        which = "both phases" if len(phases) == 2 else f"the {phases[0].value} phase"
        findings.append(
            Finding(
                rule.id,
                Severity.WARNING,
                f"{rule.why} With --kv-cache-dtype {rule.kv_dtype.value}, SGLang runs "
                f"{which} on {rule.replacement} instead of {rule.backend}",
                (*dict.fromkeys(phase_flag(parsed, phase) for phase in phases), "--kv-cache-dtype"),
                value=rule.backend,
                allowed=(rule.replacement,),
                backend=rule.backend,
                phases=phases,
            )
        )
        if Phase.PREFILL in phases:
            prefill = rule.replacement
        if Phase.DECODE in phases:
            decode = rule.replacement
    return prefill, decode


def _page_size(
    parsed: Parsed,
    backends: tuple[str | None, str | None],
    findings: list[Finding],
    matrix: Matrix,
) -> int:
    """Snap the page size to what fixed-size kernels can run, as SGLang does."""
    requested = parsed.page_size
    allowed: frozenset[int] | None = None
    owners: list[str] = []
    prefill, decode = backends
    for name in (prefill,) if prefill == decode else backends:
        if name is None:
            continue
        sizes = backend_plan(matrix, parsed.arch, name).fixed_page_sizes
        if sizes is not None:
            owners.append(f"{name} ({', '.join(map(str, sorted(sizes)))})")
            allowed = sizes if allowed is None else allowed & sizes
    if allowed is None:
        return requested if requested is not None else 1
    if not allowed:
        findings.append(
            Finding(
                "page-size-conflict",
                Severity.ERROR,
                f"no page size satisfies both phases: {' and '.join(owners)} run only with "
                "their own native sizes",
                ("--prefill-attention-backend", "--decode-attention-backend", "--page-size"),
                value=None if requested is None else str(requested),
            )
        )
        return requested if requested is not None else 1
    if requested in allowed:
        assert requested is not None
        return requested
    snapped = max(allowed)
    choices = tuple(str(size) for size in sorted(allowed))
    if requested is None:
        findings.append(
            Finding(
                "page-size-default",
                Severity.INFO,
                f"--page-size is unset: SGLang uses {snapped} for {' and '.join(owners)}",
                ("--page-size",),
                value=str(snapped),
                allowed=choices,
            )
        )
    else:
        findings.append(
            Finding(
                "page-size-snapped",
                Severity.WARNING,
                f"--page-size {requested} is not native to {' and '.join(owners)}; "
                f"SGLang changes it to {snapped}",
                ("--page-size",),
                value=str(requested),
                allowed=choices,
            )
        )
    return snapped
