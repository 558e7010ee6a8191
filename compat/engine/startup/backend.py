"""SGLang's backend check, replayed: `ServerArgs._handle_attention_backend_compatibility`.

The check first honours a prefill/decode pair that names one backend, then makes the
default decision when `--attention-backend` is unset, then runs its per-backend checks and
rewrites. The checks run in `_CHECKS`'s order, which is the order the replay has always
used for the release's rules: each one reads what the ones before it wrote.
"""

from __future__ import annotations

from collections.abc import Callable

from compat.engine.events import (
    NOTE,
    WARN,
    DecodeOnly,
    DtypeFallenBack,
    DualChunkNeeded,
    GpuGateFailed,
    KvSpellings,
    MlaPrefillRefused,
    NoSpeculation,
    PageSnapped,
    PrefillOnly,
)
from compat.engine.launch import Launch
from compat.engine.model_events import AmxFallback
from compat.engine.rules import BranchCondition, DefaultBranch, DefaultMove, ReleaseRules
from compat.engine.startup.state import (
    AB_OR_DB,
    ServerArgsFields,
    StartupLog,
    gate_open,
    gpu_gate_holds,
)
from compat.vocab.terms import Arch, ModelFeature, Platform

_Check = Callable[[Launch, ReleaseRules, ServerArgsFields, StartupLog], None]


def handle_attention_backend_compatibility(
    parsed: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields, log: StartupLog
) -> str | None:
    """The split override, the default decision, then every check; returns the default."""
    if f.prefill is not None and f.prefill == f.decode:
        f.attention = f.prefill
    default = None
    if f.attention is None:
        default = f.attention = default_backend(parsed, rules, model, f)
        log.default_move = default_move(parsed, rules, model, f)
    for check in _CHECKS:
        check(parsed, rules, f, log)
    return default


def default_backend(parsed: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields) -> str:
    """SGLang's default decision: the first branch whose every condition holds."""
    for branch in rules.defaults:
        if _serves(branch, parsed, model) and _unmet(branch, parsed, rules, model, f) is None:
            return branch.backend
    raise AssertionError("the default decision ends with an unconditional branch")


def default_move(
    parsed: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields
) -> DefaultMove | None:
    """The usual default this launch moved SGLang's decision away from: the first branch
    for this machine and model that a launch condition turned down (None: the decision took
    its usual branch). Read with the fields as the decision read them."""
    for branch in rules.defaults:
        if not _serves(branch, parsed, model):
            continue
        unmet = _unmet(branch, parsed, rules, model, f)
        if unmet is None:
            return None
        return DefaultMove(
            branch.backend,
            unmet,
            f.topk,
            f.page_size,
            parsed.kv_heads_per_rank,
            tuple(sorted(branch.kv_heads or ())),
        )
    return None


def _serves(branch: DefaultBranch, parsed: Launch, model: str) -> bool:
    """Whether the branch is for this machine and model at all."""
    return (
        (branch.arch is None or branch.arch is parsed.arch)
        and (branch.platform is None or parsed.platform is branch.platform)
        and gate_open(branch.gate, parsed)
        and (branch.architectures is None or model in branch.architectures)
    )


def _unmet(
    branch: DefaultBranch, parsed: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields
) -> BranchCondition | None:
    """The first of the branch's launch conditions that does not hold, if any."""
    if branch.needs_no_spec_or_topk_one and not (
        f.topk is None or (f.topk == 1 and f.page_size in (None, 1))
    ):
        return BranchCondition.NO_SPEC_OR_TOPK_ONE
    if branch.needs_topk_when_speculative and f.algorithm is not None and f.topk is None:
        return BranchCondition.TOPK_WHEN_SPECULATIVE
    if branch.kv_heads is not None and (parsed.kv_heads_per_rank or 0) not in branch.kv_heads:
        return BranchCondition.KV_HEADS
    if branch.unless_sinks and model in rules.sink_architectures:
        return BranchCondition.NO_SINKS
    return None


