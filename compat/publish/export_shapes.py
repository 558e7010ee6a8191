"""The shape of `docs/matrix.json`, declared once.

The builders in `compat.publish.export` return these types, so mypy checks what they build; the
generator in `compat.publish.json_schema` turns the same declarations into
`docs/matrix.schema.json`. Value sets come from the vocabulary enums through `OneOf`.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict, TypeVar

from compat.claim.cells import Action, CellKind, PlatformSupport
from compat.claim.columns import ColumnId
from compat.claim.matrix import ArchStatus
from compat.publish.json_schema import (
    EVERY_KEY,
    UNIQUE_ITEMS,
    Def,
    Doc,
    OneOf,
    Title,
    max_items,
    min_items,
    min_length,
    minimum,
    pattern,
)
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform, Severity

K = TypeVar("K")
V = TypeVar("V")


# -- values -------------------------------------------------------------------------------

ArchId = Annotated[str, OneOf.of(Arch)]
PhaseId = Annotated[str, OneOf.of(Phase)]
PlatformId = Annotated[str, OneOf.of(Platform)]
KvDtypeId = Annotated[str, OneOf.of(KvDtype)]
FeatureId = Annotated[str, OneOf.of(ModelFeature)]
ActionId = Annotated[str, OneOf.of(Action)]
SeverityId = Annotated[str, OneOf.of(Severity)]
CellKindId = Annotated[str, OneOf.of(CellKind)]
ColumnIdValue = Annotated[str, OneOf.of(ColumnId)]
ArchStatusId = Annotated[str, OneOf.of(ArchStatus)]
PlatformSupportId = Annotated[str, OneOf.of(PlatformSupport)]

Text = Annotated[str, min_length(1)]
Count = Annotated[int, minimum(0)]
PositiveInt = Annotated[int, minimum(1)]
EvidenceRef = Annotated[int, minimum(0), Def("evidence_ref")]
BackendName = Annotated[str, pattern("^[a-z0-9_]+$"), Def("backend_name")]
BackendNames = Annotated[list[BackendName], UNIQUE_ITEMS]
Phases = Annotated[list[PhaseId], UNIQUE_ITEMS]
Features = Annotated[list[FeatureId], UNIQUE_ITEMS]
Version = Annotated[list[Count], min_items(2), max_items(2)]
"""A (major, minor) version such as CUDA 12.8."""
ReleaseName = Annotated[str, pattern(r"^\d+\.\d+\.\d+$")]
AllKeys = Annotated[dict[K, V], EVERY_KEY]
"""A dict keyed by every value of the `OneOf` key type `K`."""


# -- evidence and the page the matrix describes --------------------------------------------


class EvidenceJson(TypedDict):
    index: Count
    source: Text
    url: str | None
    tested_on: str | None
    models: list[Text]
    note: str | None


class BaselineJson(TypedDict):
    source: Text
    url: str | None
    evidence: Annotated[list[EvidenceRef], min_items(1)]


class VocabularyJson(TypedDict):
    attention_archs: AllKeys[ArchId, Text]
    phases: AllKeys[PhaseId, Text]
    platforms: AllKeys[PlatformId, Text]
    # Every spelling `--kv-cache-dtype` accepts, with the dtype it names.
    kv_cache_dtypes: dict[str, KvDtypeId]
    model_features: AllKeys[FeatureId, Text]
    actions: AllKeys[ActionId, Text]
    arch_statuses: AllKeys[ArchStatusId, Text]


# -- backends, columns, tables ---------------------------------------------------------------


class CapabilityJson(TypedDict):
    min_major: PositiveInt
    max_major: PositiveInt | None
    label: Text


Capability = Annotated[CapabilityJson | None, Def("capability")]


class BackendJson(TypedDict):
    name: BackendName
    phases: Annotated[Phases, min_items(1)]
    phase_rule_id: Text | None
    platforms: dict[PlatformId, PlatformSupportId]
    capability: AllKeys[ArchId, Capability]
    archs: AllKeys[ArchId, ArchStatusId]
    kv_dtypes: list[KvDtypeId] | None
    requires_features: Features
    refuses_features: Features
    disables_cuda_graph: bool
    note: str
    evidence: EvidenceRef | None


class ColumnJson(TypedDict):
    id: ColumnIdValue
    rule_id: Text
    description: Text
    action: ActionId
    severity: SeverityId
    why: Text
    phases: Phases
    headers: AllKeys[ArchId, Text | None]
    evidence: EvidenceRef | None


class CellJson(TypedDict):
    kind: CellKindId
    symbol: Text
    page_sizes: list[PositiveInt]
    fixed: bool
    evidence: EvidenceRef


CellDef = Annotated[CellJson, Def("cell")]


class RowJson(TypedDict):
    backend: BackendName
    display_name: Text
    cells: dict[ColumnIdValue, CellDef]


class TableJson(TypedDict):
    arch: ArchId
    title: Text
    columns: list[ColumnIdValue]
    headers: list[Text]
    evidence: EvidenceRef
    rows: list[RowJson]


# -- rules -----------------------------------------------------------------------------------


class DtypeRequirementJson(TypedDict):
    rule_id: Text
    kv_dtype: KvDtypeId
    platforms: list[PlatformId] | None
    min_cuda: Version | None
    min_torch: Version | None
    torch_dtype: Text | None
    evidence: EvidenceRef | None


class PairingJson(TypedDict):
    id: Text
    kv_dtype: KvDtypeId
    prefill_backend: BackendName
    excluded_decode: BackendNames
    decode_partners: AllKeys[ArchId, BackendNames]
    statement: Text
    evidence: EvidenceRef


class HybridCautionJson(TypedDict):
    id: Text
    kv_dtype: KvDtypeId
    evidence: EvidenceRef


class SpecPagedJson(TypedDict):
    id: Text
    arch: ArchId
    backends: BackendNames
    evidence: EvidenceRef


class DtypeFallbackJson(TypedDict):
    id: Text
    backend: BackendName
    kv_dtype: KvDtypeId
    replacement: BackendName
    why: Text
    evidence: EvidenceRef


class PhaseOnlyJson(TypedDict):
    id: Text
    backend: BackendName
    phases: Phases


class FixedPageSizesJson(TypedDict):
    backend: BackendName
    arch: ArchId
    page_sizes: Annotated[list[PositiveInt], min_items(1)]


class RulesJson(TypedDict):
    dtype_requirements: list[DtypeRequirementJson]
    pairing: list[PairingJson]
    hybrid_caution: list[HybridCautionJson]
    spec_paged: list[SpecPagedJson]
    dtype_fallback: list[DtypeFallbackJson]
    phase_only: list[PhaseOnlyJson]
    fixed_page_sizes: list[FixedPageSizesJson]


# -- releases --------------------------------------------------------------------------------


class GpuGateJson(TypedDict):
    name: Text
    majors: list[int]
    min_cuda: Version


class DefaultBranchJson(TypedDict):
    backend: BackendName
    attention_arch: ArchId | None
    platform: PlatformId | None
    gpu: GpuGateJson | None
    no_spec_or_topk_one: bool
    topk_given_when_speculative: bool
    architectures: list[Text] | None
    kv_heads: list[int] | None


DefaultBranches = Annotated[list[DefaultBranchJson], Def("default_branches")]


class ModelOverrideJson(TypedDict):
    backend: BackendName
    architectures: list[Text]
    sparse_attention_only: bool
    gpu: Text | None


class ChangeJson(TypedDict):
    summary: Text
    evidence: Text


class ReleaseJson(TypedDict):
    backends: list[str]
    kv_cache_dtypes: list[str]
    speculative_algorithms: list[str]
    same_as: str
    defaults: DefaultBranches
    model_overrides: list[ModelOverrideJson]
    changes: list[ChangeJson]


# -- the document ----------------------------------------------------------------------------


class MatrixJson(TypedDict):
    schema_version: Literal[1]
    generated_by: str
    baseline: BaselineJson
    vocabulary: VocabularyJson
    backends: list[BackendJson]
    columns: list[ColumnJson]
    tables: list[TableJson]
    rules: RulesJson
    defaults: DefaultBranches
    releases: dict[ReleaseName, ReleaseJson]
    evidence: list[EvidenceJson]


MatrixDocument = Annotated[
    MatrixJson,
    Title("SGLang attention backend capability matrix"),
    Doc(
        "Written by `compat export` from the capability matrix; evidence is listed once and "
        "referred to by its index in `evidence`."
    ),
]

# The `$defs` of the schema, in the order the committed schema lists them.
DEFINITIONS = (DefaultBranches, EvidenceRef, BackendName, Capability, CellDef)
