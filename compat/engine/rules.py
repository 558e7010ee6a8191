"""The shape of a release's start-up rules: what `compat.engine.startup` replays, as data.

`compat.releases` fills these for SGLang 0.5.7 and records, for each later release, only
what changed. They are read from each release's code and never from the page's cells:
where the code and the page state the same list (the KV4 backends, the fixed page sizes),
each says it on its own, and the two may differ (0.5.7's code accepts FlashMLA with an FP4
cache that its page marks ❌).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from functools import cached_property

import msgspec

from compat.engine.build import BuildRules
from compat.engine.kernels import KernelRules
from compat.engine.launch import ImageCuda, Launch
from compat.engine.model_rules import (
    DeterministicRules,
    HybridCacheRules,
    LoaderRules,
    ModelRule,
    QuantizationRules,
)
from compat.engine.models.lookup import ModelKnowledge, release_models

# The predicates, re-exported: the release files name them from here.
from compat.engine.predicates import AB as AB
from compat.engine.predicates import AB_OR_DB as AB_OR_DB
from compat.engine.predicates import ANY_FLAG as ANY_FLAG
from compat.engine.predicates import DB as DB
from compat.engine.predicates import EITHER_PHASE as EITHER_PHASE
from compat.engine.predicates import PB as PB
from compat.engine.predicates import RUNS_DECODE as RUNS_DECODE
from compat.engine.predicates import RUNS_PREFILL as RUNS_PREFILL
from compat.engine.predicates import BackendField as BackendField
from compat.engine.predicates import GpuGate as GpuGate
from compat.engine.predicates import Machine as Machine
from compat.engine.preshuffle import TRITON, Preshuffle, RocmImage, package, usable
from compat.engine.shapes import ShapeRules
from compat.engine.sub_backends import SubRefusalAt
from compat.engine.verify import VerifyRules
from compat.vocab.evidence import Evidence
from compat.vocab.terms import Arch, Platform

_MODEL_RULE_MEMO_LIMIT = 10_000


class BranchCondition(enum.Enum):
    """A condition of a default branch that the launch (not the machine) decides."""

    NO_SPEC_OR_TOPK_ONE = "no speculation, or topk 1 with page size 1"
    TOPK_WHEN_SPECULATIVE = "--speculative-eagle-topk given with speculation"
    KV_HEADS = "KV heads per rank"
    NO_SINKS = "no attention sinks"


class DefaultMove(msgspec.Struct, frozen=True):
    """The default decision passed over its usual branch for this machine and model: the
    branch's backend, the condition the launch did not meet, and the values it read."""

    usual: str
    condition: BranchCondition
    topk: int | None
    page_size: int | None
    kv_heads: int | None
    needs_kv_heads: tuple[int, ...] = ()


class DefaultBranch(msgspec.Struct, frozen=True):
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
    unless_sinks: bool = False
    """Not for a model with attention sinks (`ModelConfig.has_attention_sinks`)."""


class PageSnap(msgspec.Struct, frozen=True):
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


class BackendGate(msgspec.Struct, frozen=True):
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


class DtypeFallback(msgspec.Struct, frozen=True):
    """`--attention-backend` (the field) is replaced when it meets a KV dtype it cannot read."""

    rule: str
    """The id of the rule; the page states the same fact under this id."""
    backend: str
    kv_dtype: str
    replacement: str


