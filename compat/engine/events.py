"""What SGLang's start-up code did with a launch, as facts: one type per thing it does.

The replay (`compat.engine.startup`) records events; it never words them. The guard turns
each into a finding with the words of its type (`compat.guard.startup_words`), so a new
start-up rule is its step, its event type here and its words there.

Every event names the rule it belongs to (the id the guard's finding carries after
`startup-`; where the page states the same rule, the page's id), the flags that set what
it is about, the value it saw, the values allowed, and the backend concerned.
"""

from __future__ import annotations

import msgspec

from compat.engine.rules import GpuGate
from compat.vocab.terms import Arch, Severity

REFUSE, WARN, NOTE = Severity.ERROR, Severity.WARNING, Severity.INFO
"""SGLang raises, logs a warning, or just acts."""


class StartupEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One thing SGLang's start-up code did: refused, warned, or adjusted a field."""

    rule: str
    flags: tuple[str, ...]
    severity: Severity = REFUSE
    value: object = None
    allowed: tuple[object, ...] = ()
    backend: str | None = None


# -- names and platforms ---------------------------------------------------------------------


class DeprecatedBackend(StartupEvent, frozen=True, kw_only=True):
    """A deprecated backend name, rewritten to what runs instead."""

    rule: str = "deprecated-backend"
    severity: Severity = WARN
    flag: str
    name: str
    target: str


class AliasKvDtype(StartupEvent, frozen=True, kw_only=True):
    """A deprecated backend name whose rewrite also sets the KV dtype."""

    rule: str = "deprecated-backend"
    severity: Severity = WARN
    name: str
    forced: str


class ModelKvDtypes(StartupEvent, frozen=True, kw_only=True):
    """A model-specific branch that runs only some KV dtypes."""

    model: str
    dtypes: tuple[str, ...]


class Nvfp4Prefill(StartupEvent, frozen=True, kw_only=True):
    """NVFP4's prefill phase runs only on the backends of its dequant dtypes."""

    rule: str = "nvfp4-backends"
    backends: tuple[str, ...]


class Nvfp4Decode(StartupEvent, frozen=True, kw_only=True):
    rule: str = "nvfp4-backends"
    decode: str


class Nvfp4NativeGpu(StartupEvent, frozen=True, kw_only=True):
    """Native NVFP4 prefill off SM100."""

    rule: str = "nvfp4-backends"


class Nvfp4Disaggregation(StartupEvent, frozen=True, kw_only=True):
    """SM100's native NVFP4 cache on trtllm_mha, under PD disaggregation."""

    rule: str = "nvfp4-disaggregation"


class Nvfp4DraftBackend(StartupEvent, frozen=True, kw_only=True):
    """SM100's native NVFP4 cache on trtllm_mha: the draft model's backend is set to, or
    must be, the one that reads its layout."""

    rule: str = "nvfp4-draft-backend"
    required: str


class Nvfp4SpecAlgorithm(StartupEvent, frozen=True, kw_only=True):
    """SM100's native NVFP4 cache on trtllm_mha, with an algorithm it does not run."""

    rule: str = "nvfp4-spec-algorithm"
    algorithm: str


class Nvfp4NgramBreadth(StartupEvent, frozen=True, kw_only=True):
    """SM100's native NVFP4 cache on trtllm_mha verifies a linear chain only: NGRAM's BFS
    breadth must be 1, and SGLang's default is wider."""

    rule: str = "nvfp4-spec-algorithm"
    breadth: int
    required: int


class Nvfp4Backends(StartupEvent, frozen=True, kw_only=True):
    """NVFP4 chose its prefill and decode backends."""

    rule: str = "nvfp4-backends"
    severity: Severity = NOTE
    prefill: str
    decode: str


# -- the backend check -------------------------------------------------------------------------


class NoSpeculation(StartupEvent, frozen=True, kw_only=True):
    """A backend that asserts no speculative decoding."""

    rule: str = "spec-unsupported"
    name: str


