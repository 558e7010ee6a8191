"""The words for a release's start-up rules: its default decision and who enforces what.

Every sentence is computed from `compat.releases` data, so the page, `compat explain` and
the export say the same thing, and a changed rule changes them all.
"""

from __future__ import annotations

from collections.abc import Iterator

from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix
from compat.claim.words import code, code_list, codes
from compat.engine.model_rules import MachineChoice, ModelRule
from compat.engine.rules import AB, ANY_FLAG, DefaultBranch, ReleaseRules
from compat.vocab.terms import Arch, Phase


def branch_conditions(branch: DefaultBranch, rules: ReleaseRules) -> str:
    """The conditions of one default branch, in words ("any" when it has none)."""
    parts: list[str] = []
    if branch.gate is not None:
        parts.append(branch.gate.label)
    elif branch.platform is not None:
        parts.append(branch.platform.label)
    if branch.needs_no_spec_or_topk_one:
        parts.append("no speculative decoding, or topk 1 with page size 1")
    if branch.needs_topk_when_speculative:
        parts.append("with speculative decoding only when `--speculative-eagle-topk` is given")
    if branch.architectures is not None and branch.backend == "fa3":
        parts.append(f"the model is one of {len(branch.architectures)} architectures (below)")
    elif branch.architectures is not None:
        parts.append(f"the model is {' or '.join(sorted(branch.architectures))}")
    if branch.unless_sinks:
        parts.append("the model has no attention sinks")
    if branch.kv_heads is not None:
        heads = " or ".join(str(n) for n in sorted(branch.kv_heads))
        parts.append(f"{heads} KV heads per tensor-parallel rank")
    return "; ".join(parts) or "otherwise"


_SPARSE_KINDS: dict[bool | None, str] = {
    True: " (models with DeepSeek sparse attention, DSA)",
    False: " (models without DSA)",
}


def model_rule_text(rule: ModelRule) -> str:
    """One model-specific rule in words: which models, its default, its lists, its page."""
    models = ", ".join(sorted(rule.architectures))
    if rule.substring is not None:
        models += f" (any architecture containing {rule.substring})"
    kind = _SPARSE_KINDS.get(rule.sparse, "")
    parts: list[str] = []
    if rule.defaults:
        unset = (
            "when no backend flag is set"
            if rule.default_unless == ANY_FLAG
            else "whatever the backend flags"
            if not rule.default_unless
            else "when `--attention-backend` is unset"
        )
        picks = ", else ".join(_choice_text(choice) for choice in rule.defaults)
        parts.append(f"{picks} {unset}")
    if rule.allowed:
        where = "`--attention-backend`" if rule.checks == frozenset({AB}) else "both phases"
        parts.append(f"only {codes(rule.allowed)} ({where})")
    if rule.refused:
        parts.append(f"refuses {codes(rule.refused)}")
    sizes = [page for page in rule.pages if page.size is not None]
    if sizes:
        parts.append(
            "page size "
            + ", else ".join(
                f"{page.size}"
                + (f" on {page.on.label}" if page.on is not None else "")
                + (f" with {codes(sorted(page.backends))}" if page.backends else "")
                + (" while `--page-size` is unset" if page.unset_only else "")
                for page in sizes
            )
        )
    if rule.kv_dtypes:
        parts.append(f"`--kv-cache-dtype` only {codes(sorted(rule.kv_dtypes))}")
    if rule.speculation is not None:
        others = "".join(f" or as {code(name)}" for name in rule.speculation_also)
        parts.append(f"speculative decoding only as {code(rule.speculation)} with topk 1{others}")
    if rule.gpu_runtime:
        parts.append("fails to start on a machine without a GPU")
    if rule.skip_devices:
        parts.append(f"not with `--device {', '.join(sorted(rule.skip_devices))}`")
    return f"{models}{kind}: " + "; ".join(parts or ["its Mamba cache rules only"])


def _choice_text(choice: MachineChoice) -> str:
    text = code(choice.value)
    if choice.on is not None:
        text += f" on {choice.on.label}"
    if choice.speculative is not None:
        text += " with speculative decoding" if choice.speculative else " without it"
    if choice.topk_one:
        text += " (topk 1)"
    if choice.kv is not None:
        text += f" with `--kv-cache-dtype {choice.kv}`"
    return text


def default_rows(rules: ReleaseRules) -> Iterator[tuple[str, str, str, str]]:
    """(#, architecture, conditions, backend) for each branch of the default decision."""
    for number, branch in enumerate(rules.defaults, start=1):
        arch = branch.arch.label if branch.arch is not None else "any"
        yield str(number), arch, branch_conditions(branch, rules), code(branch.backend)


