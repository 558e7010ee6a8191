"""Lists of backends worded for the model and the machine asked about.

SGLang's lists (and the page's ✅ columns) are often broader than one launch: they name
backends of every platform and of both architectures. A message names those that can run
this model on this machine, and counts the others in one clause.
"""

from __future__ import annotations

import msgspec

from compat.claim.matrix import ArchStatus
from compat.engine.predicates import gpu_gate_holds
from compat.guard.plan import MEMO_LIMIT, CompiledGuard
from compat.inputs.config import Parsed
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch, Platform


class Fit(msgspec.Struct, frozen=True):
    """The model and machine a list of backends is worded for: SGLang's lists are often
    broader (every platform, both architectures), and a message names only what can run."""

    arch: Arch
    platform: Platform
    capability: ComputeCapability | None
    compiled: CompiledGuard
    gated: frozenset[str] = frozenset()
    """The backends the release's start-up GPU checks refuse on this machine."""
    known: frozenset[str] = frozenset()
    """The matrix's backends and aliases (a list may name others: SGLang's word stands)."""
    answers: dict[str, str | None] = msgspec.field(default_factory=dict)
    """`runs` of each name asked about: a fit lives as long as its release and machine are
    asked about, and the guard asks it about the same backends for every launch."""

    def runs(self, name: str) -> str | None:
        """None when backend `name` runs this model on this machine; else why not, as the
        clause it is counted under ("other platforms", "other GPUs", "MHA models")."""
        answers = self.answers
        if name in answers:
            return answers[name]
        answer = answers[name] = self._runs(name)
        return answer

    def _runs(self, name: str) -> str | None:
        if name not in self.known:
            return None  # a name the page has no row for: SGLang's word is all there is
        plan = self.compiled.plan(self.arch, name)
        if self.platform not in plan.platforms:  # untested there still runs
            return OTHER_PLATFORMS
        if plan.status is ArchStatus.REFUSED:
            others = " or ".join(arch.label for arch in Arch if arch is not self.arch)
            return f"{others} models"
        needed, capability = plan.capability, self.capability
        known = self.platform is Platform.CUDA and capability is not None
        if (needed is not None and known and capability not in needed) or name in self.gated:
            return OTHER_GPUS
        return None

    def runs_here(self, name: str) -> bool:
        return self.runs(name) is None

    def backend_list(self, names: tuple[str, ...]) -> bool:
        """Whether `names` are backends (a rule's allowed values may be platforms)."""
        return bool(names) and all(name in self.known for name in names)

    def fitting(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """The backends of `names` that run this model on this machine, in SGLang's order."""
        return tuple(name for name in names if self.runs(name) is None)

    def named(self, names: tuple[str, ...], joiner: str = ", ") -> str:
        """`names` for this model and machine: those that run, then one clause per reason
        for the others ("and 4 for other platforms")."""
        kept: list[str] = []
        left: dict[str, list[str]] = {}
        for name in names:
            why = self.runs(name)
            if why is None:
                kept.append(name)
            else:
                left.setdefault(why, []).append(name)
        if not kept:  # nothing runs here: name them all, and say so
            return f"{joiner.join(names)} ({self.nowhere(names)})"
        text = joiner.join(kept)
        if left:
            text += f" (and {_clauses(left)})"
        return text

    def nowhere(self, names: tuple[str, ...]) -> str:
        """Said of a list none of which runs this model here (its names are already said):
        what they are for."""
        left = dict.fromkeys(self.runs(name) or OTHER_GPUS for name in names)
        return f"{NOWHERE}: they are for {' or '.join(left)}"


NOWHERE = "none of them runs here"


def _clauses(left: dict[str, list[str]]) -> str:
    """One clause per reason: another GPU is a change the reader can make, so those are
    named; the others are counted."""
    return "; ".join(
        f"{', '.join(names)} on {why}" if why == OTHER_GPUS else f"{len(names)} for {why}"
        for why, names in left.items()
    )


OTHER_PLATFORMS, OTHER_GPUS = "other platforms", "other GPUs"


def fit_for(parsed: Parsed, compiled: CompiledGuard) -> Fit:
    """The fit of a launch: its model and machine, and the backends its release's GPU
    checks refuse there (the page's capability ranges can be wider than SGLang's gates).

    One per matrix, release and machine: a failing launch words several lists."""
    release = parsed.release
    key = (id(compiled), id(release), parsed.arch, parsed.platform, parsed.capability,
           parsed.cuda_version)  # fmt: skip
    known = _FITS.get(key)
    # The entry keeps its release and guard alive, so their ids name them while it lives.
    if known is not None and known[0] is release and known[1].compiled is compiled:
        return known[1]
    gated: frozenset[str] = frozenset()
    if parsed.platform is Platform.CUDA:
        gates = release.gpu_gates
        gated = frozenset(g.backend for g in gates if not gpu_gate_holds(g.gate, parsed))
    matrix = compiled.matrix
    names = frozenset((*matrix.backend_names, *matrix.aliases))
    fit = Fit(parsed.arch, parsed.platform, parsed.capability, compiled, gated, names)
    if len(_FITS) >= MEMO_LIMIT:
        _FITS.clear()
    _FITS[key] = (release, fit)
    return fit


_FITS: dict[tuple[object, ...], tuple[object, Fit]] = {}