def _spec_refusing(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """Backends that assert no speculative decoding (flex_attention)."""
    for name in rules.spec_refusing:
        if f.attention == name and f.algorithm is not None:
            log.add(
                NoSpeculation(
                    flags=("--attention-backend", "--speculative-algorithm"),
                    value=name,
                    backend=name,
                    name=name,
                )
            )


def _gpu_gates(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """Backends that raise off their GPU (`is_sm100_supported`, `is_blackwell_supported`)."""
    if not f.names_any(rules.gated_backends):
        return  # exact: a gate's backend is one a flag names (or no phase runs it)
    for gate in rules.gpu_gates:
        if f.any_is(gate.fields, gate.backend) and not gpu_gate_holds(gate.gate, parsed):
            log.add(
                GpuGateFailed(
                    flags=(*gate.flags, "--compute-capability"),
                    value=parsed.capability or parsed.platform.value,
                    backend=gate.backend,
                    gate=gate.gate,
                )
            )


def _decode_only(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """Decode-only backends: refused for prefill, else they bring their prefill backend."""
    for name, prefill in rules.decode_only.items():
        if f.prefill == name:
            log.add(
                DecodeOnly(
                    rule=f"{name.replace('_', '-')}-decode-only",
                    flags=("--prefill-attention-backend",),
                    value=name,
                    backend=name,
                    name=name,
                )
            )
        elif f.prefill is None and f.any_is(AB_OR_DB, name):
            f.prefill = prefill


def _mla_prefill(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """Backends that cannot run an MLA model's prefill phase."""
    if parsed.arch is not Arch.MLA:
        return
    for name in rules.mla_prefill_refused:
        if f.phases[0] == name:
            log.add(
                MlaPrefillRefused(
                    flags=("--prefill-attention-backend",), value=name, backend=name, name=name
                )
            )


def _page_snaps(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """Page sizes a backend rewrites; a later snap overrides an earlier one's size."""
    if not f.names_any(rules.snapping_backends):
        return  # exact: a snap's backend is one a flag names (or no phase runs it)
    set_by = "--page-size" if f.page_size is not None else None
    for snap in rules.page_snaps:
        if not f.any_is(snap.fields, snap.backend):
            continue
        if snap.arch is not None and parsed.arch is not snap.arch:
            continue
        if not gate_open(snap.gate, parsed):
            continue
        if snap.max_topk is not None and (f.topk or 0) > snap.max_topk:
            continue
        if f.page_size not in snap.sizes:
            given = "unset" if set_by is None else f"{f.page_size} from {set_by}"
            log.add(
                PageSnapped(
                    rule="page-size-default" if set_by is None else "page-size-snapped",
                    severity=WARN if set_by == "--page-size" else NOTE,
                    flags=("--page-size",),
                    value=snap.snap_to,
                    allowed=tuple(sorted(snap.sizes)),
                    backend=snap.backend,
                    size=snap.snap_to,
                    was=given,
                )
            )
            f.page_size, set_by = snap.snap_to, snap.backend


def _kv_spellings(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """Backends whose string check takes only some `--kv-cache-dtype` spellings."""
    for name, spelled in rules.kv_spellings:
        if f.any_is(AB_OR_DB, name) and f.kv_dtype not in spelled:
            log.add(
                KvSpellings(
                    flags=("--kv-cache-dtype",),
                    value=f.kv_dtype,
                    allowed=spelled,
                    backend=name,
                    spelled=spelled,
                )
            )


def _dtype_fallback(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """A backend that cannot read the KV dtype, replaced; in `--attention-backend` only."""
    fallback = rules.dtype_fallback
    if f.attention == fallback.backend and f.kv_dtype == fallback.kv_dtype:
        log.add(
            DtypeFallenBack(
                rule=fallback.rule,
                flags=("--attention-backend", "--kv-cache-dtype"),
                value=fallback.backend,
                allowed=(fallback.replacement,),
                backend=fallback.backend,
                replacement=fallback.replacement,
            )
        )
        f.attention = fallback.replacement


def _prefill_only(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """Prefill-only backends (fa4) named for the decode phase."""
    for name in rules.prefill_only:
        if f.attention == name or f.decode == name:
            log.add(
                PrefillOnly(
                    rule=f"{name.replace('_', '-')}-prefill-only",
                    flags=("--attention-backend", "--decode-attention-backend"),
                    value=name,
                    backend=name,
                    name=name,
                )
            )


def _dual_chunk(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """A model with a dual-chunk attention config needs the dual-chunk backend."""
    dual_chunk = rules.dual_chunk_backend
    if dual_chunk and ModelFeature.DUAL_CHUNK in parsed.features and f.attention != dual_chunk:
        log.add(
            DualChunkNeeded(
                flags=("--attention-backend",),
                value=f.attention,
                allowed=(dual_chunk,),
                needed=dual_chunk,
            )
        )


def _amx_fallback(
    parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """intel_amx on a CPU without AMX runs torch_native (a GPU host's CPU: the product's CPU
    platform is a CPU with AMX)."""
    if (
        f.attention == "intel_amx"
        and parsed.on_device == "cpu"
        and parsed.platform is not Platform.CPU
    ):
        log.add(
            AmxFallback(
                flags=("--device", "--attention-backend"),
                value="intel_amx",
                allowed=("torch_native",),
                backend="intel_amx",
            )
        )
        f.attention = "torch_native"


# The order the checks run in; each reads the fields the ones before it wrote.
_CHECKS: tuple[_Check, ...] = (
    _spec_refusing,
    _gpu_gates,
    _decode_only,
    _mla_prefill,
    _page_snaps,
    _kv_spellings,
    _dtype_fallback,
    _prefill_only,
    _dual_chunk,
    _amx_fallback,
)
