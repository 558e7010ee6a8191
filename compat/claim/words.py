"""Each rule's words, in one place: the page's, `compat explain`'s and the guard's.

A rule of the matrix is said in up to four forms: its statement (the page's "Cross-field
rules" table, the export, `compat explain`), its note on the page, its line in
`compat explain`, and the message of the finding the guard raises. Each form is a
`functools.singledispatch` function over the rule types (`message` over the breaches a
rule's `judge` returns), registered next to the rule's other forms. Sentences that state
the same requirement share their clauses, so the page and the finding cannot drift.

`statement` and `note` are Markdown (code spans); `explanation` and the messages are plain
text for a terminal. A phase-limited `Backend` stands for the rule it carries
(`phase_rule_id`, e.g. `fa4-prefill-only`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import singledispatch

from compat.claim.backends import Backend, phase_rule_id
from compat.claim.matrix import Matrix
from compat.claim.rules import (
    Breach,
    CautionBreach,
    DtypeCudaBreach,
    DtypeFallbackRule,
    DtypePlatformBreach,
    DtypeRequirement,
    HybridCautionRule,
    PairingBreach,
    PairingRule,
    SpecPagedBreach,
    SpecPagedRule,
)
from compat.vocab.spelling import join_or
from compat.vocab.terms import Arch, KvDtype, KvFamily, Phase, Platform

# -- shared helpers ---------------------------------------------------------------------------


def code(text: object) -> str:
    return f"`{text}`"


def codes(names: Iterable[str]) -> str:
    """Alternatives as code: `a`, `a` or `b`, `a`, `b` or `c`."""
    return join_or([code(name) for name in names])


def code_list(names: Iterable[str]) -> str:
    """A plain enumeration as code: `a`, `b`, `c`."""
    return ", ".join(code(name) for name in names)


def join_and(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def phases(served: frozenset[Phase]) -> str:
    """`prefill`, `decode` or `prefill and decode`, in phase order."""
    return join_and([phase.value for phase in Phase if phase in served])


def _version(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def kv_cache(matrix: Matrix, family: KvFamily, *, markdown: bool = True) -> str:
    """`an FP4 KV cache (--kv-cache-dtype nvfp4 or fp4_mx_block16)`, as the release spells it."""
    spelled = [d.value for d in matrix.kv_dtypes(family)]
    text = f"an {family.value.upper()} KV cache"
    if not spelled:
        return text
    if markdown:
        return f"{text} ({codes(f'--kv-cache-dtype {dtype}' for dtype in spelled)})"
    return f"{text} (--kv-cache-dtype {join_or(spelled)})"


# -- the forms --------------------------------------------------------------------------------


@singledispatch
def statement(rule: object, matrix: Matrix) -> str:
    """The rule in one Markdown sentence: the "Cross-field rules" table and the export."""
    raise TypeError(f"no statement for {type(rule).__name__}")


@singledispatch
def note(rule: object, matrix: Matrix) -> str:
    """The rule as the page's notes say it (Markdown)."""
    raise TypeError(f"no note for {type(rule).__name__}")


@singledispatch
def message(breach: Breach) -> str:
    """The guard's message for a broken rule (plain text)."""
    raise TypeError(f"no message for {type(breach).__name__}")


@singledispatch
def explanation(rule: object, matrix: Matrix, backend: str) -> str | None:
    """`compat explain BACKEND`'s line for the rule; None when the rule does not concern it."""
    raise TypeError(f"no explanation for {type(rule).__name__}")


# -- the KV dtype's platform and software requirement -----------------------------------------
# One clause per requirement, shared by the page and the findings.


def _runs_only_on(platforms: str) -> str:
    return f"runs only on {platforms}"


def _needs(software: str, version: tuple[int, ...]) -> str:
    return f"needs {software} {_version(version)} or newer"


def _stored_as(torch_dtype: str) -> str:
    return f"is stored as {torch_dtype}"


def requirement_clauses(requirement: DtypeRequirement) -> str:
    """`runs only on CUDA, needs CUDA 12.8 or newer and is stored as ...` (Markdown)."""
    parts = []
    if requirement.platforms is not None:
        labels = [p.label for p in Platform if p in requirement.platforms]
        parts.append(_runs_only_on(join_and(labels)))
    if requirement.min_cuda is not None:
        parts.append(_needs("CUDA", requirement.min_cuda))
    if requirement.min_torch is not None:
        parts.append(_needs("PyTorch", requirement.min_torch))
    if requirement.torch_dtype is not None:
        parts.append(_stored_as(code(f"torch.{requirement.torch_dtype}")))
    return join_and(parts)


