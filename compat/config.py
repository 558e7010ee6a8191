"""A launch configuration as SGLang's flags spell it, validated once on construction."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compat.release_schema import ReleaseRules
from compat.releases import (
    NEWEST,
    RELEASES,
    UnknownReleaseError,
    installed_sglang_version,
    release_rules,
    releases_accepting,
)
from compat.vocab import (
    KV_DTYPE_SPELLINGS,
    Arch,
    ComputeCapability,
    KvDtype,
    ModelFeature,
    Platform,
    SpeculativeAttentionMode,
)

# SGLang's --speculative-algorithm choices at the baseline (case-insensitive there too).
SPECULATIVE_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
# The algorithm assumed where only a topk is chosen (the finder, `compat matrix`).
DEFAULT_SPECULATIVE_ALGORITHM = SPECULATIVE_ALGORITHMS[0]


def speculation_with_topk(topk: int) -> dict[str, Any]:
    """The flags of a launch that only chooses a topk (the finder, `compat matrix`).

    SGLang takes `--speculative-eagle-topk` only with `--speculative-num-steps` (and the
    number of draft tokens), so a topk comes with the values of its own auto-choice.
    """
    steps = 3
    return {
        "speculative_algorithm": DEFAULT_SPECULATIVE_ALGORITHM,
        "speculative_eagle_topk": topk,
        "speculative_num_steps": steps,
        "speculative_num_draft_tokens": steps + 1 if topk == 1 else 2 * topk,
    }


_ARCHS = {arch.value: arch for arch in Arch}
_PLATFORMS = {platform.value: platform for platform in Platform}
_MODES = {mode.value: mode for mode in SpeculativeAttentionMode}


@dataclass(frozen=True)
class InputProblem:
    """One invalid field: which flag, the value given, and what would have been valid."""

    flag: str
    value: object
    reason: str
    choices: tuple[str, ...] = ()
    did_you_mean: str | None = None

    def __str__(self) -> str:
        text = f"{self.flag}: {self.reason}"
        if self.did_you_mean is not None:
            text += f"; did you mean {self.did_you_mean}?"
        if self.choices:
            text += f" (valid choices: {', '.join(self.choices)})"
        return text


class InvalidConfigError(ValueError):
    """The configuration cannot be checked: a value is of the wrong type or not a known choice."""

    def __init__(self, problems: Iterable[InputProblem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"invalid attention configuration:\n{lines}")


@dataclass(frozen=True, slots=True)
class Parsed:
    """The validated, canonical form of an AttentionConfig that the guard reads."""

    arch: Arch
    platform: Platform
    capability: ComputeCapability | None
    backend: str | None
    prefill: str | None
    decode: str | None
    kv_dtype: KvDtype
    page_size: int | None
    speculative: bool
    topk: int | None
    spec_mode: SpeculativeAttentionMode
    features: frozenset[ModelFeature]
    cuda_version: tuple[int, int] | None
    kv_spelling: str
    """`--kv-cache-dtype` as written: SGLang's string checks tell `bf16` from `bfloat16`."""
    algorithm: str | None
    steps: int | None
    draft_tokens: int | None
    model_architecture: str | None
    kv_heads: int | None
    release: ReleaseRules
    version_source: str


@dataclass(frozen=True)
class AttentionConfig:
    """The flags that decide attention compatibility, named as SGLang names them."""

    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    kv_cache_dtype: str = "auto"
    page_size: int | None = None
    speculative_algorithm: str | None = None
    speculative_eagle_topk: int | None = None
    speculative_attention_mode: str = "prefill"
    attention_arch: str = "mha"
    platform: str = "cuda"
    compute_capability: tuple[int, int] | str | ComputeCapability | None = None
    sliding_window: bool = False
    multimodal: bool = False
    encoder_decoder: bool = False
    dual_chunk_attention: bool = False
    sparse_attention: bool = False
    cuda_version: tuple[int, int] | None = None
    speculative_num_steps: int | None = None
    speculative_num_draft_tokens: int | None = None
    model_architecture: str | None = None
    """The model's `architectures[0]` (e.g. `DeepseekV3ForCausalLM`): SGLang's defaults read it."""
    kv_heads: int | None = None
    """KV heads per tensor-parallel rank (SGLang's ROCm MLA default reads it)."""
    sglang_version: str | None = None
    """The SGLang release to predict; default: the installed one, else the newest modelled."""
    parsed: Parsed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parsed", _parse(self))

    @classmethod
    def from_model_config(cls, path: str | os.PathLike[str], **flags: Any) -> AttentionConfig:
        """Derive the model's facts from a Hugging Face `config.json` (or its directory).

        Explicit keyword arguments override what the config implies.
        """
        from compat.model_config import load_model_facts

        facts = load_model_facts(path)
        return cls(**{**facts.config_fields(), **flags})


_BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
# The AttentionConfig fields that are SGLang launch flags, in the order SGLang lists them.
FLAG_FIELDS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "kv_cache_dtype",
    "page_size",
    "speculative_algorithm",
    "speculative_eagle_topk",
    "speculative_num_steps",
    "speculative_num_draft_tokens",
    "speculative_attention_mode",
)


def flag_of(field_name: str) -> str:
    return "--" + field_name.replace("_", "-")


def _choice(
    problems: list[InputProblem], flag: str, value: object, choices: Iterable[str]
) -> str | None:
    """Return `value` when it is one of `choices`; otherwise record why not."""
    options = tuple(choices)
    if isinstance(value, str) and value in options:
        return value
    if not isinstance(value, str):
        # wrong types are named with their type
        problems.append(
            InputProblem(
                flag, value, f"expected a string, got {type(value).__name__} {value!r}", options
            )
        )
        return None
    lowered = {option.lower(): option for option in options}
    import difflib  # only on the error path: it costs start-up time

    typed = value.strip().lower()
    # A prefix of several choices (`fp8` for fp8_e5m2 and fp8_e4m3) names them all.
    starting = [lowered[option] for option in lowered if option.startswith(typed)] if typed else []
    close = difflib.get_close_matches(typed, list(lowered), n=1, cutoff=0.6)
    suggestion = lowered[close[0]] if close else None
    if len(starting) > 1:
        suggestion = " or ".join(starting)
    problems.append(InputProblem(flag, value, f"unknown value {value!r}", options, suggestion))
    return None


def _release_choice(
    problems: list[InputProblem], flag: str, value: object, rules: ReleaseRules, attribute: str
) -> None:
    """`value` must be one of the release's own choices; say which releases take it if not."""
    choices: tuple[str, ...] = getattr(rules, attribute)
    if isinstance(value, str) and value in choices:
        return
    accepting = releases_accepting(attribute, value) if isinstance(value, str) else ()
    if not accepting:
        _choice(problems, flag, value, choices)
        return
    order = list(RELEASES)
    here = order.index(rules.release)
    later = [r for r in accepting if order.index(r) > here]
    if later:
        reason = f"{value!r} is not in SGLang {rules.release}: added in {later[0]}"
    else:
        removed = order[order.index(accepting[-1]) + 1]
        reason = f"{value!r} was removed in SGLang {removed} (this is {rules.release})"
        instead = rules.replacements.get(str(value))
        if instead:
            reason += f"; use {' or '.join(instead)}"
    problems.append(InputProblem(flag, value, reason, choices))


def _positive_int(problems: list[InputProblem], flag: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(InputProblem(flag, value, f"expected a positive integer, got {value!r}"))
        return None
    if value < 1:
        problems.append(InputProblem(flag, value, f"must be a positive integer, got {value}"))
        return None
    return value


def _remember(capability: ComputeCapability) -> ComputeCapability:
    """Cache valid (major, minor) tuples so the fast path can reuse their parsed form."""
    _CAPABILITIES[(capability.major, capability.minor)] = capability
    return capability


def _capability(problems: list[InputProblem], value: object) -> ComputeCapability | None:
    flag = "--compute-capability"
    if value is None:
        return None
    if isinstance(value, ComputeCapability):
        return _plausible(problems, value, value)
    if isinstance(value, str):
        try:
            return _plausible(problems, ComputeCapability.parse(value), value)
        except ValueError as error:
            problems.append(InputProblem(flag, value, str(error)))
            return None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(part, int) and not isinstance(part, bool) for part in value)
    ):
        plausible = _plausible(problems, ComputeCapability(value[0], value[1]), value)
        return None if plausible is None else _remember(plausible)
    problems.append(
        InputProblem(flag, value, f"expected (major, minor), '10.0' or 'sm100', got {value!r}")
    )
    return None


def _plausible(
    problems: list[InputProblem], capability: ComputeCapability, given: object
) -> ComputeCapability | None:
    major, minor = capability.major, capability.minor
    if type(major) is int and type(minor) is int and 1 <= major <= 99 and 0 <= minor <= 9:
        return capability
    problems.append(
        InputProblem("--compute-capability", given, f"{given!r} is not a CUDA compute capability")
    )
    return None


