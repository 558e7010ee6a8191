"""What SGLang's own start-up code does with a launch, replayed from the release's rules.

SGLang resolves its attention flags in `ServerArgs.__post_init__` before any weight loads:
platform hooks, model-specific overrides, the default backend, page-size snaps, dtype
fallbacks, the KV4 check and the speculative-decoding handler, in that order, each reading
the fields the previous one wrote. This module replays that order over a release's rules
(`compat.releases`), field for field, so that the guard can say both what SGLang will run
and whether it refuses to start. The conformance suite proves the replay against the
release's own code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compat.config import Parsed
from compat.release_schema import BackendField, GpuGate, ReleaseRules, SpecParams
from compat.report import Enforcement, Finding
from compat.schema import ColumnId
from compat.vocab import Arch, ModelFeature, Platform, Severity

_AB, _PB, _DB = BackendField.ATTENTION, BackendField.PREFILL, BackendField.DECODE
_AB_OR_DB = frozenset({_AB, _DB})


@dataclass(slots=True)
class _Fields:
    """The ServerArgs fields the start-up code reads and writes, as it goes."""

    attention: str | None
    prefill: str | None
    decode: str | None
    page_size: int | None
    kv_dtype: str
    algorithm: str | None
    topk: int | None
    steps: int | None
    draft_tokens: int | None

    def get(self, field: BackendField) -> str | None:
        if field is _AB:
            return self.attention
        if field is _PB:
            return self.prefill
        if field is _DB:
            return self.decode
        return self.phases[0 if field is BackendField.RUNS_PREFILL else 1]

    def any_is(self, fields: frozenset[BackendField], backend: str) -> bool:
        if backend != self.attention and backend != self.prefill and backend != self.decode:
            return False  # the common case, without a generator
        return any(self.get(field) == backend for field in fields)

    @property
    def phases(self) -> tuple[str | None, str | None]:
        """The backends the two phases run: a phase's own flag, else --attention-backend."""
        return (self.prefill or self.attention, self.decode or self.attention)


