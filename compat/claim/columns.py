"""A table's columns: what each speaks for, what the guard does with it, and its trigger.

A column declares its trigger (`when`) next to its action and the flags it speaks for. The
guard compiles "configuration -> active columns" from the triggers once per matrix
(`compat.guard.plan`), and a finding words the column's setting through its trigger, so no
module branches on a column's id. vLLM's attention backends declare their capabilities the
same way, as data read by one generic validator.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

import msgspec

from compat.claim.cells import Action
from compat.vocab.evidence import Evidence
from compat.vocab.terms import KvDtype, KvFamily, ModelFeature, Phase, Term


class Configured(Protocol):
    """What a finding quotes of a configuration (the guard's resolved one has these)."""

    @property
    def kv_dtype(self) -> KvDtype: ...

    @property
    def topk(self) -> int | None: ...

    @property
    def page_size(self) -> int: ...


class Situation(msgspec.Struct, frozen=True):
    """The parts of a resolved configuration that a trigger reads."""

    kv_dtype: KvDtype
    topk: int | None
    page_size: int
    features: frozenset[ModelFeature]


class Trigger:
    """What in a configuration makes a column's cells apply to it."""

    __slots__ = ()

    speculative: ClassVar[bool] = False
    """The column is about speculative decoding. With `--speculative-attention-mode decode`
    its draft and verify kernels run on the decode backend, so the prefill backend's cell
    does not apply."""

    def matches(self, situation: Situation) -> bool:
        raise NotImplementedError

    def setting(self, resolved: Configured) -> str:
        """The flag and value that activated the column, as a finding quotes it ("" if none)."""
        return ""


class Always(msgspec.Struct, Trigger, frozen=True):
    """Every configuration the column's table covers (e.g. chunked prefix cache)."""

    def matches(self, situation: Situation) -> bool:
        return True


class KvDtypeIn(msgspec.Struct, Trigger, frozen=True):
    """A KV cache of one quantized family (FP8, FP4)."""

    family: KvFamily

    def matches(self, situation: Situation) -> bool:
        return situation.kv_dtype.family is self.family

    def setting(self, resolved: Configured) -> str:
        return f"--kv-cache-dtype {resolved.kv_dtype.value}"


class TopkRange(msgspec.Struct, Trigger, frozen=True):
    """Speculative decoding whose topk lies in [low, high] (no upper bound when None)."""

    low: int
    high: int | None = None

    speculative: ClassVar[bool] = True

    def matches(self, situation: Situation) -> bool:
        topk = situation.topk
        return topk is not None and self.low <= topk and (self.high is None or topk <= self.high)

    def setting(self, resolved: Configured) -> str:
        return f"--speculative-eagle-topk {resolved.topk}"


class PageSizeAbove(msgspec.Struct, Trigger, frozen=True):
    """A page size larger than `size`."""

    size: int

    def matches(self, situation: Situation) -> bool:
        return situation.page_size > self.size

    def setting(self, resolved: Configured) -> str:
        return f"--page-size {resolved.page_size}"


class ModelHas(msgspec.Struct, Trigger, frozen=True):
    """A model with `feature` (the configuration says so, or its config.json does)."""

    feature: ModelFeature

    def matches(self, situation: Situation) -> bool:
        return self.feature in situation.features


ALWAYS = Always()


class ColumnId(Term):
    NATIVE_PAGE_SIZES = "native_page_sizes"
    FP8_KV = "fp8_kv"
    FP4_KV = "fp4_kv"
    CHUNKED_PREFIX_CACHE = "chunked_prefix_cache"
    SPEC_TOPK_1 = "spec_topk_1"
    SPEC_TOPK_GT1 = "spec_topk_gt1"
    SLIDING_WINDOW = "sliding_window"
    MULTIMODAL = "multimodal"

    def __init__(self, value: str) -> None:
        self.rule_id = value.replace("_", "-")
        """The id of the finding the guard raises for an unsupported cell of this column."""


class Column(msgspec.Struct, frozen=True):
    """A column of the tables, and what the guard does with its cells."""

    id: ColumnId
    description: str
    action: Action
    """What an unsupported cell makes the guard do. SNAP belongs to the page-size column: a
    cell of fixed sizes is snapped to (nothing to find), any other size is emulated (info)."""
    why: str
    """Why the guard takes `action` (shown in the legend)."""
    when: Trigger
    """What in a configuration makes this column's cells apply to it."""
    flags: tuple[str, ...] = ()
    """The flags this column speaks for: a finding names them after the backend's flags."""
    phases: frozenset[Phase] = frozenset(Phase)
    """The phases whose backend the guard checks against this column."""
    evidence: Evidence | None = None
    """Where this column's claims come from, when not the table's own source."""
    dtypes: tuple[KvDtype, ...] = ()
    """The `--kv-cache-dtype` spellings this column speaks for in its release (a KV column)."""
