"""Turn flags into what SGLang would run, as its own start-up code does (`compat.engine.startup`).

Each adjustment is recorded as a finding, so nothing the engine would change goes unsaid.
"""

from __future__ import annotations

from collections.abc import Iterator

from compat.claim.baseline import MATRIX
from compat.claim.matrix import Matrix
from compat.engine.events import DtypeFallenBack
from compat.engine.model_events import ModelPage
from compat.engine.rules import BranchCondition, DefaultMove, ReleaseRules
from compat.engine.startup.replay import Startup, replay
from compat.guard import build_words, kernel_words, shape_words, startup_findings, verify_words
from compat.guard.fit import fit_for
from compat.guard.plan import MEMO_LIMIT, CompiledGuard, FindingMemo
from compat.guard.plan import compiled as compiled_guard
from compat.guard.report import STARTUP_PREFIX, Enforcement, Finding, Resolved
from compat.inputs.config import Parsed
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Arch, KvDtype, Phase, Platform, Severity


def phase_flag(parsed: Parsed, phase: Phase) -> str:
    """The flag that chose this phase's backend (`--attention-backend` when inherited)."""
    own = parsed.prefill if phase is Phase.PREFILL else parsed.decode
    return phase.flag if own is not None else "--attention-backend"


def resolve(parsed: Parsed, findings: list[Finding], matrix: Matrix = MATRIX) -> Resolved:
    """What SGLang's start-up code runs: its own findings, then the page's view of the result."""
    return resolve_applying(parsed, findings, matrix)[0]


def resolve_applying(
    parsed: Parsed, findings: list[Finding], matrix: Matrix = MATRIX
) -> tuple[Resolved, frozenset[tuple[str, str | None]]]:
    """`resolve()`, and the (rule, backend) pairs SGLang's start-up code itself applied.

    A pure function of the launch, so each distinct launch is replayed once per matrix.
    """
    compiled = compiled_guard(matrix)
    memo = compiled.launches
    release = parsed.release
    key = parsed.replay_key
    known = memo.get(key)
    if known is None or known[0] is not release:
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        own: list[Finding] = []
        resolved = _resolve(parsed, own, compiled)
        pairs = [
            (f.rule.removeprefix(STARTUP_PREFIX), f.backend)
            for f in own
            if f.severity is not Severity.INFO and f.enforced is Enforcement.STARTUP
        ]
        applied = frozenset(pairs) if pairs else _NOTHING_APPLIED
        known = memo[key] = (release, resolved, tuple(own), applied)
    findings.extend(known[2])
    return known[1], known[3]


_NOTHING_APPLIED: frozenset[tuple[str, str | None]] = frozenset()


def refused_at_startup(parsed: Parsed) -> bool:
    """Whether SGLang's start-up code refuses the launch: then check() reports the refusal
    as an error (`startup_findings.finding` keeps each event's severity), so a search that
    wants only passing launches need not resolve or judge it further."""
    return _replayed(parsed).refused


_REPLAYED: dict[object, tuple[ReleaseRules, Startup]] = {}


def _replayed(parsed: Parsed) -> Startup:
    """`replay()` of the launch, each launch once: the fix search's shortcut replays a
    candidate, and check() the same candidate when it is not refused."""
    key, release = parsed.replay_key, parsed.release
    known = _REPLAYED.get(key)
    if known is None or known[0] is not release:
        if len(_REPLAYED) >= MEMO_LIMIT:
            _REPLAYED.clear()
        known = _REPLAYED[key] = (release, replay(parsed, release))
    return known[1]


