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
    release: ReleaseName
    source: Text
    url: str | None


class VocabularyJson(TypedDict):
    attention_archs: AllKeys[ArchId, Text]
    phases: AllKeys[PhaseId, Text]
    platforms: AllKeys[PlatformId, Text]
    # Every spelling `--kv-cache-dtype` accepts in some release, with the dtype it names.
    kv_cache_dtypes: dict[str, KvDtypeId]
    model_features: AllKeys[FeatureId, Text]
    actions: AllKeys[ActionId, Text]
    arch_statuses: AllKeys[ArchStatusId, Text]
    cell_kinds: AllKeys[CellKindId, Text]


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
    kv_cache_dtypes: list[KvDtypeId]
    action: ActionId
    severity: SeverityId
    why: Text
    phases: Phases
    headers: AllKeys[ArchId, Text | None]
    evidence: EvidenceRef | None


class _CellKeys(TypedDict):
    kind: CellKindId
    symbol: Text
    evidence: EvidenceRef


class CellJson(_CellKeys, total=False):
    # Only for a cell of page sizes (native, or the sizes a conditional cell needs).
    page_sizes: Annotated[list[PositiveInt], min_items(1)]
    fixed: bool


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

Fact = Annotated[str | int | bool | list[str] | list[int] | None, Def("fact")]
"""One field of a rule: a name or number, or a list of them."""


class RuleJson(TypedDict):
    # The rule's type, in snake case (`pairing`, `dtype_requirement`, ...); its fields are
    # `facts`, so a new kind of rule needs no new shape.
    kind: Annotated[str, pattern("^[a-z_]+$")]
    id: Text
    statement: Text
    facts: dict[str, Fact]
    evidence: EvidenceRef | None


class PhaseOnlyJson(TypedDict):
    id: Text
    backend: BackendName
    phases: Phases


class FixedPageSizesJson(TypedDict):
    backend: BackendName
    arch: ArchId
    page_sizes: Annotated[list[PositiveInt], min_items(1)]


class ViewsJson(TypedDict):
    # Lists the matrix computes from its cells and rules (never written down twice).
    decode_partners: dict[str, AllKeys[ArchId, BackendNames]]
    phase_only: list[PhaseOnlyJson]
    fixed_page_sizes: list[FixedPageSizesJson]


class DocumentedJson(TypedDict):
    # What one release's page documents: its tables, their backends, columns and rules.
    page: EvidenceRef
    backends: list[BackendJson]
    aliases: dict[BackendName, BackendName]
    columns: list[ColumnJson]
    tables: list[TableJson]
    rules: list[RuleJson]
    views: ViewsJson


class OneMatrixJson(TypedDict):
    # One documented matrix with the evidence it refers to (`compat matrix --json`).
    documented: DocumentedJson
    evidence: list[EvidenceJson]


class PageChangeJson(TypedDict):
    summary: Text
    evidence: EvidenceRef
    tagged_in: ReleaseName | None
    lines: list[Text]


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


class StartupJson(TypedDict):
    backends: list[str]
    kv_cache_dtypes: list[str]
    speculative_algorithms: list[str]
    same_as: str
    defaults: DefaultBranches
    model_overrides: list[ModelOverrideJson]
    changes: list[ChangeJson]


class ReleaseJson(StartupJson):
    documented: DocumentedJson
    page_changes: list[PageChangeJson]


# -- the document ----------------------------------------------------------------------------


GENERATOR = "compat export"
"""The command that writes the export and its schema: named in both, it marks them as its own."""


class MatrixJson(TypedDict):
    schema_version: Literal[2]
    generated_by: str
    baseline: BaselineJson
    newest: ReleaseName
    vocabulary: VocabularyJson
    releases: dict[ReleaseName, ReleaseJson]
    evidence: list[EvidenceJson]


MatrixDocument = Annotated[
    MatrixJson,
    Title("SGLang attention backend capability matrix"),
    Doc(
        f"Written by `{GENERATOR}` from the capability matrix of every SGLang release "
        "modelled: what its start-up code does, and what its page documents, every cell with "
        "its evidence. Evidence is listed once and referred to by its index in `evidence`."
    ),
]

# The `$defs` of the schema, in the order the committed schema lists them.
DEFINITIONS = (DefaultBranches, EvidenceRef, BackendName, Capability, CellDef, Fact)