class GpuGateFailed(StartupEvent, frozen=True, kw_only=True):
    """A backend named for a GPU its check does not admit."""

    rule: str = "compute-capability"
    gate: GpuGate


class DecodeOnly(StartupEvent, frozen=True, kw_only=True):
    """A decode-only backend named for the prefill phase."""

    name: str


class MlaPrefillRefused(StartupEvent, frozen=True, kw_only=True):
    """A backend that cannot run an MLA model's prefill phase."""

    rule: str = "mla-prefill"
    name: str


class PageSnapped(StartupEvent, frozen=True, kw_only=True):
    """A backend rewrote the page size (with a warning when `--page-size` set it)."""

    size: int
    was: str
    """What the page size was: "unset", or "N from FLAG-OR-BACKEND"."""


class KvSpellings(StartupEvent, frozen=True, kw_only=True):
    """A backend whose string check takes only some `--kv-cache-dtype` spellings."""

    rule: str = "backend-kv-dtype"
    spelled: tuple[str, ...]


class DtypeFallenBack(StartupEvent, frozen=True, kw_only=True):
    """`--attention-backend` replaced because it cannot read the KV dtype."""

    severity: Severity = WARN
    replacement: str


class PrefillOnly(StartupEvent, frozen=True, kw_only=True):
    """A prefill-only backend named for the decode phase."""

    name: str


class DualChunkNeeded(StartupEvent, frozen=True, kw_only=True):
    rule: str = "dual-chunk"
    needed: str


# -- the KV cache ----------------------------------------------------------------------------


class KvDtypeGpu(StartupEvent, frozen=True, kw_only=True):
    """A KV dtype whose check needs a GPU."""

    rule: str = "kv-dtype-gpu"
    kv_dtype: str
    gate: GpuGate


class Kv4OffCuda(StartupEvent, frozen=True, kw_only=True):
    kv_dtype: str


class Kv4HybridPair(StartupEvent, frozen=True, kw_only=True):
    """An FP4 cache with two different phase backends: allowed, with a warning."""

    severity: Severity = WARN
    kv_dtype: str
    prefill: str | None
    decode: str | None


class Kv4Partner(StartupEvent, frozen=True, kw_only=True):
    """An FP4 cache with the pairing prefill backend and a decode backend it refuses."""

    kv_dtype: str
    prefill: str
    partners: tuple[str, ...]


class Kv4Single(StartupEvent, frozen=True, kw_only=True):
    """An FP4 cache on one backend that its list for the architecture lacks."""

    kv_dtype: str
    backends: tuple[str, ...]
    arch: Arch


# -- speculative decoding --------------------------------------------------------------------


class TopkPaged(StartupEvent, frozen=True, kw_only=True):
    """Speculative topk above 1 with a page size above 1 on a backend that cannot run it."""

    topk: int
    page_size: int
    backends: tuple[str, ...]


class SpecParamsPartial(StartupEvent, frozen=True, kw_only=True):
    """topk or draft tokens without steps: SGLang's automatic choice asserts they are unset."""

    rule: str = "spec-params"


class SpecParamsChosen(StartupEvent, frozen=True, kw_only=True):
    rule: str = "spec-auto-params"
    severity: Severity = NOTE
    steps: int
    topk: int
    draft_tokens: int
    model: str


class TopkOneOnly(StartupEvent, frozen=True, kw_only=True):
    name: str


class NgramOffCuda(StartupEvent, frozen=True, kw_only=True):
    rule: str = "ngram-cuda"


class SpecNotModelled(StartupEvent, frozen=True, kw_only=True):
    """An algorithm the release accepts whose own start-up handler the replay does not run
    (DFLASH, FROZEN_KV_MTP, DSPARK, UNO): what it, or its draft worker when the backends are
    built (FROZEN_KV_MTP above topk 1 builds its draft on triton only), sets or refuses is
    not predicted."""

    rule: str = "spec-not-modelled"
    severity: Severity = NOTE  # SGLang itself says nothing: the words say it is the guard's gap
    algorithm: str