class Kv4Rules(msgspec.Struct, frozen=True):
    """The FP4 cache's start-up check, with its backend lists per architecture."""

    spellings: frozenset[str]
    """The `--kv-cache-dtype` values the check runs for."""
    pair_prefill: str
    """The prefill backend that pairs with a decode backend of `pair_partners`."""
    pair_partners: Mapping[Arch, tuple[str, ...]]
    single: Mapping[Arch, tuple[str, ...]]
    """The backends allowed for both phases, per architecture."""
    rule_ids: tuple[str, str, str, str]
    """The ids of its rules, the page's where it states the same: (CUDA only, the pairing,
    a hybrid pair, one backend)."""
    native_refuses_disaggregation: bool = False
    """SM100's native NVFP4 on trtllm_mha refuses `--disaggregation-mode` (0.5.21+)."""
    native_draft_backend: str | None = None
    """SM100's native NVFP4 on trtllm_mha runs a draft model on this backend only: it sets an
    unset `--speculative-draft-attention-backend` and refuses another (0.5.21+)."""
    native_spec_algorithms: frozenset[str] | None = None
    """SM100's native NVFP4 on trtllm_mha runs only these `--speculative-algorithm` values,
    as given (None: every one; 0.5.21+)."""
    native_ngram_breadth: int | None = None
    """...and NGRAM only with this BFS breadth (None: any; 0.5.21+)."""

    @property
    def single_rule(self) -> str:
        return self.rule_ids[3]


class SpecParams(msgspec.Struct, frozen=True):
    steps: int
    topk: int
    draft_tokens: int


class SpecAutoCase(msgspec.Struct, frozen=True):
    params: SpecParams
    algorithm: str | None = None
    architectures: frozenset[str] | None = None