def fa3_architectures(rules: ReleaseRules) -> str:
    """The architectures a default branch is limited to ("" when no branch is)."""
    names = next(
        (b.architectures for b in rules.defaults if b.architectures and b.backend == "fa3"), None
    )
    return code_list(sorted(names or ()))


def enforcement_rows(matrix: Matrix, rules: ReleaseRules) -> Iterator[tuple[str, str]]:
    """(subject, what the release's start-up code does about it) for each column and rule."""
    yield from _cache_rows(rules)
    yield "Chunked prefix cache", "not checked"
    yield (
        "Spec topk=1",
        f"not checked, except that {codes(rules.spec_refusing)} refuses any speculative decoding",
    )
    yield (
        "Spec topk>1",
        f"refused on {codes(rules.topk_one_only)} (any backend flag); with page size "
        f"above 1 `--attention-backend` must be {codes(rules.topk_paged_eagle)}",
    )
    yield "Sliding window, multimodal", "not checked"
    yield (
        "Compute capability",
        "checked only for "
        + ", ".join(f"{code(g.backend)} ({g.gate.label})" for g in rules.gpu_gates)
        + "; other GPU limits fail when the backend is built or in its kernels",
    )
    yield (
        "MHA or MLA",
        "not checked at start-up; when the backend is built, after the weights load: "
        + "; ".join(
            what for (rule, _), what in rules.backend_build.items() if rule == "arch-refused"
        ),
    )
    yield (
        "Prefill-only backends",
        f"{codes(rules.prefill_only)} as `--attention-backend` or "
        "`--decode-attention-backend` is refused",
    )
    fallback = rules.dtype_fallback
    yield (
        code(fallback.rule),
        f"applied to `--attention-backend {fallback.backend}` only; a per-phase "
        f"{code(fallback.backend)} keeps running with {code(fallback.kv_dtype)}",
    )


def _cache_rows(rules: ReleaseRules) -> Iterator[tuple[str, str]]:
    """The rows of the page-size and KV-cache columns."""
    kv4 = rules.kv4
    spelled = codes(sorted(kv4.spellings))
    snaps = ", ".join(
        f"{code(s.backend)} → {s.snap_to}" + (f" ({s.arch.label} models)" if s.arch else "")
        for s in rules.page_snaps
    )
    yield "Native page sizes", f"snapped with a warning, never refused: {snaps}"
    yield (
        "FP8 KV cache",
        "not checked"
        + "".join(
            f"; {code(name)} takes only {codes(dtypes)}" for name, dtypes in rules.kv_spellings
        ),
    )
    for arch in Arch:
        yield (
            f"FP4 KV cache ({arch.label})",
            f"with {spelled}: one backend for both phases must be one of "
            f"{codes(kv4.single[arch])}; prefill on {code(kv4.pair_prefill)} needs "
            f"decode on {codes(kv4.pair_partners[arch])}; any other pair starts with "
            "a warning; off CUDA it refuses",
        )


def divergences(matrix: Matrix, rules: ReleaseRules) -> Iterator[str]:
    """Where the release's own code and its page disagree: the FP4 KV cache, the phases a
    backend serves, the backends the page has no row for."""
    release = rules.release
    kv4 = rules.kv4
    takes = dict(rules.kv_spellings)
    for arch in Arch:
        documented = matrix.supporting(arch, ColumnId.FP4_KV)
        for name in kv4.single[arch]:
            if name not in documented:
                row = matrix.row(arch, matrix.judged_as(name))
                mark = row.cells[ColumnId.FP4_KV].symbol if row is not None else "no row"
                yield (
                    f"{code(name)} with an FP4 KV cache ({arch.label}): the page says {mark}, "
                    f"SGLang {release}'s start-up check accepts it"
                )
        for name in documented:
            if name == kv4.pair_prefill:
                continue  # as a prefill backend it follows the pairing rule (its note)
            spelled = takes.get(name)
            if name not in kv4.single[arch] or (
                spelled is not None and not set(spelled) & kv4.spellings
            ):
                yield (
                    f"{code(name)} with an FP4 KV cache ({arch.label}): the page says ✅, SGLang "
                    f"{release}'s start-up check refuses it"
                )
    for backend in matrix.phase_only_backends():
        if backend.phases == frozenset({Phase.PREFILL}) and backend.name not in rules.prefill_only:
            yield (
                f"{code(backend.name)}: the page says it serves only the prefill phase, SGLang "
                f"{release}'s start-up accepts it for decode"
            )
    aliases = {*rules.backend_aliases, *matrix.aliases}
    for name in rules.backend_choices:
        if name not in aliases and all(matrix.row(t.arch, name) is None for t in matrix.tables):
            yield f"{code(name)}: SGLang {release} accepts it, the page has no row for it"
