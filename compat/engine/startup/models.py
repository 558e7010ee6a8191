"""SGLang's start-up code that reads the model, replayed: its loader, its quantization check
and its model-specific branches.

The loader and the quantization check run when `ModelConfig` is built (before any backend
is chosen); the model branches run before the backend check
(`_handle_model_specific_adjustments`), each with its Mamba cache
(`compat.engine.startup.hybrid`).
"""

from __future__ import annotations

from compat.engine.events import NOTE, WARN, ModelKvDtypes
from compat.engine.launch import Launch
from compat.engine.model_events import (
    GpuRuntimeMissing,
    ModelBackendList,
    ModelBackendRefused,
    ModelPage,
    ModelReloaded,
    ModelSpeculation,
    ModelTypeUnknown,
    QuantizationMismatch,
    QuantizationOffRocm,
    QuantizationUnregistered,
    RemoteCodeUntrusted,
)
from compat.engine.model_rules import EXTRA_BUFFER_STRATEGIES, ModelRule
from compat.engine.predicates import AB, ANY_FLAG, RUNS_DECODE, RUNS_PREFILL
from compat.engine.rules import ReleaseRules
from compat.engine.startup.backend import default_backend
from compat.engine.startup.hybrid import handle_mamba_cache
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.vocab.terms import ModelFeature, Platform


def handle_model_loading(launch: Launch, rules: ReleaseRules, model: str, log: StartupLog) -> str:
    """SGLang's config loader: the model type must be readable. Returns the architecture
    SGLang runs (another one when its loader reloads a config transformers refuses)."""
    model_type = launch.model_type
    if model_type is None or model_type in rules.models.model_types:
        return model
    loader = rules.loader
    reloaded = loader.reloads.get(model_type)
    if reloaded is not None:
        log.add(
            ModelReloaded(
                flags=("--model-path",),
                value=model_type,
                model_type=model_type,
                architecture=reloaded,
                source=loader.source,
            )
        )
        return reloaded
    if launch.remote_code and launch.trust_remote_code:
        return model  # the config's own class
    if launch.remote_code:
        log.add(
            RemoteCodeUntrusted(
                flags=("--trust-remote-code",), value=model_type, model_type=model_type
            )
        )
    else:
        log.add(
            ModelTypeUnknown(
                flags=("--model-path",),
                value=model_type,
                model_type=model_type,
                source=loader.source,
            )
        )
    return model


def model_rule_of(launch: Launch, rules: ReleaseRules) -> ModelRule | None:
    """The model-specific branch SGLang runs for this launch's model, if any."""
    model = launch.model_architecture or rules.assumed_architecture(launch.arch)
    model_type = launch.model_type
    if model_type is not None and model_type not in rules.models.model_types:
        model = rules.loader.reloads.get(model_type, model)
    return rules.model_rule(model, ModelFeature.SPARSE_DSA in launch.features, launch.on_device)


def handle_quantization(launch: Launch, rules: ReleaseRules, log: StartupLog) -> None:
    """`ModelConfig._verify_quantization`: the checkpoint's method and the flag must agree,
    and the method must be one the machine registers."""
    quantization, models = rules.quantization, rules.models
    given = None if launch.quantization is None else launch.quantization.lower()
    method = given
    checkpoint = launch.checkpoint_quantization
    if checkpoint is not None:
        checkpoint = checkpoint.lower()
        if given is None:
            method = checkpoint
        elif given != checkpoint and checkpoint not in models.quantization_compatible.get(
            given, ()
        ):
            log.add(
                QuantizationMismatch(
                    flags=("--quantization",),
                    value=given,
                    allowed=(checkpoint,),
                    checkpoint=checkpoint,
                    given=given,
                )
            )
    if method is None:
        return
    machines = quantization.gated.get(method)
    if machines is not None and not any(machine.holds(launch) for machine in machines):
        log.add(
            QuantizationUnregistered(
                flags=("--quantization", "--platform"),
                value=method,
                method=method,
                machines=tuple(machine.label for machine in machines),
            )
        )
    if launch.platform is Platform.ROCM and method not in models.quantization_rocm:
        log.add(
            QuantizationOffRocm(
                flags=("--quantization", "--platform"),
                value=method,
                allowed=tuple(sorted(models.quantization_rocm)),
                method=method,
            )
        )


def handle_model_rules(
    launch: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields, log: StartupLog
) -> str | None:
    """`_handle_model_specific_adjustments`: the first branch that takes the model runs.

    Returns the backend it chose as a default, if any.
    """
    sparse = ModelFeature.SPARSE_DSA in launch.features
    device = launch.on_device
    if rules.hybrid_cache.decode_radix_off_first and launch.disaggregation == "decode":
        f.radix_cache = False  # a decode server keeps no prefix cache
    rule = rules.model_rule(model, sparse, device)
    return None if rule is None else _apply(launch, rules, model, rule, f, log)


