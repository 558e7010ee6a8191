"""SGLang 0.5.8: fa4 runs decode too; fa3 is Hopper's MHA default for every architecture."""

from __future__ import annotations

from compat.engine.rules import SpecAutoCase
from compat.releases.entry import Change, DocChange, Release
from compat.releases.shared import COMPAT, MTP_PARAMS, code, defaults
from compat.vocab.terms import Phase

RELEASE = Release(
    "0.5.8",
    changes=(
        Change("fa4 may serve the decode phase (and `--attention-backend fa4`)",
               code("0.5.8", COMPAT), {"prefill_only": ()}),
        Change("the Hopper MHA default is fa3 for every model architecture",
               code("0.5.8", COMPAT), {"defaults": defaults(None)}),
        Change("automatic speculative parameters: (3, 1, 4) for every other architecture",
               code("0.5.8", "auto_choose_speculative_params"),
               {"spec_auto_params": lambda before: (*before[:-1], SpecAutoCase(MTP_PARAMS))}),
    ),
    doc_changes=(
        DocChange("fa4 serves both phases", code("0.5.8", COMPAT),
                  phases={"fa4": frozenset(Phase)}),
    ),
)  # fmt: skip
