"""SGLang's start-up code that reads the model, replayed: its loader, its quantization check,
its model-specific branches, deterministic inference and data parallelism.

The loader and the quantization check run when `ModelConfig` is built (before any backend
is chosen); the model branches run before the backend check
(`_handle_model_specific_adjustments`); deterministic inference before it from 0.5.12, after
it before; the data-parallel check after it (`_handle_data_parallelism`).
"""

from __future__ import annotations

from compat.engine.events import (
    NOTE,
    REFUSE,
    WARN,
    DecodeRoundRobin,
    DeterministicBackends,
    DeterministicDefault,
    DpAttentionSplit,
    GpuRuntimeMissing,
    HybridCacheBackend,
    HybridCachePageOne,
    HybridCachePlatform,
    HybridCacheSpeculation,
    ModelBackendList,
    ModelBackendRefused,
    ModelKvDtypes,
    ModelPage,
    ModelReloaded,
    ModelTypeUnknown,
    QuantizationMismatch,
    QuantizationOffRocm,
    QuantizationUnregistered,
    RemoteCodeUntrusted,
)
from compat.engine.launch import Launch
from compat.engine.model_rules import HybridCacheRules, MambaCache, ModelRule, SpecWithRadix
from compat.engine.predicates import AB, gpu_gate_holds
from compat.engine.rules import ReleaseRules
from compat.engine.startup.backend import default_backend
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
                transformers=loader.source,
            )
        )
    return model


def model_rule_of(launch: Launch, rules: ReleaseRules) -> ModelRule | None:
    """The model-specific branch SGLang runs for this launch's model, if any."""
    model = launch.model_architecture or rules.assumed_architecture(launch.arch)
    model_type = launch.model_type
    if model_type is not None and model_type not in rules.models.model_types:
        model = rules.loader.reloads.get(model_type, model)
    sparse = ModelFeature.SPARSE_DSA in launch.features
    return next(
        (rule for rule in rules.model_rules if rule.applies(model, sparse, launch.on_device)),
        None,
    )


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
    for rule in rules.model_rules:
        if rule.applies(model, sparse, device):
            return _apply(launch, rules, model, rule, f, log)
    return None


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
            if page.size is not None:
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
        and (not f.radix_cache or f.algorithm is not None)
        and default_backend(launch, rules, model, f) == rule.prefers
    ):
        chosen = rule.prefers  # the Mamba cache can page: the default decision's choice
    f.attention = chosen
    if rule.default_pages is not None:
        f.page_size = rule.default_pages.get(chosen, 1)
    return chosen


def handle_mamba_cache(
    launch: Launch, hybrid: HybridCacheRules, rule: ModelRule, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_mamba_radix_cache`: the strategy of a hybrid model's Mamba cache, and its needs."""
    if not hybrid.handled:
        return  # each model's branch acts alone (its default)
    if rule.mamba is MambaCache.NONE:
        f.radix_cache = False
        return
    if not f.radix_cache:
        return
    if hybrid.picks_strategy and rule.mamba is MambaCache.EXTRA_BUFFER:
        if not any(machine.holds(launch) for machine in hybrid.extra_buffer_machines):
            log.add(
                HybridCachePlatform(
                    flags=("--platform",),
                    value=launch.platform.value,
                    model=rule.model,
                    machines=tuple(m.label for m in hybrid.extra_buffer_machines),
                )
            )
        return
    if f.page_size not in (None, 1) and (hybrid.page_one or hybrid.picks_strategy):
        log.add(
            HybridCachePageOne(
                severity=REFUSE if hybrid.picks_strategy else WARN,
                flags=("--page-size",),
                value=f.page_size,
                allowed=(1,),
                model=rule.model,
            )
        )
        f.page_size = 1
    if hybrid.picks_strategy:
        if f.attention == "trtllm_mha":
            log.add(
                HybridCacheBackend(
                    flags=("--attention-backend",),
                    value=f.attention,
                    backend=f.attention,
                    model=rule.model,
                )
            )
        return
    if f.algorithm is None:
        if f.attention == "trtllm_mha":
            f.radix_cache = False  # trtllm_mha cannot run page size 1
        return
    spec = hybrid.spec
    if spec is SpecWithRadix.RADIX_OFF or (
        spec is SpecWithRadix.REFUSE_BUT_ROCM and launch.platform is Platform.ROCM
    ):
        f.radix_cache = False
    else:
        log.add(
            HybridCacheSpeculation(
                flags=("--speculative-algorithm",), value=f.algorithm, model=rule.model
            )
        )


def _check_list(rule: ModelRule, f: ServerArgsFields, log: StartupLog) -> None:
    """The model's list of backends, read where the branch reads it."""
    if not rule.allowed:
        return
    on_field = rule.checks == frozenset({AB})
    seen = (f.attention,) if on_field else f.phases
    outside = [name for name in seen if name not in rule.allowed]
    if not outside:
        return
    log.add(
        ModelBackendList(
            rule=rule.rule,
            flags=("--attention-backend",)
            if on_field
            else (
                "--attention-backend",
                "--prefill-attention-backend",
                "--decode-attention-backend",
            ),
            value=outside[0],
            allowed=rule.allowed,
            backend=outside[0],
            model=rule.model,
            backends=rule.allowed,
            where="--attention-backend" if on_field else "the prefill and decode phases",
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


def handle_deterministic_inference(
    launch: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields, log: StartupLog
) -> str | None:
    """`_handle_deterministic_inference`: its own default (when it runs before the default
    decision), then its lists. Returns the backend it chose, if any."""
    if not launch.deterministic:
        return None
    deterministic = rules.deterministic
    deepseek = model in deterministic.deepseek_architectures
    chosen = None
    if f.attention is None:
        if gpu_gate_holds(deterministic.default_gate, launch):
            chosen = "triton" if deepseek else "flashinfer"
        else:
            chosen = "fa3"
        f.attention = chosen
        log.add(
            DeterministicDefault(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=chosen,
                backend=chosen,
                chosen=chosen,
            )
        )
    elif f.attention not in deterministic.backends:
        log.add(
            DeterministicBackends(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=f.attention,
                allowed=deterministic.backends,
                backend=f.attention,
                backends=deterministic.backends,
            )
        )
    if deepseek and f.attention not in deterministic.deepseek_backends:
        log.add(
            DeterministicBackends(
                flags=("--enable-deterministic-inference", "--attention-backend"),
                value=f.attention,
                allowed=deterministic.deepseek_backends,
                backend=f.attention,
                backends=deterministic.deepseek_backends,
                model=model,
            )
        )
    return chosen


def handle_data_parallelism(
    launch: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog
) -> None:
    """`_handle_data_parallelism`: DP attention splits the TP ranks into `--dp-size` groups;
    `_handle_pd_disaggregation`: a decode server's DP needs the round-robin balance."""
    if (
        rules.decode_dp_needs_round_robin
        and launch.disaggregation == "decode"
        and launch.dp_size > 1
        and not launch.round_robin_balance
    ):
        log.add(
            DecodeRoundRobin(
                flags=("--disaggregation-mode", "--dp-size", "--prefill-round-robin-balance"),
                value=launch.dp_size,
            )
        )
    if launch.dp_size == 1:
        f.dp_attention = False
    if f.dp_attention and launch.tp_size % launch.dp_size:
        log.add(
            DpAttentionSplit(
                flags=("--tp-size", "--dp-size", "--enable-dp-attention"),
                value=launch.tp_size,
                tp_size=launch.tp_size,
                dp_size=launch.dp_size,
            )
        )