def _apply(
    launch: Launch,
    rules: ReleaseRules,
    model: str,
    rule: ModelRule,
    f: ServerArgsFields,
    log: StartupLog,
) -> str | None:
    if rule.gpu_runtime and launch.platform is Platform.CPU:
        log.add(
            GpuRuntimeMissing(
                rule=rule.rule,
                flags=("--platform",),
                value=launch.platform.value,
                model=rule.model,
                source=rule.source,
            )
        )
    if rule.check_before_default:
        _check_list(rule, f, log)
    chosen = _default(launch, rules, model, rule, f)
    if rule.mamba is not None:
        handle_mamba_cache(launch, rules.hybrid_cache, rule, f, log)
    if rule.forces_dp_attention and launch.platform is not Platform.NPU:
        f.dp_attention = True
    for page in rule.pages:
        if page.on is None or page.on.holds(launch):
            if page.unless_preshuffle and rules.preshuffle_usable(launch):
                continue  # aiter's preshuffle path: the next page (64) is SGLang's else
            if page.size is not None and page.sets(f.attention, f.page_size):
                if f.page_size != page.size:
                    log.add(
                        ModelPage(
                            rule=rule.rule,
                            severity=NOTE if f.page_size is None else WARN,
                            flags=("--page-size",),
                            value=page.size,
                            model=rule.model,
                            size=page.size,
                            was=f.page_size,
                            source=rule.source,
                        )
                    )
                f.page_size = page.size
            break
    if rule.kv_dtypes:
        _model_kv_dtype(launch, rule, f, log)
    if (
        rule.speculation is not None
        and f.algorithm is not None
        and f.algorithm not in rule.speculation_also
        and (f.algorithm != rule.speculation or f.topk != 1)
    ):
        log.add(
            ModelSpeculation(
                rule=rule.rule,
                flags=("--speculative-algorithm", "--speculative-eagle-topk"),
                value=f.algorithm if f.algorithm != rule.speculation else f.topk,
                model=rule.model,
                algorithm=rule.speculation,
                also=rule.speculation_also,
                source=rule.source,
            )
        )
    if not rule.check_before_default:
        _check_list(rule, f, log)
    for name in rule.refused:
        if f.attention == name:
            log.add(
                ModelBackendRefused(
                    rule=rule.rule,
                    flags=("--attention-backend",),
                    value=name,
                    backend=name,
                    model=rule.model,
                    source=rule.source,
                )
            )
    return chosen


def _default(
    launch: Launch, rules: ReleaseRules, model: str, rule: ModelRule, f: ServerArgsFields
) -> str | None:
    """The model's own default backend (and page size), while the fields it reads are unset."""
    if not rule.defaults or any(f.get(field) is not None for field in rule.default_unless):
        return None
    if rule.default_without_speculation and f.algorithm is not None:
        return None
    chosen = next((c.value for c in rule.defaults if c.holds(launch, f.algorithm, f.topk)), None)
    if chosen is None:
        return None
    if (
        rule.prefers is not None
        and (
            not f.radix_cache
            or f.algorithm is not None
            or launch.mamba_strategy in EXTRA_BUFFER_STRATEGIES
        )
        and default_backend(launch, rules, model, f) == rule.prefers
    ):
        # The Mamba cache can page (no radix cache, speculation, or an asked-for
        # extra_buffer): the default decision's choice.
        chosen = rule.prefers
    for field in rule.default_fields:
        f.set(field, chosen)
    if rule.default_pages is not None:
        f.page_size = rule.default_pages.get(chosen, 1)
    return chosen


_PHASES = (RUNS_PREFILL, RUNS_DECODE)


def _check_list(rule: ModelRule, f: ServerArgsFields, log: StartupLog) -> None:
    """The model's list of backends, read where the branch reads it."""
    if not rule.allowed:
        return
    on_field = rule.checks == frozenset({AB})
    if rule.checks == ANY_FLAG:  # each flag that is set
        seen: tuple[str | None, ...] = tuple(
            name for name in (f.attention, f.prefill, f.decode) if name is not None
        )
    elif on_field:
        seen = (f.attention,)
    else:
        seen = tuple(f.phases[i] for i, field in enumerate(_PHASES) if field in rule.checks)
    outside = [name for name in seen if name not in rule.allowed]
    if not outside:
        return
    phases = [name for name, field in zip(("prefill", "decode"), _PHASES, strict=True)
              if field in rule.checks or rule.checks == ANY_FLAG]  # fmt: skip
    log.add(
        ModelBackendList(
            rule=rule.rule,
            flags=("--attention-backend",)
            if on_field
            else (
                "--attention-backend",
                *(f"--{name}-attention-backend" for name in phases),
            ),
            value=outside[0],
            allowed=rule.allowed,
            backend=outside[0],
            model=rule.model,
            backends=rule.allowed,
            where="--attention-backend"
            if on_field
            else f"the {' and '.join(phases)} " + ("phases" if len(phases) > 1 else "phase"),
            source=rule.source,
        )
    )


def _model_kv_dtype(launch: Launch, rule: ModelRule, f: ServerArgsFields, log: StartupLog) -> None:
    """The model's KV dtype: `auto` resolved, aliases rewritten, anything else refused."""
    if f.kv_dtype == "auto" and rule.auto_kv_dtype is not None:
        f.kv_dtype = rule.auto_kv_dtype(launch)
    f.kv_dtype = rule.kv_aliases.get(f.kv_dtype, f.kv_dtype)
    if f.kv_dtype not in rule.kv_dtypes:
        allowed = tuple(sorted(rule.kv_dtypes))
        log.add(
            ModelKvDtypes(
                rule=rule.rule,
                flags=("--kv-cache-dtype",),
                value=f.kv_dtype,
                allowed=allowed,
                model=rule.model,
                dtypes=allowed,
            )
        )