@dataclass(frozen=True, slots=True)
class Startup:
    """SGLang's start-up outcome: the values it runs with and what it said on the way."""

    prefill_backend: str | None
    decode_backend: str | None
    attention_backend: str | None
    page_size: int
    kv_dtype: str
    algorithm: str | None
    topk: int | None
    steps: int | None
    draft_tokens: int | None
    findings: tuple[Finding, ...]
    default_backend: str | None
    """The backend SGLang's default decision chose, when it had to choose one."""

    @property
    def refused(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


class _Log:
    """Collects SGLang's refusals, warnings and adjustments as findings of this release."""

    def __init__(self, rules: ReleaseRules) -> None:
        self.rules = rules
        self.findings: list[Finding] = []

    def refuse(self, rule: str, text: str, flags: tuple[str, ...], **extra: Any) -> None:
        self._add(rule, Severity.ERROR, f"refuses to start: {text}", flags, **extra)

    def warn(self, rule: str, text: str, flags: tuple[str, ...], **extra: Any) -> None:
        self._add(rule, Severity.WARNING, f"warns: {text}", flags, **extra)

    def note(self, rule: str, text: str, flags: tuple[str, ...], **extra: Any) -> None:
        self._add(rule, Severity.INFO, text, flags, **extra)

    def _add(
        self,
        rule: str,
        severity: Severity,
        text: str,
        flags: tuple[str, ...],
        *,
        value: object = None,
        allowed: Iterable[object] = (),
        backend: str | None = None,
    ) -> None:
        separator = " " if severity is not Severity.INFO else ": "
        self.findings.append(
            Finding(
                f"startup-{rule}",
                severity,
                f"SGLang {self.rules.release}{separator}{text}",
                flags,
                value=None if value is None else str(value),
                allowed=tuple(str(a) for a in allowed),
                backend=backend,
                enforced=Enforcement.STARTUP,
            )
        )


def gpu_gate_holds(gate: GpuGate, parsed: Parsed) -> bool:
    """SGLang's GPU predicates (e.g. `is_sm100_supported`): CUDA, a CC major, a CUDA floor.

    An unknown CUDA version is assumed recent enough; an unknown compute capability fails.
    """
    if parsed.platform is not Platform.CUDA or parsed.capability is None:
        return False
    if parsed.capability.major not in gate.majors:
        return False
    return parsed.cuda_version is None or parsed.cuda_version >= gate.min_cuda


def replay(parsed: Parsed, rules: ReleaseRules) -> Startup:
    """Replay the release's start-up resolution over `parsed`; never raises for a refusal.

    SGLang stops at its first refusal; the replay goes on, so that every reason is reported
    and the documented checks still see the values SGLang was about to run with.
    """
    log = _Log(rules)
    model = parsed.model_architecture or rules.assumed_architecture(parsed.arch)
    f = _Fields(
        attention=parsed.backend,
        prefill=parsed.prefill,
        decode=parsed.decode,
        page_size=parsed.page_size,
        kv_dtype=parsed.kv_spelling,
        algorithm=parsed.algorithm,
        topk=parsed.topk,
        steps=parsed.steps,
        draft_tokens=parsed.draft_tokens,
    )
    _aliases(rules, f, log)
    chosen = _platform_hooks(parsed, f) or _model_overrides(parsed, rules, model, f, log)
    if rules.nvfp4_prefill_backends is not None and f.kv_dtype == "nvfp4":
        _nvfp4_backends(parsed, rules, f, log)
    default = _attention_backend(parsed, rules, model, f, log) or chosen
    _kv4(parsed, rules, f, log)
    if f.page_size is None:
        f.page_size = 1
    _speculative(parsed, rules, model, f, log)
    prefill, decode = f.phases
    return Startup(
        prefill_backend=prefill,
        decode_backend=decode,
        attention_backend=f.attention,
        page_size=f.page_size,
        kv_dtype=f.kv_dtype,
        algorithm=f.algorithm,
        topk=f.topk,
        steps=f.steps,
        draft_tokens=f.draft_tokens,
        findings=tuple(log.findings),
        default_backend=default,
    )


def _aliases(rules: ReleaseRules, f: _Fields, log: _Log) -> None:
    """Deprecated backend names, rewritten first (`_handle_deprecated_args`)."""
    for name, new in rules.backend_aliases.items():
        for field in (_AB, _PB, _DB):
            if f.get(field) != name:
                continue
            target = new
            if field is _PB and new in rules.decode_only:
                target = rules.decode_only[new]
            log.warn(
                "deprecated-backend",
                f"{field.flag} {name} is deprecated; it runs as {target}",
                (field.flag,),
                value=name,
                allowed=(target,),
                backend=name,
            )
            _set(f, field, target)
            # The dtype goes with the successor backend, not the prefill stand-in.
            forced = rules.alias_kv_dtypes.get(name) if target == new else None
            if forced is not None and f.kv_dtype != forced:
                log.warn(
                    "deprecated-backend",
                    f"{name} runs with --kv-cache-dtype {forced}",
                    ("--kv-cache-dtype",),
                    value=f.kv_dtype,
                    allowed=(forced,),
                    backend=name,
                )
                f.kv_dtype = forced


def _set(f: _Fields, field: BackendField, value: str | None) -> None:
    if field is _AB:
        f.attention = value
    elif field is _PB:
        f.prefill = value
    else:
        f.decode = value


def _nvfp4_backends(parsed: Parsed, rules: ReleaseRules, f: _Fields, log: _Log) -> None:
    """NVFP4 picks its own backends: the prefill one by dequant dtype, trtllm_mha to decode."""
    assert rules.nvfp4_prefill_backends is not None
    by_dtype = rules.nvfp4_prefill_backends
    wanted = {backend: dtype for dtype, backend in by_dtype.items()}
    given = f.prefill or f.attention
    if given is not None and given not in wanted:
        log.refuse(
            "nvfp4-backends",
            f"--kv-cache-dtype nvfp4 runs prefill only on {' or '.join(sorted(wanted))}",
            ("--attention-backend", "--prefill-attention-backend", "--kv-cache-dtype"),
            value=given,
            allowed=sorted(wanted),
            backend=given,
        )
        return
    sm100 = parsed.capability is not None and parsed.capability.major == 10
    if given is None:
        given = by_dtype["nvfp4"] if sm100 else by_dtype["fp8_e4m3"]
    decode = by_dtype["nvfp4"]
    if f.decode is not None and f.decode != decode:
        log.refuse(
            "nvfp4-backends",
            f"--kv-cache-dtype nvfp4 decodes only on {decode}",
            ("--decode-attention-backend", "--kv-cache-dtype"),
            value=f.decode,
            allowed=(decode,),
            backend=f.decode,
        )
        return
    if wanted[given] == "nvfp4" and not sm100:
        log.refuse(
            "nvfp4-backends",
            "native NVFP4 prefill needs SM100",
            ("--kv-cache-dtype", "--compute-capability"),
            value=parsed.capability,
        )
    log.note(
        "nvfp4-backends",
        f"--kv-cache-dtype nvfp4 runs prefill on {given} and decode on {decode}",
        ("--kv-cache-dtype",),
        value=f"{given}+{decode}",
    )
    f.prefill, f.decode = given, decode


def _platform_hooks(parsed: Parsed, f: _Fields) -> str | None:
    """The platform's own defaults (`_handle_cpu_backends`, NPU `set_default_server_args`)."""
    if parsed.platform is Platform.CPU and f.attention is None:
        f.attention = "intel_amx"
        return f.attention
    if parsed.platform is Platform.NPU:
        unset = f.attention is None and f.prefill is None and f.decode is None
        f.attention = f.prefill = f.decode = "ascend"
        if f.page_size is None:
            f.page_size = 128
        return f.attention if unset else None
    return None


def _model_overrides(
    parsed: Parsed, rules: ReleaseRules, model: str, f: _Fields, log: _Log
) -> str | None:
    unset = f.attention is None and f.prefill is None and f.decode is None
    for override in rules.model_overrides:
        if model not in override.architectures:
            continue
        if (ModelFeature.SPARSE_DSA in parsed.features) is not override.sparse:
            continue
        if override.gate is not None and not gpu_gate_holds(override.gate, parsed):
            continue
        if unset:
            f.attention = override.backend
        if override.page_size is not None and parsed.platform is not Platform.NPU:
            f.page_size = override.page_size
        if override.kv_dtypes:
            if f.kv_dtype == "auto" and override.auto_kv_dtype is not None:
                f.kv_dtype = override.auto_kv_dtype(parsed)
            f.kv_dtype = override.kv_aliases.get(f.kv_dtype, f.kv_dtype)
            if f.kv_dtype not in override.kv_dtypes:
                log.refuse(
                    override.rule,
                    f"{model} runs only with --kv-cache-dtype "
                    f"{' or '.join(sorted(override.kv_dtypes))}",
                    ("--kv-cache-dtype",),
                    value=f.kv_dtype,
                    allowed=sorted(override.kv_dtypes),
                )
        return override.backend if unset else None
    return None


def _attention_backend(
    parsed: Parsed, rules: ReleaseRules, model: str, f: _Fields, log: _Log
) -> str | None:
    """`_handle_attention_backend_compatibility`: split override, default, snaps, checks."""
    if f.prefill is not None and f.prefill == f.decode:
        f.attention = f.prefill
    default = None
    if f.attention is None:
        default = f.attention = default_backend(parsed, rules, model, f)
    for rule in rules.spec_refusing:
        if f.attention == rule and f.algorithm is not None:
            log.refuse(
                "spec-unsupported",
                f"{rule} does not run speculative decoding",
                ("--attention-backend", "--speculative-algorithm"),
                value=rule,
                backend=rule,
            )
    for gate in rules.gpu_gates:
        if f.any_is(gate.fields, gate.backend) and not gpu_gate_holds(gate.gate, parsed):
            log.refuse(
                "compute-capability",
                f"{gate.backend} needs {gate.gate.label}",
                # In field order: a frozenset of identity-hashed fields iterates in
                # memory-address order, which any change to the imports reshuffles.
                (
                    *(field.flag for field in BackendField if field in gate.fields),
                    "--compute-capability",
                ),
                value=parsed.capability or parsed.platform.value,
                backend=gate.backend,
            )
    for name, prefill in rules.decode_only.items():
        if f.prefill == name:
            log.refuse(
                f"{name.replace('_', '-')}-decode-only",
                f"{name} serves only the decode phase",
                ("--prefill-attention-backend",),
                value=name,
                backend=name,
            )
        elif f.prefill is None and f.any_is(_AB_OR_DB, name):
            f.prefill = prefill
    if parsed.arch is Arch.MLA:
        for name in rules.mla_prefill_refused:
            if f.phases[0] == name:
                log.refuse(
                    "mla-prefill",
                    f"{name} cannot run the prefill phase of an MLA model",
                    ("--prefill-attention-backend",),
                    value=name,
                    backend=name,
                )
    set_by = "--page-size" if f.page_size is not None else None
    for snap in rules.page_snaps:
        if not f.any_is(snap.fields, snap.backend):
            continue
        if snap.arch is not None and parsed.arch is not snap.arch:
            continue
        if snap.gate is not None and not gpu_gate_holds(snap.gate, parsed):
            continue
        if snap.max_topk is not None and (f.topk or 0) > snap.max_topk:
            continue
        if f.page_size not in snap.sizes:
            given = "unset" if set_by is None else f"{f.page_size} from {set_by}"
            say = log.warn if set_by == "--page-size" else log.note
            say(
                "page-size-default" if set_by is None else "page-size-snapped",
                f"{snap.backend} sets the page size to {snap.snap_to} (was {given})",
                ("--page-size",),
                value=snap.snap_to,
                allowed=sorted(snap.sizes),
                backend=snap.backend,
            )
            f.page_size, set_by = snap.snap_to, snap.backend
    for name, spelled in rules.kv_spellings:
        if f.any_is(_AB_OR_DB, name) and f.kv_dtype not in spelled:
            log.refuse(
                "backend-kv-dtype",
                f"{name} takes --kv-cache-dtype {', '.join(spelled)} only (spelled so)",
                ("--kv-cache-dtype",),
                value=f.kv_dtype,
                allowed=spelled,
                backend=name,
            )
    fallback = rules.dtype_fallback
    if f.attention == fallback.backend and f.kv_dtype == fallback.kv_dtype.value:
        log.warn(
            fallback.id,
            f"{fallback.why} --attention-backend {fallback.backend} becomes {fallback.replacement}",
            ("--attention-backend", "--kv-cache-dtype"),
            value=fallback.backend,
            allowed=(fallback.replacement,),
            backend=fallback.backend,
        )
        f.attention = fallback.replacement
    for name in rules.prefill_only:
        if f.attention == name or f.decode == name:
            log.refuse(
                f"{name.replace('_', '-')}-prefill-only",
                f"{name} serves only the prefill phase; use --prefill-attention-backend {name}",
                ("--attention-backend", "--decode-attention-backend"),
                value=name,
                backend=name,
            )
    dual_chunk = rules.dual_chunk_backend
    if dual_chunk and ModelFeature.DUAL_CHUNK in parsed.features and f.attention != dual_chunk:
        log.refuse(
            "dual-chunk",
            f"a model with a dual-chunk attention config needs --attention-backend {dual_chunk}",
            ("--attention-backend",),
            value=f.attention,
            allowed=(dual_chunk,),
        )
    return default


def default_backend(parsed: Parsed, rules: ReleaseRules, model: str, f: _Fields) -> str:
    """SGLang's default decision: the first branch whose every condition holds."""
    no_spec_or_topk_one = f.topk is None or (f.topk == 1 and f.page_size in (None, 1))
    for branch in rules.defaults:
        if branch.arch is not None and branch.arch is not parsed.arch:
            continue
        if branch.platform is not None and parsed.platform is not branch.platform:
            continue
        if branch.gate is not None and not gpu_gate_holds(branch.gate, parsed):
            continue
        if branch.needs_no_spec_or_topk_one and not no_spec_or_topk_one:
            continue
        if branch.needs_topk_when_speculative and f.algorithm is not None and f.topk is None:
            continue
        if branch.architectures is not None and model not in branch.architectures:
            continue
        if branch.kv_heads is not None and (parsed.kv_heads or 0) not in branch.kv_heads:
            continue
        return branch.backend
    raise AssertionError("the default decision ends with an unconditional branch")


def _kv4(parsed: Parsed, rules: ReleaseRules, f: _Fields, log: _Log) -> None:
    gate = rules.kv_gates.get(f.kv_dtype)
    if gate is not None and not gpu_gate_holds(gate, parsed):
        log.refuse(
            "kv-dtype-gpu",
            f"--kv-cache-dtype {f.kv_dtype} needs {gate.label}",
            ("--kv-cache-dtype", "--compute-capability"),
            value=parsed.capability or parsed.platform.value,
        )
    kv4 = rules.kv4
    if f.kv_dtype not in kv4.spellings:
        return
    flags = ("--kv-cache-dtype",)
    cuda_rule, pair_rule, hybrid_rule = kv4.rule_ids
    if parsed.platform is not Platform.CUDA:
        log.refuse(
            cuda_rule,
            f"--kv-cache-dtype {f.kv_dtype} runs only on CUDA",
            (*flags, "--platform"),
            value=parsed.platform.value,
            allowed=("cuda",),
        )
        return
    prefill, decode = f.phases
    if prefill != decode and prefill != kv4.pair_prefill:
        log.warn(
            hybrid_rule,
            f"--kv-cache-dtype {f.kv_dtype} with prefill on {prefill} "
            f"and decode on {decode} may hit rare edge cases",
            ("--prefill-attention-backend", "--decode-attention-backend"),
            value=f"{prefill}+{decode}",
        )
    elif prefill == kv4.pair_prefill:
        partners = kv4.pair_partners[parsed.arch]
        if decode not in partners:
            log.refuse(
                pair_rule,
                f"with --kv-cache-dtype {f.kv_dtype} and "
                f"prefill on {prefill}, decode must run on {', '.join(partners)}",
                (*flags, "--decode-attention-backend"),
                value=decode,
                allowed=partners,
                backend=decode,
            )
    else:
        single = kv4.single[parsed.arch]
        if f.attention not in single:
            log.refuse(
                ColumnId.FP4_KV.rule_id,
                f"--kv-cache-dtype {f.kv_dtype} runs only on "
                f"{', '.join(single)} for {parsed.arch.label} models",
                (*flags, "--attention-backend"),
                value=f.attention,
                allowed=single,
                backend=f.attention,
            )


def _speculative(parsed: Parsed, rules: ReleaseRules, model: str, f: _Fields, log: _Log) -> None:
    algorithm = rules.algorithm_aliases.get(f.algorithm or "", f.algorithm)
    f.algorithm = algorithm
    if algorithm is None:
        return
    flags = ("--speculative-algorithm", "--speculative-eagle-topk")
    assert f.page_size is not None
    if algorithm in rules.eagle_family:
        if f.steps is None and (f.topk is not None or f.draft_tokens is not None):
            log.refuse(
                "spec-params",
                "--speculative-eagle-topk or --speculative-num-draft-tokens "
                "is set without --speculative-num-steps (give all three, or none and "
                "SGLang chooses them for the model)",
                ("--speculative-num-steps", *flags[1:]),
            )
            f.topk = f.topk or 1
        elif f.steps is None:
            params = auto_spec_params(rules, algorithm, model)
            f.steps, f.topk, f.draft_tokens = params.steps, params.topk, params.draft_tokens
            log.note(
                "spec-auto-params",
                f"speculative decoding runs {params.steps} steps, "
                f"topk {params.topk}, {params.draft_tokens} draft tokens, chosen for "
                f"{model}",
                ("--speculative-num-steps",),
                value=params.topk,
            )
        elif f.topk is None:
            f.topk = 1  # never read before SGLang fails on it; the page judges topk 1
        assert f.topk is not None
        for name in rules.topk_one_only:
            if f.any_is(rules.topk_one_only_fields, name) and f.topk > 1:
                log.refuse(
                    ColumnId.SPEC_TOPK_GT1.rule_id,
                    f"{name} runs speculative decoding only with topk 1",
                    flags,
                    value=f.topk,
                    allowed=(1,),
                    backend=name,
                )
        if f.topk == 1 and f.steps is not None:
            f.draft_tokens = f.steps + 1
        paged = rules.topk_paged_eagle
    elif algorithm == rules.ngram:
        if parsed.platform is not Platform.CUDA:
            log.refuse(
                "ngram-cuda",
                "NGRAM speculative decoding runs only on CUDA",
                ("--speculative-algorithm", "--platform"),
                value=parsed.platform.value,
            )
        f.topk = rules.ngram_bfs_breadth
        paged = rules.topk_paged_ngram
    else:
        return
    if f.topk is not None and f.topk > 1 and f.page_size > 1 and f.attention not in paged:
        log.refuse(
            rules.topk_paged_rule_id,
            f"speculative topk {f.topk} with page size "
            f"{f.page_size} runs only on {' or '.join(paged)} as --attention-backend",
            (*flags, "--page-size", "--attention-backend"),
            value=f.attention,
            allowed=paged,
            backend=f.attention,
        )


def auto_spec_params(rules: ReleaseRules, algorithm: str, model: str) -> SpecParams:
    for case in rules.spec_auto_params:
        if case.algorithm is not None and case.algorithm != algorithm:
            continue
        if case.architectures is not None and model not in case.architectures:
            continue
        return case.params
    raise AssertionError("the automatic speculative parameters end with a catch-all case")


__all__ = ["Startup", "auto_spec_params", "default_backend", "gpu_gate_holds", "replay"]