def _cuda_version(problems: list[InputProblem], value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(
            isinstance(part, int) and not isinstance(part, bool) and part >= 0 for part in value
        )
    ):
        return (value[0], value[1])
    problems.append(InputProblem("cuda_version", value, f"expected (major, minor), got {value!r}"))
    return None


_CAPABILITIES: dict[tuple[int, int], ComputeCapability] = {}
_ALGORITHMS = frozenset(SPECULATIVE_ALGORITHMS)
_NO_FEATURES: frozenset[ModelFeature] = frozenset()


def _parse(config: AttentionConfig) -> Parsed:
    """The canonical form of a valid config; every problem at once for an invalid one."""
    try:
        parsed = _parse_common(config)
    except TypeError:  # an unhashable value where a name belongs: let the slow path say so
        parsed = None
    return parsed if parsed is not None else _parse_reporting(config)


def _is_name(value: object, choices: frozenset[str] | dict[str, Any]) -> bool:
    return type(value) is str and value in choices


def _parse_common(config: AttentionConfig) -> Parsed | None:
    """The fast path for well-formed input: plain lookups, no messages. None: take the slow one."""
    version = config.sglang_version
    if version is not None and not (type(version) is str and version in RELEASES):
        return None
    try:
        release, source = _release(version)
    except UnknownReleaseError:
        return None
    main, prefill, decode = (
        config.attention_backend,
        config.prefill_attention_backend,
        config.decode_attention_backend,
    )
    backends = release.backend_set
    for name in (main, prefill, decode):
        if name is not None and not _is_name(name, backends):
            return None
    dtype, arch, platform, mode = (
        config.kv_cache_dtype,
        config.attention_arch,
        config.platform,
        config.speculative_attention_mode,
    )
    if not (
        _is_name(dtype, release.kv_set)
        and _is_name(arch, _ARCHS)
        and _is_name(platform, _PLATFORMS)
        and _is_name(mode, _MODES)
    ):
        return None
    algorithm = config.speculative_algorithm
    if algorithm is not None and not (
        type(algorithm) is str and algorithm.upper() in release.algorithm_set
    ):
        return None
    for number in (
        config.page_size,
        config.speculative_eagle_topk,
        config.speculative_num_steps,
        config.speculative_num_draft_tokens,
        config.kv_heads,
    ):
        if number is not None and not (type(number) is int and number >= 1):
            return None
    architecture = config.model_architecture
    if architecture is not None and not (type(architecture) is str and architecture.isidentifier()):
        return None
    version = config.sglang_version
    if version is not None and not (type(version) is str and version in RELEASES):
        return None
    capability = config.compute_capability
    if type(capability) is tuple:
        if len(capability) != 2 or type(capability[0]) is not int or type(capability[1]) is not int:
            return None
        known = _CAPABILITIES.get(capability)
        if known is None:
            return None
        capability = known
    elif capability is not None:
        return None  # strings and ComputeCapability objects go through full validation
    if config.cuda_version is not None:
        return None
    features = _NO_FEATURES
    flags = (
        config.sliding_window,
        config.multimodal,
        config.encoder_decoder,
        config.dual_chunk_attention,
        config.sparse_attention,
    )
    if any(type(flag) is not bool for flag in flags):
        return None
    if any(flags):
        features = frozenset(f for f, on in zip(_FEATURE_ORDER, flags, strict=True) if on)
    try:
        release, source = _release(config.sglang_version)
    except UnknownReleaseError:
        return None
    return _assemble(config, capability, None, features, release, source)


# Names the release to predict when `sglang_version` is not given (before the installed one).
VERSION_VARIABLE = "COMPAT_SGLANG_VERSION"


def _release(version: str | None) -> tuple[ReleaseRules, str]:
    """The rules to predict with and where the release came from; raises UnknownReleaseError."""
    if version is not None:
        return release_rules(version), "given"
    chosen = os.environ.get(VERSION_VARIABLE)
    if chosen:
        return release_rules(chosen), VERSION_VARIABLE
    installed = installed_sglang_version()
    if installed is not None:
        return release_rules(installed), "installed"
    return RELEASES[NEWEST], "newest modelled"