@statement.register
def _(rule: DtypeRequirement, matrix: Matrix) -> str:
    return f"`--kv-cache-dtype {rule.dtype.value}` {requirement_clauses(rule)}."


@note.register
def _(rule: DtypeRequirement, matrix: Matrix) -> str:
    return f"{code(rule.dtype.value)} {requirement_clauses(rule)} (rule {code(rule.rule_id)})."


@message.register
def _(breach: DtypePlatformBreach) -> str:
    return platform_message(breach.requirement, breach.allowed, breach.platform)


@message.register
def _(breach: DtypeCudaBreach) -> str:
    return cuda_message(breach.requirement, breach.min_cuda, breach.cuda)


def platform_message(rule: DtypeRequirement, allowed: tuple[str, ...], platform: Platform) -> str:
    return (
        f"--kv-cache-dtype {rule.dtype.value} {_runs_only_on(', '.join(allowed))}, not on "
        f"{platform.value}"
    )


def cuda_message(rule: DtypeRequirement, min_cuda: tuple[int, int], cuda: tuple[int, int]) -> str:
    return (
        f"--kv-cache-dtype {rule.dtype.value} {_needs('CUDA', min_cuda)}; this build has "
        f"CUDA {_version(cuda)}"
    )


def torch_dtype_message(rule: DtypeRequirement, torch_dtype: str, torch: tuple[int, int]) -> str:
    return (
        f"--kv-cache-dtype {rule.dtype.value} {_stored_as(f'torch.{torch_dtype}')}, which the "
        f"installed torch {_version(torch)} does not have"
    )


def torch_message(
    rule: DtypeRequirement, min_torch: tuple[int, int], torch: tuple[int, int]
) -> str:
    return (
        f"--kv-cache-dtype {rule.dtype.value} {_needs('PyTorch', min_torch)}; installed: "
        f"{_version(torch)}"
    )


# -- pairing: a prefill backend that needs a decode partner -----------------------------------


@statement.register
def _(rule: PairingRule, matrix: Matrix) -> str:
    """Built from the rule's data and the FP4 cells that decide the partners."""
    partners = {arch: codes(list(matrix.decode_partners(rule, arch))) for arch in Arch}
    excluded = codes(sorted(rule.excluded_decode))
    return (
        f"With {kv_cache(matrix, rule.kv_family)}, `{rule.prefill_backend}` must be "
        f"paired with a different `--decode-attention-backend`; {excluded} cannot be that "
        f"partner. The partners that work are {partners[Arch.MHA]} for MHA models and "
        f"{partners[Arch.MLA]} for MLA models."
    )


@explanation.register
def _(rule: PairingRule, matrix: Matrix, backend: str) -> str | None:
    partner = any(backend in matrix.decode_partners(rule, t.arch) for t in matrix.tables)
    if backend == rule.prefill_backend or backend in rule.excluded_decode or partner:
        return statement(rule, matrix)
    return None


@message.register
def _(breach: PairingBreach) -> str:
    return pairing_message(breach.pairing, breach.kv_dtype, breach.decode, breach.allowed)


def pairing_message(
    rule: PairingRule, kv_dtype: KvDtype, decode: str, partners: tuple[str, ...]
) -> str:
    return (
        f"with --kv-cache-dtype {kv_dtype.value}, prefill on {rule.prefill_backend} cannot "
        f"pair with decode on {decode}; use --decode-attention-backend {' or '.join(partners)}"
    )


# -- hybrid caution: two different phase backends with a KV dtype -----------------------------


@statement.register
def _(rule: HybridCautionRule, matrix: Matrix) -> str:
    return (
        f"With {kv_cache(matrix, rule.kv_family)}, SGLang starts different prefill and "
        "decode backends that no pairing rule covers with a warning; each phase is still "
        f"judged by its own {rule.kv_family.value.upper()} cell."
    )


@note.register
def _(rule: HybridCautionRule, matrix: Matrix) -> str:
    return (
        "SGLang starts any other pair of different prefill and decode backends with "
        f"{kv_cache(matrix, rule.kv_family)} with a warning (rule {code(rule.id)}): "
        "hybrid pairs are less exercised with this cache. The page still marks each phase by "
        f"its own {rule.kv_family.value.upper()} cell."
    )


@explanation.register
def _(rule: HybridCautionRule, matrix: Matrix, backend: str) -> str | None:
    column = matrix.kv_family_column(rule.kv_family)
    if not any(backend in matrix.supporting(t.arch, column) for t in matrix.tables):
        return None
    return (
        f"with {kv_cache(matrix, rule.kv_family, markdown=False)}, a hybrid pair of two "
        "different phase backends gets a warning"
    )


@message.register
def _(breach: CautionBreach) -> str:
    return caution_message(breach.kv_dtype, breach.prefill, breach.decode)


