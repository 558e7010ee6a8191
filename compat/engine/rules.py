"""The shape of a release's start-up rules: what `compat.engine.startup.replay` replays, as data.

`compat.releases` fills these for SGLang 0.5.7 and records, for each later release, only
what changed. Lists that SGLang's code shares with the page (the KV4 backends, the fixed
page sizes, a backend's KV dtypes) are derived from the matrix, not written again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from compat.claim.matrix import ColumnId, DtypeFallbackRule, Matrix
from compat.vocab.terms import Arch, CellKind, Evidence, KvDtype, Phase, Platform, Term

if TYPE_CHECKING:
    from compat.inputs.config import Parsed


class BackendField(Term):
    """Where a start-up rule looks for a backend: one of the three flags, or a resolved phase.

    SGLang's rules differ: some read `--attention-backend` alone (so an unused default
    still acts), some any of the three flags, later ones the backend each phase runs.
    """

    ATTENTION = "attention_backend"
    PREFILL = "prefill_attention_backend"
    DECODE = "decode_attention_backend"
    RUNS_PREFILL = "prefill phase"
    RUNS_DECODE = "decode phase"

    def __init__(self, value: str) -> None:
        self.flag = "--" + value.replace("_", "-") if "_" in value else f"the {value}"


AB, PB, DB = BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE
RUNS_PREFILL, RUNS_DECODE = BackendField.RUNS_PREFILL, BackendField.RUNS_DECODE
AB_OR_DB = frozenset({AB, DB})
ANY_FLAG = frozenset({AB, PB, DB})
EITHER_PHASE = frozenset({RUNS_PREFILL, RUNS_DECODE})


@dataclass(frozen=True)
class GpuGate:
    """One of SGLang's GPU predicates: CUDA, a capability major in `majors`, a CUDA floor."""

    name: str
    majors: frozenset[int]
    min_cuda: tuple[int, int]

    @property
    def label(self) -> str:
        gpus = " or ".join(f"sm{major}x" for major in sorted(self.majors))
        return f"{self.name} ({gpus}, CUDA {self.min_cuda[0]}.{self.min_cuda[1]}+)"


@dataclass(frozen=True)
class DefaultBranch:
    """One branch of SGLang's default decision; the first whose conditions all hold wins."""

    backend: str
    arch: Arch | None = None
    platform: Platform | None = None
    gate: GpuGate | None = None
    needs_no_spec_or_topk_one: bool = False
    """Taken only without speculation, or with topk 1 and page size 1 (or unset)."""
    needs_topk_when_speculative: bool = False
    """With speculation, taken only when `--speculative-eagle-topk` was given."""
    architectures: frozenset[str] | None = None
    kv_heads: frozenset[int] | None = None
    """KV heads per tensor-parallel rank that the branch needs."""


@dataclass(frozen=True)
class ModelOverride:
    """A model-specific adjustment that runs before the default decision, so it wins."""

    rule: str
    architectures: frozenset[str]
    backend: str
    gate: GpuGate | None = None
    sparse: bool = False
    """Applies to the DeepSeek sparse-attention (DSA) members of the family only."""
    page_size: int | None = None
    kv_dtypes: frozenset[str] = frozenset()
    kv_aliases: Mapping[str, str] = field(default_factory=dict)
    auto_kv_dtype: Callable[[Parsed], str] | None = None


@dataclass(frozen=True)
class PageSnap:
    """A page-size rewrite with a warning: a size outside `sizes` becomes the largest one."""

    backend: str
    fields: frozenset[BackendField]
    sizes: frozenset[int]
    arch: Arch | None = None
    """Only for models of this architecture."""
    gate: GpuGate | None = None
    """Only on this GPU."""
    max_topk: int | None = None
    """Only when `--speculative-eagle-topk` (unset counts as 0) is at most this."""
    target: int | None = None
    """The size it snaps to, when not the largest of `sizes`."""

    @property
    def snap_to(self) -> int:
        return self.target if self.target is not None else max(self.sizes)


@dataclass(frozen=True)
class BackendGate:
    """A backend named in `fields` needs the GPU of `gate`, or SGLang refuses to start."""

    backend: str
    fields: frozenset[BackendField]
    gate: GpuGate

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags (or phases) of `fields`, in `BackendField`'s declaration order.

        Not the set's own order: its members hash by identity, so it iterates them in
        memory-address order, which any change to the imports reshuffles.
        """
        return tuple(field.flag for field in BackendField if field in self.fields)


@dataclass(frozen=True)
class Kv4Rules:
    """The FP4 cache's start-up check, with its backend lists per architecture."""

    spellings: frozenset[str]
    pair_prefill: str
    pair_partners: Mapping[Arch, tuple[str, ...]]
    single: Mapping[Arch, tuple[str, ...]]
    rule_ids: tuple[str, str, str]
    """The page's ids of the same rules: (CUDA only, FA4 pairing, hybrid pair)."""


@dataclass(frozen=True)
class SpecParams:
    steps: int
    topk: int
    draft_tokens: int


@dataclass(frozen=True)
class SpecAutoCase:
    params: SpecParams
    algorithm: str | None = None
    architectures: frozenset[str] | None = None