def _assemble(
    config: AttentionConfig,
    capability: ComputeCapability | None,
    cuda_version: tuple[int, int] | None,
    features: frozenset[ModelFeature],
    release: ReleaseRules,
    version_source: str,
) -> Parsed:
    """The canonical form of a config whose names have all been validated."""
    algorithm = config.speculative_algorithm
    return Parsed(
        arch=_ARCHS[config.attention_arch],
        platform=_PLATFORMS[config.platform],
        capability=capability,
        backend=config.attention_backend,
        prefill=config.prefill_attention_backend,
        decode=config.decode_attention_backend,
        kv_dtype=KV_DTYPE_SPELLINGS[config.kv_cache_dtype],
        page_size=config.page_size,
        speculative=config.speculative_algorithm is not None,
        topk=config.speculative_eagle_topk,
        spec_mode=_MODES[config.speculative_attention_mode],
        features=features,
        cuda_version=cuda_version,
        kv_spelling=config.kv_cache_dtype,
        algorithm=None if algorithm is None else algorithm.upper(),
        steps=config.speculative_num_steps,
        draft_tokens=config.speculative_num_draft_tokens,
        model_architecture=config.model_architecture,
        kv_heads=config.kv_heads,
        release=release,
        version_source=version_source,
    )


def _parse_reporting(config: AttentionConfig) -> Parsed:
    """The thorough path: validate every field and collect every problem."""
    _plain_values(config)
    problems: list[InputProblem] = []
    release = None
    version = config.sglang_version
    if version is not None and not isinstance(version, str):
        problems.append(
            InputProblem("--sglang-version", version, f"expected a string, got {version!r}")
        )
    else:
        try:
            release = _release(version)
        except UnknownReleaseError as error:
            problems.append(
                InputProblem("--sglang-version", version, str(error).split(";")[0], tuple(RELEASES))
            )
    rules = release[0] if release is not None else RELEASES[NEWEST]
    for field_name in (
        "attention_backend",
        "prefill_attention_backend",
        "decode_attention_backend",
    ):
        value = getattr(config, field_name)
        if value is not None:
            _release_choice(problems, flag_of(field_name), value, rules, "backend_choices")
    _release_choice(problems, "--kv-cache-dtype", config.kv_cache_dtype, rules, "kv_choices")
    _choice(problems, "--attention-arch", config.attention_arch, _ARCHS)
    _choice(problems, "--platform", config.platform, _PLATFORMS)
    _choice(problems, "--speculative-attention-mode", config.speculative_attention_mode, _MODES)
    algorithm = config.speculative_algorithm
    if algorithm is not None:
        upper = algorithm.upper() if isinstance(algorithm, str) else algorithm
        _release_choice(problems, "--speculative-algorithm", upper, rules, "algorithm_choices")
    _positive_int(problems, "--page-size", config.page_size)
    _positive_int(problems, "--speculative-eagle-topk", config.speculative_eagle_topk)
    _positive_int(problems, "--speculative-num-steps", config.speculative_num_steps)
    _positive_int(problems, "--speculative-num-draft-tokens", config.speculative_num_draft_tokens)
    _positive_int(problems, "--kv-heads", config.kv_heads)
    architecture = config.model_architecture
    if architecture is not None and not (
        isinstance(architecture, str) and architecture.isidentifier()
    ):
        problems.append(
            InputProblem(
                "--model-architecture",
                architecture,
                f"expected a class name such as LlamaForCausalLM, got {architecture!r}",
            )
        )
    capability = _capability(problems, config.compute_capability)
    cuda_version = _cuda_version(problems, config.cuda_version)
    features = set()
    for feature, field_name in _FEATURE_FIELDS:
        value = getattr(config, field_name)
        if not isinstance(value, bool):
            problems.append(
                InputProblem(flag_of(field_name), value, f"expected True or False, got {value!r}")
            )
        elif value:
            features.add(feature)
    if problems:
        raise InvalidConfigError(problems)
    assert release is not None
    return _assemble(config, capability, cuda_version, frozenset(features), *release)


def _plain_values(config: AttentionConfig) -> None:
    """Store str and int subclasses (their own hash, eq, upper) as the plain values they hold."""
    for name, value in vars(config).items():
        if isinstance(value, str) and type(value) is not str:
            object.__setattr__(config, name, str.__str__(value))
        elif isinstance(value, int) and not isinstance(value, bool) and type(value) is not int:
            object.__setattr__(config, name, int.__int__(value))


_FEATURE_FIELDS = (
    (ModelFeature.SLIDING_WINDOW, "sliding_window"),
    (ModelFeature.MULTIMODAL, "multimodal"),
    (ModelFeature.ENCODER_DECODER, "encoder_decoder"),
    (ModelFeature.DUAL_CHUNK, "dual_chunk_attention"),
    (ModelFeature.SPARSE_DSA, "sparse_attention"),
)
_FEATURE_ORDER = tuple(feature for feature, _ in _FEATURE_FIELDS)