class ReleaseRules(msgspec.Struct, frozen=True, dict=True):
    """Everything one release's start-up code decides about attention, with its sources."""

    release: str
    backend_choices: tuple[str, ...]
    """What `--attention-backend` and the phase flags accept (argparse choices)."""
    kv_choices: tuple[str, ...]
    algorithm_choices: tuple[str, ...]
    algorithm_any_case: bool
    """Whether `--speculative-algorithm` takes its values in any case: from 0.5.12 start-up
    upper-cases the free-text flag; up to 0.5.11 argparse takes the choices as spelled."""
    backend_aliases: Mapping[str, str]
    """Deprecated names that start-up rewrites to their successor."""
    defaults: tuple[DefaultBranch, ...]
    model_rules: tuple[ModelRule, ...]
    """The model-specific branches, in SGLang's order (the first that applies runs)."""
    deterministic: DeterministicRules
    quantization: QuantizationRules
    loader: LoaderRules
    hybrid_cache: HybridCacheRules
    assumed_architectures: Mapping[Arch, str]
    """The model assumed when none is named: the most common of each architecture."""
    page_snaps: tuple[PageSnap, ...]
    gpu_gates: tuple[BackendGate, ...]
    kv_spellings: tuple[tuple[str, tuple[str, ...]], ...]
    """Backends that take only these `--kv-cache-dtype` strings (as spelled)."""
    kv_gates: Mapping[str, GpuGate]
    """KV dtypes that need a GPU."""
    dtype_fallback: DtypeFallback
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
    topk_one_only_rule: str
    topk_paged_eagle: tuple[str, ...]
    topk_paged_ngram: tuple[str, ...]
    topk_paged_rule_id: str
    dual_chunk_backend: str | None
    backend_build: Mapping[tuple[str, str], str]
    """(documented rule id, backend) -> what fails when SGLang builds that backend."""
    image_cuda: ImageCuda
    """The CUDA of the release's official image, with where that was read: a launch that
    does not give `--cuda-version` is judged with it."""
    evidence: Mapping[str, Evidence]
    """Rule -> where in the release's code it was read."""
    replacements: Mapping[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    """Values this release no longer accepts -> what to use instead."""
    alias_kv_dtypes: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Deprecated backend names whose rewrite also sets `--kv-cache-dtype`."""
    sink_architectures: frozenset[str] = frozenset()
    """The architectures `ModelConfig.has_attention_sinks` names."""
    decode_dp_needs_round_robin: bool = False
    """A decode server with `--dp-size` above 1 needs `--prefill-round-robin-balance`."""
    preshuffle: Preshuffle | None = None
    """`aiter_can_use_preshuffle_paged_mqa()`, where DSA's page size on ROCm reads it
    (0.5.12+): the variables it reads, and how."""
    rocm_image: RocmImage | None = None
    """What the release's official ROCm image sets among the inputs the replay reads."""
    resolve_once: bool = False
    """A ServerArgs holds the raw flags and `resolve_once()` resolves them (up to then,
    construction resolves them in `__post_init__`)."""
    build: BuildRules = BuildRules()
    """What the attention registry checks when `ModelRunner` builds the backends, after
    start-up (`compat.releases.build`)."""
    sub_refusals: tuple[SubRefusalAt, ...] = ()
    """The start-up checks of the sub-backend flags (`compat.releases.sub_startup`)."""
    kernels: KernelRules = KernelRules()
    """Where the kernels the release pins fail the first forward pass on a GPU
    (`compat.releases.kernels`)."""
    verify: VerifyRules = VerifyRules()
    """Where speculative decoding's first verify pass fails in the target's backend
    (`compat.releases.verify`)."""
    shapes: ShapeRules = ShapeRules()
    """Where the first prefill fails compiling a kernel over the model's shapes
    (`compat.releases.shapes`)."""

    def preshuffle_usable(self, launch: Launch) -> bool | None:
        """Whether aiter's preshuffle paged-MQA path is usable for `launch` on ROCm (False
        where the release has no such check; None: it turns on a Triton nobody gave)."""
        if self.preshuffle is None:
            return False
        image = self.rocm_image
        image_env = dict(image.environment) if image is not None else {}
        triton = package(launch, image, TRITON)
        return usable(self.preshuffle, dict(launch.environment), image_env, triton)

    def assumed_architecture(self, arch: Arch) -> str:
        return self.assumed_architectures[arch]

    def model_rule(self, architecture: str, sparse: bool, device: str) -> ModelRule | None:
        """The first model-specific branch that takes `architecture` on `device`: every
        launch asks, so each combination is looked up once."""
        key = (architecture, sparse, device)
        memo = self._model_rule_memo
        if key in memo:
            return memo[key]
        if len(memo) >= _MODEL_RULE_MEMO_LIMIT:
            memo.clear()  # a long-running process shown ever new model names
        found = memo[key] = next((rule for rule in self.model_rules if rule.applies(*key)), None)
        return found

    @cached_property
    def _model_rule_memo(self) -> dict[tuple[str, bool, str], ModelRule | None]:
        return {}

    @cached_property
    def models(self) -> ModelKnowledge:
        """What the release's own code knows about models (generated from its wheel)."""
        return release_models(self.release)

    @cached_property
    def sub_choices(self) -> Mapping[str, tuple[str, ...]]:
        """The sub-backend flags the release's parser declares (by ServerArgs field), each
        with its choices (generated from its wheel)."""
        # Imported here: only a launch that sets a sub-backend flag reads them.
        from compat.engine.parser.sub_choices import sub_choices

        return sub_choices(self.release)

    @property
    def mamba_strategy_choices(self) -> tuple[str, ...]:
        return self.hybrid_cache.strategies

    @cached_property
    def mamba_strategy_set(self) -> frozenset[str]:
        return frozenset(self.hybrid_cache.strategies)

    @property
    def mamba_ssm_dtype_choices(self) -> tuple[str, ...]:
        return self.hybrid_cache.ssm_dtypes

    @cached_property
    def mamba_ssm_dtype_set(self) -> frozenset[str]:
        return frozenset(self.hybrid_cache.ssm_dtypes)

    @property
    def quantization_choices(self) -> tuple[str, ...]:
        return self.models.quantization

    @cached_property
    def quantization_set(self) -> frozenset[str]:
        return frozenset(self.models.quantization)

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
    def backend_build_rules(self) -> frozenset[str]:
        """The documented rules of `backend_build`: the guard sets aside a finding of any
        other rule with one lookup."""
        return frozenset(rule for rule, _ in self.backend_build)

    @cached_property
    def gated_backends(self) -> frozenset[str]:
        """The backends of `gpu_gates`: a launch naming none of them skips the gates."""
        return frozenset(gate.backend for gate in self.gpu_gates)
