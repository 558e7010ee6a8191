"""What a launch asked for, which a suggested fix should keep (`compat.guard.suggest`).

The KV dtype's family (an FP4 cache stays FP4), speculative decoding, and the backend named
for each phase, in that order: a fix is ranked by what it gives up of them first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from compat.claim.backends import Backend
from compat.claim.matrix import Matrix
from compat.guard.report import Report, Resolved
from compat.inputs.config import AttentionConfig
from compat.vocab.terms import KV_DTYPE_SPELLINGS, KvDtype, Phase

Misses = tuple[int, int, int]
"""What a fix gives up of the launch's intent: (KV family, speculation, named backends)."""
KEEPS_ALL: Misses = (0, 0, 0)


class Intent(msgspec.Struct, frozen=True):
    """What the launch asked for, which a fix should keep: in this order, the KV dtype's
    family (an FP4 cache stays FP4), speculative decoding, and the backend named per phase."""

    kv_dtype: KvDtype
    speculative: bool
    named: tuple[tuple[Phase, str], ...]
    """Each phase's named backend (an alias as its successor), where it can run here."""
    ran: Resolved
    """What SGLang runs for the launch as given (a named phase it already swaps stays so)."""

    @classmethod
    def of(cls, report: Report, matrix: Matrix) -> Intent:
        """The intent of `report`'s launch. A named backend that cannot run on this machine
        (fa3 on a CPU) is no intent a fix could keep."""
        config, resolved = report.config, report.resolved
        named = ((phase, named_backend(config, phase)) for phase in Phase)
        return cls(
            KV_DTYPE_SPELLINGS[config.kv_cache_dtype],
            config.speculative_algorithm is not None,
            tuple(
                (phase, name)
                for phase, name in named
                if name in matrix.backend_names and runs_here(matrix.backend(name), resolved)
            ),
            resolved,
        )

    def misses(self, resolved: Resolved) -> Misses:
        """What running as `resolved` gives up (0 each when it keeps everything)."""
        return (
            int(resolved.kv_dtype.family is not self.kv_dtype.family),
            int(self.speculative and not resolved.speculative),
            sum(
                1
                for phase, name in self.named
                if resolved.backend(phase) not in (name, self.ran.backend(phase))
            ),
        )

    def keeps(self, fields: Mapping[str, Any]) -> bool:
        """Whether a move setting `fields`, alone, keeps the KV family and speculation."""
        if "kv_cache_dtype" in fields:
            return KV_DTYPE_SPELLINGS[fields["kv_cache_dtype"]].family is self.kv_dtype.family
        return not ("speculative_algorithm" in fields and fields["speculative_algorithm"] is None)


def named_backend(config: AttentionConfig, phase: Phase) -> str | None:
    """The backend `config` names for `phase` (its phase flag, else `--attention-backend`),
    an alias given as the backend start-up rewrites it to."""
    if phase is Phase.PREFILL:
        name = config.prefill_attention_backend or config.attention_backend
    else:
        name = config.decode_attention_backend or config.attention_backend
    return None if name is None else config.parsed.release.backend_aliases.get(name, name)


def runs_here(backend: Backend, resolved: Resolved) -> bool:
    """Whether `backend` runs on the machine `resolved` describes (no flag can change it)."""
    if resolved.platform not in backend.platforms:
        return False
    needed = backend.capability.get(resolved.arch)
    capability = resolved.compute_capability
    return needed is None or capability is None or capability in needed