def caution_message(kv_dtype: KvDtype, prefill: str, decode: str) -> str:
    return (
        f"--kv-cache-dtype {kv_dtype.value} with prefill on {prefill} and decode on {decode}: "
        "a hybrid pair may hit rare edge cases"
    )


# -- speculative topk > 1 with paging ---------------------------------------------------------


def _spec_paged(topk: object, page_size: object, backends: str, arch: Arch) -> str:
    return (
        f"speculative topk {topk} with page size {page_size} runs only on {backends} for "
        f"{arch.label} models"
    )


@statement.register
def _(rule: SpecPagedRule, matrix: Matrix) -> str:
    return (
        f"For {rule.arch.label} models, speculative decoding with topk > 1 and a page size "
        f"above 1 runs only on {codes(sorted(rule.backends))}."
    )


@note.register
def _(rule: SpecPagedRule, matrix: Matrix) -> str:
    return (
        f"For {rule.arch.label} models, topk > 1 with a page size above 1 runs only on "
        f"{codes(sorted(rule.backends))} (rule {code(rule.id)})."
    )


@explanation.register
def _(rule: SpecPagedRule, matrix: Matrix, backend: str) -> str | None:
    if backend in rule.backends:
        role = "this backend is one of them"
    elif matrix.row(rule.arch, backend) is not None:
        role = "this backend is refused there"
    else:
        return None
    return f"{_spec_paged('> 1', '> 1', join_or(sorted(rule.backends)), rule.arch)}; {role}"


@message.register
def _(breach: SpecPagedBreach) -> str:
    return spec_paged_message(breach.spec_rule, breach.topk, breach.page_size, breach.value or "")


def spec_paged_message(rule: SpecPagedRule, topk: int, page_size: int, backend: str) -> str:
    only = ", ".join(sorted(rule.backends))
    return f"{_spec_paged(topk, page_size, only, rule.arch)}, not {backend}"


# -- a backend SGLang replaces for a KV dtype -------------------------------------------------


@statement.register
def _(rule: DtypeFallbackRule, matrix: Matrix) -> str:
    return (
        f"With `--kv-cache-dtype {rule.kv_dtype.value}`, SGLang replaces {code(rule.backend)} "
        f"by {code(rule.replacement)}. {rule.why}"
    )


@note.register
def _(rule: DtypeFallbackRule, matrix: Matrix) -> str:
    return (
        f"{code(rule.backend)} with `--kv-cache-dtype {rule.kv_dtype.value}`: SGLang runs "
        f"{code(rule.replacement)} instead and warns (rule {code(rule.id)}). {rule.why}"
    )


@explanation.register
def _(rule: DtypeFallbackRule, matrix: Matrix, backend: str) -> str | None:
    if backend not in (rule.backend, rule.replacement):
        return None
    return (
        f"with --kv-cache-dtype {rule.kv_dtype.value}, SGLang runs {rule.replacement} instead "
        f"of {rule.backend}: {rule.why}"
    )


# -- a backend that serves one phase only ------------------------------------------------------


def _serves_only(backend: Backend) -> str:
    return f"serves only the {phases(backend.phases)} phase"


def _phase_flags(backend: Backend) -> str:
    return join_and([code(phase.flag) for phase in Phase if phase in backend.phases])


@statement.register
def _(rule: Backend, matrix: Matrix) -> str:
    return f"{code(rule.name)} {_serves_only(rule)}; set it with {_phase_flags(rule)}."


@note.register
def _(rule: Backend, matrix: Matrix) -> str:
    """Follows the backend's name in the page's list of phase-limited backends."""
    missing = frozenset(phase for phase in Phase if phase not in rule.phases)
    return (
        f"{_serves_only(rule)}; select it with {_phase_flags(rule)} and choose another "
        f"backend for the {phases(missing)} phase (rule {code(phase_rule_id(rule))})."
    )


@explanation.register
def _(rule: Backend, matrix: Matrix, backend: str) -> str | None:
    if rule.name != backend or rule.phases == frozenset(Phase):
        return None
    return f"runs only the {phases(rule.phases)} phase"


def phases_served(backend: Backend) -> str:
    """`compat explain`'s summary of the phases a backend serves."""
    if backend.phases == frozenset(Phase):
        return "prefill and decode"
    other = ", ".join(phase.flag for phase in Phase if phase not in backend.phases)
    return (
        f"{phases(backend.phases)} only: pair it with another {other} "
        f"(rule {phase_rule_id(backend)})"
    )


def phase_message(backend: Backend, phase: Phase) -> str:
    return (
        f"{backend.name} cannot serve the {phase.value} phase (it runs only "
        f"{phases(backend.phases)}); choose another {phase.flag}"
    )