def _resolve(parsed: Parsed, findings: list[Finding], compiled: CompiledGuard) -> Resolved:
    startup = _replayed(parsed)
    release = parsed.release.release
    matrix = compiled.matrix
    # Worded once per event (events are values): most launches repeat another's events.
    memo = compiled.findings
    # Lists of backends are worded for the model and the machine asked about.
    fit = fit_for(parsed, compiled)
    machine = (parsed.arch, parsed.platform, parsed.capability, parsed.cuda_version)
    for event in startup.events:
        fallback = isinstance(event, DtypeFallenBack)
        reason = _fallback_reason(matrix, event.rule) if fallback else None
        inputs = (event, release, reason, machine)
        findings.append(memo.finding(startup_findings.finding, inputs, event, release, reason, fit))
    failure = startup.build
    if failure is not None:
        findings.append(memo.finding(build_words.finding, (failure, release), failure, release))
    kernel = startup.kernel
    if kernel is not None:
        findings.append(memo.finding(kernel_words.finding, (kernel, release), kernel, release))
    verify = startup.verify
    if verify is not None:
        findings.append(memo.finding(verify_words.finding, (verify, release), verify, release))
    shape = startup.shape
    if shape is not None:
        findings.append(memo.finding(shape_words.finding, (shape, release), shape, release))
    findings.extend(_resolution_notes(parsed, startup, memo))
    values = startup.fields
    prefill, decode = values.phases
    _fixed_page_conflicts(parsed, startup, findings, compiled)
    speculative = values.algorithm is not None
    spec = (values.topk, values.steps, values.draft_tokens) if speculative else _NOT_SPECULATIVE
    kv_dtype = KV_DTYPE_SPELLINGS.get(values.kv_dtype, parsed.kv_dtype)
    where = (parsed.arch, parsed.platform, parsed.capability)
    return _interned_resolved(
        (*where, prefill, decode, kv_dtype, startup.page_size, speculative, *spec)
    )


_NOT_SPECULATIVE = (None, None, None)
_ResolvedValues = tuple[
    Arch, Platform, ComputeCapability | None, str | None, str | None, KvDtype, int, bool,
    int | None, int | None, int | None,
]  # fmt: skip
_RESOLVED: dict[_ResolvedValues, Resolved] = {}


def _interned_resolved(values: _ResolvedValues) -> Resolved:
    """The `Resolved` of these field values (in field order), one object per value: many
    launches resolve alike, and a frozen dataclass's construction costs more than the
    lookup (sampled, about 7% of a check of a launch not seen before)."""
    known = _RESOLVED.get(values)
    if known is None:
        if len(_RESOLVED) >= MEMO_LIMIT:
            _RESOLVED.clear()
        known = _RESOLVED[values] = Resolved(*values)
    return known


def _fallback_reason(matrix: Matrix, rule: str) -> str | None:
    """The page's words for why a KV dtype falls back, if it has a rule for it."""
    return next((r.why for r in matrix.dtype_fallback_rules if r.id == rule), None)


def _resolution_notes(parsed: Parsed, startup: Startup, memo: FindingMemo) -> Iterator[Finding]:
    """What the replay chose without being told: the default, the model, an idle topk.

    Worded once per `memo` and the inputs each note's words depend on."""
    release = parsed.release
    chosen = startup.default_backend
    if chosen is not None:
        both_set = parsed.prefill is not None and parsed.decode is not None
        move = startup.default_move
        inputs = (release.release, chosen, parsed.arch, parsed.platform, parsed.capability,
                  startup.default_by, both_set, move)  # fmt: skip
        yield memo.finding(
            _default_note, inputs, parsed, chosen, startup.default_by, both_set, move
        )
    auto_spec = parsed.algorithm is not None and parsed.steps is None
    if parsed.model_architecture is None and (chosen is not None or auto_spec):
        assumed = release.assumed_architecture(parsed.arch)
        yield memo.finding(_assumed_model_note, (assumed,), assumed)
    if startup.fields.algorithm is None and parsed.topk is not None:
        yield memo.finding(_idle_topk_note, (parsed.topk,), parsed.topk)


def _default_note(
    parsed: Parsed,
    chosen: str,
    default_by: str | None,
    both_set: bool,
    move: DefaultMove | None,
) -> Finding:
    unused = " (neither phase runs it, but its page-size rules still apply)" if both_set else ""
    moved = "" if move is None else f", not its usual {move.usual}: {_why_moved(move)}"
    return Finding(
        "default-backend",
        Severity.INFO,
        f"--attention-backend is unset: SGLang {parsed.release.release} picks {chosen} for "
        f"{parsed.arch.label} models on {_where(parsed)}"
        f"{'' if default_by is None else f' ({default_by})'}{moved}{unused}",
        ("--attention-backend",),
        value=chosen,
        backend=chosen,
        enforced=Enforcement.STARTUP,
    )