@dataclass(frozen=True)
class ReleaseRules:
    """Everything one release's start-up code decides about attention, with its sources."""

    release: str
    backend_choices: tuple[str, ...]
    """What `--attention-backend` and the phase flags accept (argparse choices)."""
    kv_choices: tuple[str, ...]
    algorithm_choices: tuple[str, ...]
    backend_aliases: Mapping[str, str]
    """Deprecated names that start-up rewrites to their successor."""
    defaults: tuple[DefaultBranch, ...]
    model_overrides: tuple[ModelOverride, ...]
    assumed_architectures: Mapping[Arch, str]
    """The model assumed when none is named: the most common of each architecture."""
    page_snaps: tuple[PageSnap, ...]
    gpu_gates: tuple[BackendGate, ...]
    kv_spellings: tuple[tuple[str, tuple[str, ...]], ...]
    """Backends that take only these `--kv-cache-dtype` strings (as spelled)."""
    kv_gates: Mapping[str, GpuGate]
    """KV dtypes that need a GPU."""
    kv_refused_at_build: Mapping[str, str]
    """KV dtypes that start-up lets through and the KV pool then refuses: why."""
    dtype_fallback: DtypeFallbackRule
    """The page's fallback rule; the code applies it to `--attention-backend` only."""
    prefill_only: tuple[str, ...]
    decode_only: Mapping[str, str]
    """Decode-only backends, with the prefill backend SGLang picks when prefill is unset."""
    mla_prefill_refused: tuple[str, ...]
    spec_refusing: tuple[str, ...]
    kv4: Kv4Rules
    nvfp4_prefill_backends: Mapping[str, str] | None
    """NVFP4's automatic prefill backends by dequant dtype (None: the release has no such hook)."""
    eagle_family: frozenset[str]
    ngram: str
    ngram_bfs_breadth: int
    algorithm_aliases: Mapping[str, str]
    spec_auto_params: tuple[SpecAutoCase, ...]
    topk_one_only: tuple[str, ...]
    topk_one_only_fields: frozenset[BackendField]
    topk_paged_eagle: tuple[str, ...]
    topk_paged_ngram: tuple[str, ...]
    topk_paged_rule_id: str
    dual_chunk_backend: str | None
    backend_build: Mapping[tuple[str, str], str]
    """(documented rule id, backend) -> what fails when SGLang builds that backend."""
    evidence: Mapping[str, Evidence]
    """Rule -> where in the release's code it was read."""
    replacements: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Values this release no longer accepts -> what to use instead."""
    alias_kv_dtypes: Mapping[str, str] = field(default_factory=dict)
    """Deprecated backend names whose rewrite also sets `--kv-cache-dtype`."""
    backend_phases: Mapping[str, frozenset[Phase]] = field(default_factory=dict)
    """Backends whose phases differ from the page's baseline (the documented guard follows)."""

    def assumed_architecture(self, arch: Arch) -> str:
        return self.assumed_architectures[arch]

    @cached_property
    def backend_set(self) -> frozenset[str]:
        return frozenset(self.backend_choices)

    @cached_property
    def kv_set(self) -> frozenset[str]:
        return frozenset(self.kv_choices)

    @cached_property
    def algorithm_set(self) -> frozenset[str]:
        return frozenset(self.algorithm_choices)

    @cached_property
    def snapping_backends(self) -> frozenset[str]:
        """The backends of `page_snaps`: a launch naming none of them skips the snaps."""
        return frozenset(snap.backend for snap in self.page_snaps)

    @cached_property
    def gated_backends(self) -> frozenset[str]:
        """The backends of `gpu_gates`: a launch naming none of them skips the gates."""
        return frozenset(gate.backend for gate in self.gpu_gates)


# -- facts shared with the page ----------------------------------------------------------


def fp4_backends(matrix: Matrix, arch: Arch) -> tuple[str, ...]:
    """The backends whose FP4 KV cell is ✅ for `arch`, in table order."""
    return tuple(
        row.backend
        for row in matrix.table(arch).rows
        if row.cells[ColumnId.FP4_KV].kind is CellKind.SUPPORTED
    )


def kv4_rules(
    matrix: Matrix,
    spellings: frozenset[str],
    backends: tuple[str, ...],
    also_accepts: Mapping[Arch, tuple[str, ...]] | None = None,
) -> Kv4Rules:
    """The code's KV4 lists: the FP4 column's backends that the release has, less the pairing
    rule's exclusions and the prefill-only ones, plus what the code accepts beyond the page."""
    rule = matrix.pairing_rules[0]
    prefill_only = {b.name for b in matrix.backends if len(b.phases) == 1}
    single: dict[Arch, tuple[str, ...]] = {}
    partners: dict[Arch, tuple[str, ...]] = {}
    for arch in Arch:
        capable = tuple(
            b for b in fp4_backends(matrix, arch) if b not in prefill_only and b in backends
        )
        extra = (also_accepts or {}).get(arch, ())
        single[arch] = tuple(dict.fromkeys(capable + extra))
        partners[arch] = tuple(b for b in capable if b not in rule.excluded_decode)
    cuda = next(r.rule_id for r in matrix.dtype_requirements if r.dtype.is_fp4)
    ids = (cuda, rule.id, matrix.hybrid_caution_rules[0].id)
    return Kv4Rules(spellings, rule.prefill_backend, partners, single, ids)


def native_snap(
    matrix: Matrix, backend: str, fields: frozenset[BackendField], arch: Arch, **limits: object
) -> PageSnap:
    """A snap to the native page sizes the page's `arch` table gives `backend`."""
    row = matrix.row(arch, backend)
    assert row is not None, f"{backend} has no {arch.label} row"
    sizes = frozenset(row.cells[ColumnId.NATIVE_PAGE_SIZES].page_sizes)
    return PageSnap(backend, fields, sizes, **limits)  # type: ignore[arg-type]


def spellings_of(matrix: Matrix, backend: str) -> tuple[str, tuple[str, ...]]:
    """The page's KV dtypes of `backend`, as the code's string check spells them."""
    dtypes = matrix.backend(backend).kv_dtypes
    assert dtypes is not None
    return backend, tuple(d.value for d in KvDtype if d in dtypes)
