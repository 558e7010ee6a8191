"""A backend: what it needs and serves, independent of any table cell."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from compat.claim.cells import PlatformSupport
from compat.vocab.evidence import Evidence
from compat.vocab.hardware import CapabilityRange
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform


class Backend(msgspec.Struct, frozen=True):
    """What a backend needs, independent of any table cell."""

    name: str
    phases: frozenset[Phase]
    platforms: Mapping[Platform, PlatformSupport]
    """Each platform the backend runs on, and whether that is tested."""
    capability: Mapping[Arch, CapabilityRange] = msgspec.field(default_factory=dict)
    """CUDA compute capabilities it needs, per architecture; absent means any."""
    archs: frozenset[Arch] = frozenset(Arch)
    """The model architectures it serves; a table without its row for one of these leaves
    it undocumented there, for any other it is known not to work."""
    kv_dtypes: frozenset[KvDtype] | None = None
    """The only KV dtypes the backend accepts, where it limits them."""
    requires_features: frozenset[ModelFeature] = frozenset()
    refuses_features: frozenset[ModelFeature] = frozenset()
    disables_cuda_graph: bool = False
    note: str = ""
    evidence: Evidence | None = None

    def runs_on(self, platform: Platform) -> bool:
        return platform in self.platforms


def phase_rule_id(backend: Backend) -> str:
    """`fa4-prefill-only`: the id of the rule a phase-limited backend carries."""
    only = "-".join(phase.value for phase in Phase if phase in backend.phases)
    return f"{backend.name.replace('_', '-')}-{only}-only"