def _why_moved(move: DefaultMove) -> str:
    """Which input turned the default decision away from its usual branch, and the
    condition of that branch in the release's code."""
    usual, condition = move.usual, move.condition
    if condition is BranchCondition.NO_SPEC_OR_TOPK_ONE:
        if move.topk == 1:
            given = f"speculative topk 1 with page size {move.page_size}"
        else:
            given = f"speculative topk {move.topk}"
        return (
            f"{given} turned it down (it picks {usual} only without speculative decoding, "
            "or with topk 1 and page size 1)"
        )
    if condition is BranchCondition.TOPK_WHEN_SPECULATIVE:
        return (
            "speculative decoding without --speculative-eagle-topk turned it down (it picks "
            f"{usual} with speculation only when the topk is given)"
        )
    if condition is BranchCondition.KV_HEADS:
        needs = " or ".join(map(str, move.needs_kv_heads))
        return (
            f"{move.kv_heads or 0} KV heads per rank turned it down (it picks {usual} only "
            f"with {needs})"
        )
    return f"the model's attention sinks turned it down ({usual} does not run them)"


def _assumed_model_note(assumed: str) -> Finding:
    return Finding(
        "model-architecture-assumed",
        Severity.INFO,
        f"SGLang's choice depends on the model; assumed {assumed} (pass "
        "--model-architecture or --model-config)",
        ("--model-architecture",),
        value=assumed,
        enforced=Enforcement.STARTUP,
    )


def _idle_topk_note(topk: int) -> Finding:
    return Finding(
        "spec-topk-without-algorithm",
        Severity.INFO,
        f"--speculative-eagle-topk {topk} has no effect without --speculative-algorithm",
        ("--speculative-eagle-topk",),
        value=str(topk),
    )


def _fixed_page_conflicts(
    parsed: Parsed, startup: Startup, findings: list[Finding], compiled: CompiledGuard
) -> None:
    """A kernel with fixed page sizes that SGLang leaves on another size (the other phase's).

    Where SGLang's own start-up chose both the backend (no flag named it) and the page size
    (the model's own branch: DeepSeek DSA's page 1 on ROCm), it runs the model so by design:
    the page's fixed sizes are contradicted by the code, which decides: a warning."""
    prefill, decode = startup.fields.phases
    page_size = startup.page_size
    chosen = next(
        (e for e in startup.events if isinstance(e, ModelPage) and e.size == page_size), None
    )
    # One backend on both phases is judged once.
    for phase, name in (
        (Phase.PREFILL, prefill),
        (Phase.DECODE, None if decode == prefill else decode),
    ):
        if name is None:
            continue
        sizes = compiled.plan(parsed.arch, name).fixed_page_sizes
        if sizes is None or page_size in sizes:
            continue
        allowed = tuple(str(size) for size in sorted(sizes))
        runs = f"{name} runs only with page size {' or '.join(allowed)}, but SGLang runs "
        own = chosen is not None and _sglangs_choice(parsed, phase)
        findings.append(
            Finding(
                "page-size-conflict",
                Severity.WARNING if own else Severity.ERROR,
                f"{runs}page size {page_size} "
                + (
                    f"(its own start-up chose both for this model: {chosen.model}, "
                    f"{chosen.source}): the code decides, so this is a warning"
                    if own and chosen is not None
                    else "(set for the other phase or by --page-size)"
                ),
                (phase_flag(parsed, phase), "--page-size"),
                value=str(page_size),
                allowed=allowed,
                backend=name,
                phases=(phase,),
            )
        )


def _sglangs_choice(parsed: Parsed, phase: Phase) -> bool:
    """Whether no flag named the phase's backend (SGLang's own default chose it)."""
    own = parsed.prefill if phase is Phase.PREFILL else parsed.decode
    return own is None and parsed.backend is None


def _where(parsed: Parsed) -> str:
    if parsed.platform is Platform.CUDA and parsed.capability is not None:
        return f"{parsed.platform.label} {parsed.capability}"
    return parsed.platform.label
