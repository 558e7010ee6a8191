"""What SGLang's start-up code did with a launch, as facts: one type per thing it does.

The replay (`compat.engine.startup`) records events; it never words them. The guard turns
each into a finding with the words of its type (`compat.guard.startup_words`), so a new
start-up rule is its step, its event type here and its words there.

Every event names the rule it belongs to (the id the guard's finding carries after
`startup-`; where the page states the same rule, the page's id), the flags that set what
it is about, the value it saw, the values allowed, and the backend concerned.
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.engine.rules import GpuGate
from compat.vocab.terms import Arch, Severity

REFUSE, WARN, NOTE = Severity.ERROR, Severity.WARNING, Severity.INFO
"""SGLang raises, logs a warning, or just acts."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartupEvent:
    """One thing SGLang's start-up code did: refused, warned, or adjusted a field."""

    rule: str
    flags: tuple[str, ...]
    severity: Severity = REFUSE
    value: object = None
    allowed: tuple[object, ...] = ()
    backend: str | None = None


# -- names and platforms ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DeprecatedBackend(StartupEvent):
    """A deprecated backend name, rewritten to what runs instead."""

    rule: str = "deprecated-backend"
    severity: Severity = WARN
    flag: str
    name: str
    target: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AliasKvDtype(StartupEvent):
    """A deprecated backend name whose rewrite also sets the KV dtype."""

    rule: str = "deprecated-backend"
    severity: Severity = WARN
    name: str
    forced: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelKvDtypes(StartupEvent):
    """A model-specific branch that runs only some KV dtypes."""

    model: str
    dtypes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Nvfp4Prefill(StartupEvent):
    """NVFP4's prefill phase runs only on the backends of its dequant dtypes."""

    rule: str = "nvfp4-backends"
    backends: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Nvfp4Decode(StartupEvent):
    rule: str = "nvfp4-backends"
    decode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Nvfp4NativeGpu(StartupEvent):
    """Native NVFP4 prefill off SM100."""

    rule: str = "nvfp4-backends"


@dataclass(frozen=True, slots=True, kw_only=True)
class Nvfp4Disaggregation(StartupEvent):
    """SM100's native NVFP4 cache on trtllm_mha, under PD disaggregation."""

    rule: str = "nvfp4-disaggregation"


@dataclass(frozen=True, slots=True, kw_only=True)
class Nvfp4Backends(StartupEvent):
    """NVFP4 chose its prefill and decode backends."""

    rule: str = "nvfp4-backends"
    severity: Severity = NOTE
    prefill: str
    decode: str


# -- the backend check -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NoSpeculation(StartupEvent):
    """A backend that asserts no speculative decoding."""

    rule: str = "spec-unsupported"
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuGateFailed(StartupEvent):
    """A backend named for a GPU its check does not admit."""

    rule: str = "compute-capability"
    gate: GpuGate


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeOnly(StartupEvent):
    """A decode-only backend named for the prefill phase."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MlaPrefillRefused(StartupEvent):
    """A backend that cannot run an MLA model's prefill phase."""

    rule: str = "mla-prefill"
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PageSnapped(StartupEvent):
    """A backend rewrote the page size (with a warning when `--page-size` set it)."""

    size: int
    was: str
    """What the page size was: "unset", or "N from FLAG-OR-BACKEND"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KvSpellings(StartupEvent):
    """A backend whose string check takes only some `--kv-cache-dtype` spellings."""

    rule: str = "backend-kv-dtype"
    spelled: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DtypeFallenBack(StartupEvent):
    """`--attention-backend` replaced because it cannot read the KV dtype."""

    severity: Severity = WARN
    replacement: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillOnly(StartupEvent):
    """A prefill-only backend named for the decode phase."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DualChunkNeeded(StartupEvent):
    rule: str = "dual-chunk"
    needed: str


# -- the KV cache ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class KvDtypeGpu(StartupEvent):
    """A KV dtype whose check needs a GPU."""

    rule: str = "kv-dtype-gpu"
    kv_dtype: str
    gate: GpuGate


@dataclass(frozen=True, slots=True, kw_only=True)
class Kv4OffCuda(StartupEvent):
    kv_dtype: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Kv4HybridPair(StartupEvent):
    """An FP4 cache with two different phase backends: allowed, with a warning."""

    severity: Severity = WARN
    kv_dtype: str
    prefill: str | None
    decode: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Kv4Partner(StartupEvent):
    """An FP4 cache with the pairing prefill backend and a decode backend it refuses."""

    kv_dtype: str
    prefill: str
    partners: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Kv4Single(StartupEvent):
    """An FP4 cache on one backend that its list for the architecture lacks."""

    kv_dtype: str
    backends: tuple[str, ...]
    arch: Arch


# -- speculative decoding --------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TopkPaged(StartupEvent):
    """Speculative topk above 1 with a page size above 1 on a backend that cannot run it."""

    topk: int
    page_size: int
    backends: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecParamsPartial(StartupEvent):
    """topk or draft tokens without steps: SGLang's automatic choice asserts they are unset."""

    rule: str = "spec-params"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecParamsChosen(StartupEvent):
    rule: str = "spec-auto-params"
    severity: Severity = NOTE
    steps: int
    topk: int
    draft_tokens: int
    model: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TopkOneOnly(StartupEvent):
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NgramOffCuda(StartupEvent):
    rule: str = "ngram-cuda"
