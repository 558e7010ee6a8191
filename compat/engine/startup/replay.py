"""What SGLang's own start-up code does with a launch, replayed from the release's rules.

SGLang resolves its attention flags in `ServerArgs.__post_init__` before any weight loads:
platform hooks, model-specific overrides, the default backend, page-size snaps, dtype
fallbacks, the KV4 check and the speculative-decoding handler, in that order, each reading
the fields the previous one wrote. This module replays that order over a release's rules
(`compat.releases`), field for field, so that the guard can say both what SGLang will run
and whether it refuses to start. The conformance suite proves the replay against the
release's own code.

The steps live by job: `compat.engine.startup.prelude` (names, platforms, models, NVFP4),
`compat.engine.startup.backend` (the backend check and the default decision), `compat.engine.startup.kv`
(the KV dtype checks) and `compat.engine.startup.spec` (speculative decoding); what they share is
in `compat.engine.startup.state`.
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.inputs.config import Parsed
from compat.engine.rules import ReleaseRules
from compat.guard.report import Finding
from compat.engine.startup.backend import default_backend, handle_attention_backend_compatibility
from compat.engine.startup.kv import handle_kv4_compatibility, handle_kv_dtype_gpu
from compat.engine.startup.prelude import (
    handle_deprecated_args,
    handle_model_specific_adjustments,
    handle_nvfp4_prefill_backends,
    handle_platform_backends,
)
from compat.engine.startup.spec import auto_spec_params, handle_speculative_decoding
from compat.engine.startup.state import ServerArgsFields, StartupLog, gpu_gate_holds
from compat.vocab.terms import Severity


@dataclass(frozen=True, slots=True)
class Startup:
    """SGLang's start-up outcome: the values it runs with and what it said on the way."""

    fields: ServerArgsFields
    """The ServerArgs fields as the last step left them (no step runs after)."""
    findings: tuple[Finding, ...]
    default_backend: str | None
    """The backend SGLang's default decision chose, when it had to choose one."""

    @property
    def refused(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def page_size(self) -> int:
        """The page size SGLang runs (`_handle_page_size` has filled an unset one)."""
        assert self.fields.page_size is not None
        return self.fields.page_size


def replay(parsed: Parsed, rules: ReleaseRules) -> Startup:
    """Replay the release's start-up resolution over `parsed`; never raises for a refusal.

    SGLang stops at its first refusal; the replay goes on, so that every reason is reported
    and the documented checks still see the values SGLang was about to run with.
    """
    log = StartupLog(rules)
    model = parsed.model_architecture or rules.assumed_architecture(parsed.arch)
    f = ServerArgsFields.of(parsed)
    handle_deprecated_args(rules, f, log)
    chosen = handle_platform_backends(parsed, f) or handle_model_specific_adjustments(
        parsed, rules, model, f, log
    )
    handle_nvfp4_prefill_backends(parsed, rules, f, log)
    default = handle_attention_backend_compatibility(parsed, rules, model, f, log) or chosen
    handle_kv_dtype_gpu(parsed, rules, f, log)
    handle_kv4_compatibility(parsed, rules, f, log)
    if f.page_size is None:
        f.page_size = 1  # `_handle_page_size`
    handle_speculative_decoding(parsed, rules, model, f, log)
    return Startup(f, tuple(log.findings), default)


__all__ = ["Startup", "auto_spec_params", "default_backend", "gpu_gate_holds", "replay"]
