"""The cross-field rules of the page: what holds across flags, beyond one cell.

Each rule kind judges itself (`judge`): given what SGLang runs, it returns its breaches as
facts, and `compat.claim.words` words them (`message`). A new kind of rule is its type
here, with its `judge`, and its words there; the guard runs every rule the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec

from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, KvDtype, KvFamily, Phase, Platform, Severity


class RunsAs(Protocol):
    """What a rule reads of the configuration SGLang runs (the guard's `Resolved`)."""

    @property
    def arch(self) -> Arch: ...

    @property
    def platform(self) -> Platform: ...

    @property
    def prefill_backend(self) -> str | None: ...

    @property
    def decode_backend(self) -> str | None: ...

    @property
    def kv_dtype(self) -> KvDtype: ...

    @property
    def topk(self) -> int | None: ...

    @property
    def page_size(self) -> int: ...


class RuleContext(Protocol):
    """What a rule reads of its matrix (a `Matrix`)."""

    @property
    def pairing_rules(self) -> tuple[PairingRule, ...]: ...

    def decode_partners(self, rule: PairingRule, arch: Arch) -> tuple[str, ...]: ...


class Breach(msgspec.Struct, frozen=True, kw_only=True):
    """One rule broken by one configuration, as facts; `compat.claim.words.message` words it."""

    rule: str
    severity: Severity = Severity.ERROR
    flags: tuple[str | Phase, ...]
    """The flags involved; a phase stands for the flag that chose that phase's backend."""
    value: str | None = None
    allowed: tuple[str, ...] = ()
    backend: str | None = None
    phases: tuple[Phase, ...] = ()

    def narrowed(self, keep: Callable[[str], bool]) -> Breach:
        """The breach with its allowed values narrowed to those `keep` accepts (the guard
        names only the backends that run the model on the machine asked about); unchanged
        when none would remain, so that a message never points nowhere."""
        kept = tuple(name for name in self.allowed if keep(name))
        if not kept or kept == self.allowed:
            return self
        return msgspec.structs.replace(self, allowed=kept)


_NONE: tuple[Breach, ...] = ()


class DtypeRequirement(msgspec.Struct, frozen=True):
    """What a KV dtype needs from the platform and the software stack."""

    dtype: KvDtype
    rule_id: str
    platforms: frozenset[Platform] | None = None
    """Platforms it is allowed on; None means any."""
    min_cuda: tuple[int, int] | None = None
    min_torch: tuple[int, int] | None = None
    torch_dtype: str | None = None
    """The torch attribute that stores this dtype (checked by platform detection)."""
    evidence: Evidence | None = None

    def judge(self, runs: RunsAs, cuda: tuple[int, int] | None) -> tuple[Breach, ...]:
        """The platform it runs on, and the CUDA version it needs (when known)."""
        platforms = self.platforms
        if (platforms is None or runs.platform in platforms) and (
            cuda is None or self.min_cuda is None
        ):
            return _NONE
        found: list[Breach] = []
        if platforms is not None and runs.platform not in platforms:
            allowed = tuple(p.value for p in Platform if p in platforms)
            found.append(
                DtypePlatformBreach(
                    rule=self.rule_id,
                    flags=("--kv-cache-dtype", "--platform"),
                    value=runs.platform.value,
                    allowed=allowed,
                    requirement=self,
                    platform=runs.platform,
                )
            )
        if (
            runs.platform is Platform.CUDA
            and cuda is not None
            and self.min_cuda is not None
            and cuda < self.min_cuda
        ):
            need = ".".join(map(str, self.min_cuda))
            found.append(
                DtypeCudaBreach(
                    rule=self.rule_id,
                    flags=("--kv-cache-dtype",),
                    value=f"{cuda[0]}.{cuda[1]}",
                    allowed=(f">={need}",),
                    requirement=self,
                    min_cuda=self.min_cuda,
                    cuda=cuda,
                )
            )
        return tuple(found)


class DtypePlatformBreach(Breach, frozen=True, kw_only=True):
    requirement: DtypeRequirement
    platform: Platform


class DtypeCudaBreach(Breach, frozen=True, kw_only=True):
    requirement: DtypeRequirement
    min_cuda: tuple[int, int]
    cuda: tuple[int, int]


class PairingRule(msgspec.Struct, frozen=True):
    """With a KV cache of `kv_family`, prefill on `prefill_backend` needs a decode partner
    outside `excluded`. The family's spellings are its column's (`Matrix.kv_dtypes`)."""

    id: str
    kv_family: KvFamily
    prefill_backend: str
    excluded_decode: frozenset[str]
    evidence: Evidence

    def applies(self, runs: RunsAs) -> bool:
        """Whether the configuration prefills on this rule's backend with its KV family."""
        family = runs.kv_dtype.family
        return runs.prefill_backend == self.prefill_backend and family is self.kv_family

    def judge(
        self, runs: RunsAs, matrix: RuleContext, verify_on_decode: bool
    ) -> tuple[Breach, ...]:
        decode = runs.decode_backend
        if decode is None or decode not in self.excluded_decode or not self.applies(runs):
            return _NONE
        partners = matrix.decode_partners(self, runs.arch)
        return (
            PairingBreach(
                rule=self.id,
                flags=(Phase.DECODE, "--kv-cache-dtype"),
                value=decode,
                allowed=partners,
                backend=decode,
                phases=(Phase.DECODE,),
                pairing=self,
                kv_dtype=runs.kv_dtype,
                decode=decode,
            ),
        )


class PairingBreach(Breach, frozen=True, kw_only=True):
    pairing: PairingRule
    kv_dtype: KvDtype
    decode: str


class HybridCautionRule(msgspec.Struct, frozen=True):
    """With a KV cache of `kv_family`, two different phase backends (other than a pairing)
    get a warning."""

    id: str
    kv_family: KvFamily
    evidence: Evidence

    def judge(
        self, runs: RunsAs, matrix: RuleContext, verify_on_decode: bool
    ) -> tuple[Breach, ...]:
        prefill, decode = runs.prefill_backend, runs.decode_backend
        if prefill is None or decode is None or prefill == decode:
            return _NONE
        if runs.kv_dtype.family is not self.kv_family:
            return _NONE
        if any(rule.applies(runs) for rule in matrix.pairing_rules):
            return _NONE  # a pairing rule judges this pair
        return (
            CautionBreach(
                rule=self.id,
                severity=Severity.WARNING,
                flags=("--prefill-attention-backend", "--decode-attention-backend"),
                value=f"{prefill}+{decode}",
                kv_dtype=runs.kv_dtype,
                prefill=prefill,
                decode=decode,
            ),
        )


class CautionBreach(Breach, frozen=True, kw_only=True):
    kv_dtype: KvDtype
    prefill: str
    decode: str


class SpecPagedRule(msgspec.Struct, frozen=True):
    """For `arch`, speculative topk > 1 with page size > 1 runs only on `backends`."""

    id: str
    arch: Arch
    backends: frozenset[str]
    evidence: Evidence

    def judge(
        self, runs: RunsAs, matrix: RuleContext, verify_on_decode: bool
    ) -> tuple[Breach, ...]:
        topk = runs.topk
        if topk is None or topk <= 1 or runs.page_size <= 1 or runs.arch is not self.arch:
            return _NONE
        prefill, decode = runs.prefill_backend, runs.decode_backend
        found: list[Breach] = []
        for phase, name in ((Phase.PREFILL, prefill), (Phase.DECODE, decode)):
            if name is None or name in self.backends:
                continue
            if phase is Phase.DECODE and name == prefill:
                continue  # one backend, judged once
            if phase is Phase.PREFILL and verify_on_decode:
                continue  # draft and verify run on the decode backend
            found.append(
                SpecPagedBreach(
                    rule=self.id,
                    flags=(phase, "--speculative-eagle-topk", "--page-size"),
                    value=name,
                    allowed=tuple(sorted(self.backends)),
                    backend=name,
                    phases=(phase,),
                    spec_rule=self,
                    topk=topk,
                    page_size=runs.page_size,
                )
            )
        return tuple(found)


class SpecPagedBreach(Breach, frozen=True, kw_only=True):
    spec_rule: SpecPagedRule
    topk: int
    page_size: int

    def narrowed(self, keep: Callable[[str], bool]) -> Breach:
        # Its words list the rule's backends: the narrowed rule lists the kept ones.
        kept = Breach.narrowed(self, keep)
        if kept is self:
            return self
        rule = msgspec.structs.replace(self.spec_rule, backends=frozenset(kept.allowed))
        return msgspec.structs.replace(self, allowed=kept.allowed, spec_rule=rule)


class DtypeFallbackRule(msgspec.Struct, frozen=True):
    """The engine replaces `backend` by `replacement` when it meets `kv_dtype`."""

    id: str
    backend: str
    kv_dtype: KvDtype
    replacement: str
    why: str
    evidence: Evidence

    def judge(
        self, runs: RunsAs, matrix: RuleContext, verify_on_decode: bool
    ) -> tuple[Breach, ...]:
        """Nothing to refuse: SGLang's start-up makes the replacement (the guard reports it)."""
        return _NONE


CrossFieldRule = PairingRule | HybridCautionRule | SpecPagedRule | DtypeFallbackRule
"""The rules that combine several flags, judged after the backends' own cells."""
