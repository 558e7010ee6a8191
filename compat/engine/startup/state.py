"""What the start-up replay carries from step to step: the fields, the log, the GPU predicates.

SGLang's start-up steps (`ServerArgs.__post_init__`) talk to each other only through the
`ServerArgs` fields each one reads and writes; `ServerArgsFields` is those fields, and
`StartupLog` collects what SGLang did on the way (`compat.engine.events`).
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.engine.events import StartupEvent
from compat.engine.launch import Launch
from compat.engine.predicates import gpu_gate_holds
from compat.engine.rules import BackendField, DefaultMove, GpuGate

_AB, _PB, _DB = BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE
AB_OR_DB = frozenset({_AB, _DB})


@dataclass(slots=True)
class ServerArgsFields:
    """The ServerArgs fields the start-up code reads and writes, as it goes.

    Mutable on purpose: every step rewrites the fields in place, as SGLang's do, and the
    replay hands the object over to `Startup` only when the last step is done.
    """

    attention: str | None
    prefill: str | None
    decode: str | None
    page_size: int | None
    kv_dtype: str
    algorithm: str | None
    topk: int | None
    steps: int | None
    draft_tokens: int | None
    dp_attention: bool
    radix_cache: bool = True
    """Off when SGLang turns the radix cache off (`disable_radix_cache`)."""
    mamba_no_buffer: bool = False
    """A hybrid model's Mamba cache runs the no_buffer strategy with the radix cache on, as
    the strategy SGLang leaves unasked (up to 0.5.13, before it picks one)."""
    draft_backend: str | None = None
    """`--speculative-draft-attention-backend` (None: the draft inherits the target's)."""

    @classmethod
    def of(cls, parsed: Launch) -> ServerArgsFields:
        """The fields as the launch flags set them, before any start-up step ran."""
        return cls(
            parsed.backend,
            parsed.prefill,
            parsed.decode,
            parsed.page_size,
            parsed.kv_spelling,
            parsed.algorithm,
            parsed.topk,
            parsed.steps,
            parsed.draft_tokens,
            parsed.dp_attention,
            draft_backend=parsed.draft_backend,
        )

    def get(self, field: BackendField) -> str | None:
        if field is _AB:
            return self.attention
        if field is _PB:
            return self.prefill
        if field is _DB:
            return self.decode
        return self.phases[0 if field is BackendField.RUNS_PREFILL else 1]

    def set(self, field: BackendField, value: str | None) -> None:
        """Write one of the three backend flags (a resolved phase is not a field)."""
        if field is _AB:
            self.attention = value
        elif field is _PB:
            self.prefill = value
        else:
            self.decode = value

    def any_is(self, fields: frozenset[BackendField], backend: str) -> bool:
        if backend != self.attention and backend != self.prefill and backend != self.decode:
            return False  # the common case, without a generator
        return any(self.get(field) == backend for field in fields)

    def names_any(self, backends: frozenset[str]) -> bool:
        """Whether a backend flag names one of `backends` (a phase runs only what one names)."""
        return self.attention in backends or self.prefill in backends or self.decode in backends

    @property
    def phases(self) -> tuple[str | None, str | None]:
        """The backends the two phases run: a phase's own flag, else --attention-backend."""
        return (self.prefill or self.attention, self.decode or self.attention)

    @property
    def backend_unset(self) -> bool:
        """No backend flag is set: the platform or model hook may choose one."""
        return self.attention is None and self.prefill is None and self.decode is None


class StartupLog:
    """What SGLang said on the way: its refusals, warnings and adjustments, as events."""

    __slots__ = ("default_move", "events")

    def __init__(self) -> None:
        self.events: list[StartupEvent] = []
        self.default_move: DefaultMove | None = None
        """The usual default branch the launch turned the default decision away from."""

    def add(self, event: StartupEvent) -> None:
        self.events.append(event)


__all__ = ["AB_OR_DB", "ServerArgsFields", "StartupLog", "gate_open", "gpu_gate_holds"]


def gate_open(gate: GpuGate | None, parsed: Launch) -> bool:
    """A rule's optional GPU condition: no gate, or its predicate holds."""
    return gate is None or gpu_gate_holds(gate, parsed)
