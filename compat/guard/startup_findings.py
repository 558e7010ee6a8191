"""A start-up event as the finding the report carries: enforced at start-up, its message
opened by the release and what SGLang does ("refuses to start", "warns"), and a list of
backends worded for the model and machine asked about (`said_here`); every other event in
the words of `compat.guard.startup_words`."""

from __future__ import annotations

from functools import singledispatch

from compat.engine import events as e
from compat.engine import model_events as m
from compat.guard.fit import Fit
from compat.guard.report import STARTUP_PREFIX, Enforcement, Finding
from compat.guard.startup_words import said
from compat.vocab.terms import Severity

# What SGLang's message says after its release, by severity.
_VERBS = {Severity.ERROR: " refuses to start: ", Severity.WARNING: " warns: ", Severity.INFO: ": "}


# The events whose `allowed` is a list of backends that `said_here` words for the model.
_LISTS = (
    e.Nvfp4Prefill,
    e.Kv4Partner,
    e.Kv4Single,
    e.TopkPaged,
    m.ModelBackendList,
    m.DeterministicBackends,
)


def finding(
    event: e.StartupEvent, release: str, reason: str | None = None, fit: Fit | None = None
) -> Finding:
    """The finding for one start-up event of `release`.

    `reason` opens the message where the page words the fact behind the event (a dtype
    fallback's why). `fit`: the model and machine a list of backends is worded for.
    """
    text = said(event) if fit is None else said_here(event, fit)
    allowed = tuple(map(str, event.allowed))
    if fit is not None and isinstance(event, _LISTS):
        # A list of backends points only at those that can run here.
        allowed = fit.fitting(allowed)
    if reason is not None:
        text = f"{reason} {text}"
    return Finding(
        f"{STARTUP_PREFIX}{event.rule}",
        event.severity,
        f"SGLang {release}{_VERBS[event.severity]}{text}",
        event.flags,
        value=None if event.value is None else str(event.value),
        allowed=allowed,
        backend=event.backend,
        enforced=Enforcement.STARTUP,
    )


@singledispatch
def said_here(event: e.StartupEvent, fit: Fit) -> str:
    """`said(event)`, worded for the model and machine of `fit` where its words list
    backends."""
    return said(event)


@said_here.register
def _(event: e.Nvfp4Prefill, fit: Fit) -> str:
    return (
        f"--kv-cache-dtype nvfp4 runs prefill of {fit.arch.label} models only on "
        f"{fit.named(event.backends, ' or ')}"
    )


@said_here.register
def _(event: e.Kv4Partner, fit: Fit) -> str:
    return (
        f"with --kv-cache-dtype {event.kv_dtype} and prefill on {event.prefill}, decode must "
        f"run on {fit.named(event.partners)}"
    )


@said_here.register
def _(event: e.Kv4Single, fit: Fit) -> str:
    return (
        f"--kv-cache-dtype {event.kv_dtype} runs only on {fit.named(event.backends)} for "
        f"{event.arch.label} models"
    )


@said_here.register
def _(event: e.TopkPaged, fit: Fit) -> str:
    return (
        f"speculative topk {event.topk} with page size {event.page_size} runs only on "
        f"{fit.named(event.backends, ' or ')} as --attention-backend"
    )


@said_here.register
def _(event: m.ModelBackendList, fit: Fit) -> str:
    return (
        f"it allows only {fit.named(event.backends)} for {event.model}, in {event.where}; "
        f"got {event.value} ({event.source})"
    )


@said_here.register
def _(event: m.DeterministicBackends, fit: Fit) -> str:
    whose = f" with {event.model}" if event.model else ""
    where = f" ({event.source})" if event.source else ""
    return (
        f"deterministic inference{whose} runs only on {fit.named(event.backends)}, "
        f"not {event.value}{where}"
    )
