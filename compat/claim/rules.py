"""The cross-field rules of the page: what holds across flags, beyond one cell."""

from __future__ import annotations

from dataclasses import dataclass

from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, KvDtype, Platform


@dataclass(frozen=True)
class DtypeRequirement:
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


@dataclass(frozen=True)
class PairingRule:
    """With `kv_dtype`, prefill on `prefill_backend` needs a decode partner outside `excluded`."""

    id: str
    kv_dtype: KvDtype
    prefill_backend: str
    excluded_decode: frozenset[str]
    evidence: Evidence


@dataclass(frozen=True)
class HybridCautionRule:
    """With `kv_dtype`, two different phase backends (other than a pairing) get a warning."""

    id: str
    kv_dtype: KvDtype
    evidence: Evidence


@dataclass(frozen=True)
class SpecPagedRule:
    """For `arch`, speculative topk > 1 with page size > 1 runs only on `backends`."""

    id: str
    arch: Arch
    backends: frozenset[str]
    evidence: Evidence


@dataclass(frozen=True)
class DtypeFallbackRule:
    """The engine replaces `backend` by `replacement` when it meets `kv_dtype`."""

    id: str
    backend: str
    kv_dtype: KvDtype
    replacement: str
    why: str
    evidence: Evidence
