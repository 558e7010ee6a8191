"""The one path every AttentionConfig takes: each value checked, every problem at once.

Each value is checked by `compat.inputs.checks` (a type test and a lookup when it is well-formed),
every problem reported at once, in a fixed order; a valid config gets its canonical form,
`Parsed`, which the guard and the start-up replay read."""

from __future__ import annotations

import functools
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import msgspec.structs

from compat.engine.launch import Launch
from compat.engine.rules import ReleaseRules
from compat.inputs.checks import (
    InputProblem,
    InvalidConfigError,
    booleans,
    capability,
    choice,
    class_name,
    cuda_version,
    positive_ints,
    release_choice,
    strings,
)
from compat.inputs.flags import (
    BACKEND_FLAGS,
    DEVICE,
    DISAGGREGATION_MODE,
    FLAGS,
    KV_CACHE_DTYPE,
    MAMBA_SCHEDULER_STRATEGY,
    MAMBA_SSM_DTYPE,
    QUANTIZATION,
    SPECULATIVE_ALGORITHM,
    SPECULATIVE_ATTENTION_MODE,
    SPECULATIVE_DRAFT_ATTENTION_BACKEND,
    SUB_BACKEND_FLAGS,
    Flag,
    flag_of,
)
from compat.inputs.model_source import INTEGER_FACTS
from compat.inputs.packages import check_environment_and_packages
from compat.inputs.release_choice import checked_release, chosen_release
from compat.inputs.sub_backend_checks import check_sub_backend, sub_backends
from compat.releases import NEWEST, RELEASES, UnknownReleaseError
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import (
    KV_DTYPE_SPELLINGS,
    Arch,
    KvDtype,
    ModelFeature,
    Platform,
    SpeculativeAttentionMode,
)

if TYPE_CHECKING:
    from compat.inputs.config import AttentionConfig

_ARCHS = {arch.value: arch for arch in Arch}
_PLATFORMS = {platform.value: platform for platform in Platform}
_MODES = {mode.value: mode for mode in SpeculativeAttentionMode}


class Parsed(Launch, frozen=True):
    """An AttentionConfig's validated, canonical form: a `Launch` (what the engine replays)
    plus what the guard reads besides: the KV dtype as one value, the release, speculation."""

    kv_dtype: KvDtype
    speculative: bool
    release: ReleaseRules
    version_source: str
    unmodelled_release: str | None
    """The release asked for (COMPAT_SGLANG_VERSION, the installed sglang) when it is newer
    than the newest modelled: `release`, the newest modelled, answers for it."""
    replay_key: tuple[object, ...] = ()
    """What start-up reads of the launch, and the release: each key is replayed once."""


# The model's switches and the integers, read with one attrgetter call each: the checks run
# on every construction. Their flags are spelled once, here.
_FEATURES = {
    "sliding_window": ModelFeature.SLIDING_WINDOW,
    "multimodal": ModelFeature.MULTIMODAL,
    "encoder_decoder": ModelFeature.ENCODER_DECODER,
    "dual_chunk_attention": ModelFeature.DUAL_CHUNK,
    "sparse_attention": ModelFeature.SPARSE_DSA,
    "qsa_profile": ModelFeature.QSA_PROFILE,
}
FEATURE_FIELDS = {feature: name for name, feature in _FEATURES.items()}
"""The AttentionConfig field that states each model feature."""
# The launch's switches and the model's other yes/no fact are validated with the features.
_BOOLEANS = (*_FEATURES, *(flag.field for flag in FLAGS if flag.switch), "remote_code")
_BOOLEAN_FLAGS = tuple(flag_of(name) for name in _BOOLEANS)
_booleans = attrgetter(*_BOOLEANS)
_FEATURE_COUNT = len(_FEATURES)
_INTEGERS = (*(flag.field for flag in FLAGS if flag.integer), *INTEGER_FACTS)
_INTEGER_FLAGS = tuple(flag_of(name) for name in _INTEGERS)
_integers = attrgetter(*_INTEGERS)
_NO_FEATURES: frozenset[ModelFeature] = frozenset()
# Values of these types are stored as given; anything else may be a str or int subclass.
_PLAIN_TYPES = frozenset({str, int, bool, tuple, type(None), ComputeCapability})


def parse(config: AttentionConfig) -> Parsed:
    """The canonical form of a valid config; every problem at once for an invalid one, in
    a fixed order: the release, the names, the integers, the model's class, the machine,
    the model's switches."""
    _plain_values(config)
    problems: list[InputProblem] = []
    release = checked_release(problems, config.sglang_version)
    _check_names(problems, config, RELEASES[NEWEST] if release is None else release[0])
    positive_ints(problems, _INTEGER_FLAGS, _integers(config))
    class_name(problems, "--model-architecture", config.model_architecture)
    class_name(problems, "--draft-model-architecture", config.draft_model_architecture)
    compute = capability(problems, config.compute_capability)
    cuda = cuda_version(problems, config.cuda_version)
    switches: tuple[object, ...] = _booleans(config)
    booleans(problems, _BOOLEAN_FLAGS, switches)
    if config.model_type is not None or config.checkpoint_quantization is not None:
        strings(problems, ("--model-type", "--checkpoint-quantization"),
                (config.model_type, config.checkpoint_quantization))  # fmt: skip
    if problems:
        raise InvalidConfigError(problems)
    assert release is not None
    return _assemble(config, compute, cuda, _features(switches[:_FEATURE_COUNT]), *release)


def _plain_values(config: AttentionConfig) -> None:
    """Store str and int subclasses (their own hash, eq, upper) as the plain values they hold."""
    values = vars(config)
    if _PLAIN_TYPES.issuperset(map(type, values.values())):
        return  # the common case, tested at C speed
    for name, value in values.items():
        if type(value) in _PLAIN_TYPES:
            continue
        if isinstance(value, str):
            object.__setattr__(config, name, str.__str__(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            object.__setattr__(config, name, int.__int__(value))


def _check_names(
    problems: list[InputProblem], config: AttentionConfig, rules: ReleaseRules
) -> None:
    """The backends, KV dtype and algorithm the release accepts; the model and platform."""
    for flag in (*BACKEND_FLAGS, SPECULATIVE_DRAFT_ATTENTION_BACKEND):
        # SGLang's parser takes any draft backend name; one the release does not know
        # (no `--attention-backend` choice) is refused as a typo, naming who knows it.
        _check_backend(problems, config, rules, flag)
    for flag in SUB_BACKEND_FLAGS:
        check_sub_backend(problems, flag, getattr(config, flag.field), rules)
    _check_kv_dtype(problems, config, rules)
    strategy = MAMBA_SCHEDULER_STRATEGY
    release_choice(problems, strategy.option, config.mamba_scheduler_strategy, rules,
                   "mamba_strategy_choices", rules.mamba_strategy_set)  # fmt: skip
    if config.mamba_ssm_dtype is not None:
        release_choice(problems, MAMBA_SSM_DTYPE.option, config.mamba_ssm_dtype, rules,
                       "mamba_ssm_dtype_choices", rules.mamba_ssm_dtype_set)  # fmt: skip
    if config.environment != () or config.packages != ():  # most launches set neither
        check_environment_and_packages(problems, config.environment, config.packages, rules)
    choice(problems, "--attention-arch", config.attention_arch, _ARCHS)
    if config.draft_attention_arch is not None:
        choice(problems, "--draft-attention-arch", config.draft_attention_arch, _ARCHS)
    choice(problems, "--platform", config.platform, _PLATFORMS)
    mode = SPECULATIVE_ATTENTION_MODE
    choice(problems, mode.option, config.speculative_attention_mode, _MODES)
    _check_algorithm(problems, config, rules)
    quantization = config.quantization
    if quantization is not None:
        option, accepted = QUANTIZATION.option, rules.quantization_set
        release_choice(problems, option, quantization, rules, "quantization_choices", accepted)
    for flag, value, default in (
        (DEVICE, config.device, None),
        (DISAGGREGATION_MODE, config.disaggregation_mode, "null"),
    ):
        if value != default:
            choice(problems, flag.option, value, flag.choices)


def _check_backend(
    problems: list[InputProblem], config: AttentionConfig, rules: ReleaseRules, flag: Flag
) -> None:
    value = getattr(config, flag.field)
    if value is not None:
        release_choice(problems, flag.option, value, rules, "backend_choices", rules.backend_set)


def _check_kv_dtype(
    problems: list[InputProblem], config: AttentionConfig, rules: ReleaseRules
) -> None:
    option = KV_CACHE_DTYPE.option
    release_choice(problems, option, config.kv_cache_dtype, rules, "kv_choices", rules.kv_set)


def _check_algorithm(
    problems: list[InputProblem], config: AttentionConfig, rules: ReleaseRules
) -> None:
    algorithm = config.speculative_algorithm
    if algorithm is not None:
        # Up to 0.5.11 argparse compares the value as spelled; later start-up upper-cases it.
        any_case = isinstance(algorithm, str) and rules.algorithm_any_case
        upper = algorithm.upper() if any_case else algorithm
        option = SPECULATIVE_ALGORITHM.option
        release_choice(problems, option, upper, rules, "algorithm_choices", rules.algorithm_set)


_FieldCheck = Callable[[list[InputProblem], "AttentionConfig", ReleaseRules], None]
"""One field's check against the release: what `_parse` and `replaced` both run."""


def _integer_check(flag: Flag) -> _FieldCheck:
    def check(problems: list[InputProblem], config: AttentionConfig, _: ReleaseRules) -> None:
        positive_ints(problems, (flag.option,), (getattr(config, flag.field),))

    return check


# The fields whose values are checked alone (no other field's check reads them, and they
# read only the release), each with its check: the backends, the KV dtype, the algorithm
# and the integers. `replaced` checks just these when only they change.
_ALONE: dict[str, _FieldCheck] = {
    **{flag.field: functools.partial(_check_backend, flag=flag) for flag in BACKEND_FLAGS},
    KV_CACHE_DTYPE.field: _check_kv_dtype,
    SPECULATIVE_ALGORITHM.field: _check_algorithm,
    **{flag.field: _integer_check(flag) for flag in FLAGS if flag.integer},
}


def _features(switches: tuple[object, ...]) -> frozenset[ModelFeature]:
    """The model features of switches that are all bools (validated)."""
    if not any(switches):
        return _NO_FEATURES
    return frozenset(f for f, on in zip(_FEATURES.values(), switches, strict=True) if on)


_LAUNCH_FIELDS = Launch.__struct_fields__  # what the start-up replay reads
# One C call reads them all: the key is built for every configuration constructed.
_launch_attributes = attrgetter(*_LAUNCH_FIELDS)


def _keyed(parsed: Parsed) -> Parsed:
    """`parsed` with its replay key, read from its own launch fields: for a canonical form
    just built (`_assemble`) or copied (`reparsed`), which nothing has read yet."""
    key = (id(parsed.release), *_launch_attributes(parsed))
    msgspec.structs.force_setattr(parsed, "replay_key", key)
    return parsed


def _alone_fields(config: AttentionConfig) -> dict[str, Any]:
    """The `Parsed` fields that `_ALONE`'s fields set, in canonical form: what a copy that
    changes only those fields changes (`reparsed`), and part of every `_assemble`."""
    algorithm = config.speculative_algorithm
    kv_spelling = config.kv_cache_dtype
    return dict(
        backend=config.attention_backend,
        prefill=config.prefill_attention_backend,
        decode=config.decode_attention_backend,
        page_size=config.page_size,
        topk=config.speculative_eagle_topk,
        kv_spelling=kv_spelling,
        kv_dtype=KV_DTYPE_SPELLINGS[kv_spelling],
        algorithm=None if algorithm is None else algorithm.upper(),
        speculative=algorithm is not None,
        steps=config.speculative_num_steps,
        draft_tokens=config.speculative_num_draft_tokens,
        tp_size=config.tp_size or 1,
        dp_size=config.dp_size or 1,
    )


def _assemble(
    config: AttentionConfig,
    capability: ComputeCapability | None,
    cuda_version: tuple[int, int] | None,
    features: frozenset[ModelFeature],
    release: ReleaseRules,
    version_source: str,
    unmodelled_release: str | None,
) -> Parsed:
    """The canonical form of a config whose values have all been validated."""
    fields: dict[str, Any] = dict(
        arch=_ARCHS[config.attention_arch],
        platform=_PLATFORMS[config.platform],
        capability=capability,
        features=features,
        cuda_version=cuda_version,
        image_cuda=release.image_cuda.version,
        model_architecture=config.model_architecture,
        kv_heads=config.kv_heads,
        q_heads=config.q_heads,
        qk_nope_head_dim=config.qk_nope_head_dim,
        qk_rope_head_dim=config.qk_rope_head_dim,
        device=config.device,
        dp_attention=config.enable_dp_attention,
        deterministic=config.enable_deterministic_inference,
        quantization=config.quantization,
        disaggregation=config.disaggregation_mode,
        trust_remote_code=config.trust_remote_code,
        round_robin_balance=config.prefill_round_robin_balance,
        cuda_graph=not config.disable_cuda_graph,
        hybrid_swa_memory=not config.disable_hybrid_swa_memory,
        hierarchical_cache=config.enable_hierarchical_cache,
        model_type=config.model_type,
        checkpoint_quantization=config.checkpoint_quantization,
        remote_code=config.remote_code,
        mamba_strategy=config.mamba_scheduler_strategy,
        mamba_ssm_dtype=config.mamba_ssm_dtype,
        environment=tuple(sorted(config.environment)),
        packages=tuple(sorted(config.packages)),
        **_alone_fields(config),
    )
    parsed = Parsed(
        **fields,
        spec_mode=_MODES[config.speculative_attention_mode],
        draft_backend=config.speculative_draft_attention_backend,
        sub_backends=sub_backends(config),
        draft_architecture=config.draft_model_architecture,
        draft_arch=None
        if config.draft_attention_arch is None
        else _ARCHS[config.draft_attention_arch],
        release=release,
        version_source=version_source,
        unmodelled_release=unmodelled_release,
    )
    return _keyed(parsed)


_ACCEPTED: dict[int, tuple[ReleaseRules, set[tuple[str, type, object]]]] = {}
_SCALARS = frozenset({str, int, bool, type(None)})
_ACCEPTED_LIMIT = 10_000
"""The most values remembered per release, and releases remembered (a tool that doctors
releases makes new ones): a full memo starts again empty."""


def _accepted_values(rules: ReleaseRules) -> set[tuple[str, type, object]]:
    """The (field, type, value) of `_ALONE`'s fields that `rules` accepted before: a check reads
    only its value and the release, and a search copies the same few values hundreds of thousands of
    times (the consistency proof: five values in each of its 303,450 copies, 32 distinct ones in
    all). Keyed by the release's identity, kept with the release so that the id stays its own."""
    known = _ACCEPTED.get(id(rules))
    if known is None or known[0] is not rules:
        if len(_ACCEPTED) >= _ACCEPTED_LIMIT:
            _ACCEPTED.clear()
        known = _ACCEPTED[id(rules)] = (rules, set())
    return known[1]


def reparsed(config: AttentionConfig, base: Parsed, changes: dict[str, Any]) -> Parsed | None:
    """`parse(config)` for a copy of a valid config whose changes are all `_ALONE`'s fields
    of plain values and whose release is the same: only the changed values are checked.
    None where that does not hold or a changed value has a problem (`parse` then reports
    every problem, in its order). The fix search's candidates are such copies, about
    100,000 for one part of the finder's data: checking only what changed took 14% off
    that part's CPU time."""
    if not _ALONE.keys() >= changes.keys():
        return None
    if not _PLAIN_TYPES.issuperset(map(type, changes.values())):
        return None
    try:
        release = chosen_release(config.sglang_version)
    except UnknownReleaseError:
        return None
    if release[0] is not base.release:  # the other names were checked against base.release
        return None
    rules = release[0]
    accepted = _accepted_values(rules)
    for name, value in changes.items():
        # By type too (True == 1, but True is no page size), and only a scalar: a tuple may
        # hold what cannot be hashed, and no field checked alone accepts one.
        key = (name, type(value), value) if type(value) in _SCALARS else None
        if key is not None and key in accepted:
            continue
        problems: list[InputProblem] = []
        _ALONE[name](problems, config, rules)
        if problems:
            return None
        if key is not None and len(accepted) < _ACCEPTED_LIMIT:
            accepted.add(key)
    # The base's canonical form, with what the changed fields set: every other field is
    # the base's (the same values, checked when the base was built).
    _, version_source, unmodelled_release = release
    copy = msgspec.structs.replace(
        base,
        **_alone_fields(config),
        version_source=version_source,
        unmodelled_release=unmodelled_release,
    )
    return _keyed(copy)
