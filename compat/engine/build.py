"""What a release's attention registry checks when `ModelRunner` builds the backends.

After start-up, and after the weights load, `ModelRunner` builds each phase's backend
through `sglang/srt/layers/attention/attention_registry.py`: the backend's factory
(`ATTENTION_BACKENDS[name](runner)`), then `attn_backend_wrapper`. Each factory may raise on
the model (MLA or MHA, encoder-decoder), the GPU (its compute capability) or speculative
decoding; the wrapper refuses, for hybrid GDN models on Blackwell, every backend outside an
allow-list (one for SM120-class parts, one for the others). These checks are data per
release (`compat.releases.build`), each with the registry line that raises; `predict_build`
replays them in SGLang's order and returns the first that fails, as SGLang raises it. The
conformance harness runs each release's own registry over a grid and compares.

Of the backends' own constructors, only the checks of the model family (MiniCPM's sparse
backends) and of the GPU (hpc_ops) are here; not their kernel packages, page sizes, KV
dtypes or head dimensions. The checks SGLang makes of the sub-backend flags as it builds
the parts that read them (the vision encoder, the DSA backend) are `compat.engine.sub_build`,
replayed here in their place.

With speculative decoding, the draft worker builds the draft model's backends after the
target's. Its model runner first builds its own through the registry, for the draft model
(whose architecture may not be the target's: an EAGLE3 draft is a Llama-architecture MHA
model even for an MLA target): `--speculative-draft-attention-backend` where set, else the
target's backends. Then the EAGLE worker's factory (`DraftBackendFactory` in
`sglang/srt/speculative/draft_utils.py`) builds a multi-step decode backend (not for one
step), then the draft-extend one, each looked up in the factory's own map of backends that
have a draft variant: the flag where set, else the target's decode and prefill backend.
From 0.5.20 a branch ahead of each map builds a QSA model's draft (the EAGLE workers hand
the factory `parse_qsa_profile` of the draft runner's config) on QSA's own backends, whatever
the backend; for any other model `qsa` is a backend outside the map. `DraftRules` holds, per
release, that map, the lines that raise and the model's own path; `predict_draft_worker`
replays the draft after the target. The flag exists in every release from 0.5.7, free text
(start-up checks no choices), so any backend name reaches the build.
"""

from __future__ import annotations

import msgspec

from compat.engine.launch import Launch
from compat.engine.predicates import GpuGate, gpu_gate_holds
from compat.engine.sub_build import SubBuildCheck, dsa_failure, vision_failure
from compat.vocab.terms import Arch, ModelFeature, Platform, SpeculativeAttentionMode, Term

REGISTRY_FILE = "sglang/srt/layers/attention/attention_registry.py"
WRAPPER = "attn_backend_wrapper"
DRAFT_FILE = "sglang/srt/speculative/draft_utils.py"
DRAFT_LOOKUP = "_create_backend"
"""The factory's function that raises for a backend without a draft variant."""
# The algorithms whose worker (the EAGLE worker and the standalone one, its subclass) builds
# the draft's backends through `DraftBackendFactory`; start-up turns NEXTN into EAGLE.
DRAFT_ALGORITHMS = frozenset({"EAGLE", "EAGLE3", "STANDALONE", "NEXTN"})


# The platforms whose torch answers `torch.cuda.get_device_capability()`.
_TORCH_CUDA = frozenset({Platform.CUDA, Platform.ROCM})


BUILD_RULE_PREFIX = "build-"
"""The rule ids of the guard's findings for a failing backend build: the prefix, then the
check (`BuildCheck.rule`)."""


class BuildCheck(Term):
    """What one check of a backend factory refuses."""

    NEEDS_MLA = "needs-mla"
    NEEDS_MHA = "needs-mha"
    NO_ENCODER_DECODER = "no-encoder-decoder"
    NO_SPECULATIVE = "no-speculative"
    GPU = "gpu"
    MODEL_FAMILY = "model-family"
    HYBRID_GDN_BLACKWELL = "hybrid-gdn-blackwell"
    NO_DRAFT_VARIANT = "no-draft-variant"
    SUB_BACKEND = "sub-backend"
    """A sub-backend flag's value, refused as the part that reads it is built."""

    def __init__(self, value: str) -> None:
        self.rule = f"{BUILD_RULE_PREFIX}{value}"
        """The id of the guard's finding."""


class FactoryCheck(msgspec.Struct, frozen=True):
    """One check a backend's factory (or, where `file` says so, its class's constructor,
    which the factory calls) makes, and the line that raises."""

    backend: str
    check: BuildCheck
    line: int
    mha_majors: frozenset[int] = frozenset()
    """GPU: the CUDA compute-capability majors the factory accepts for an MHA model."""
    mla_majors: frozenset[int] = frozenset()
    """GPU: the majors it accepts for an MLA model."""
    function: str = ""
    """The factory's name, when not `create_<backend>_backend`."""
    no_gpu_line: int = 0
    """GPU: the line that raises first on a machine without a CUDA device, where the factory
    asks torch for the capability itself (0: `line`, where SGLang's own probe answers None)."""
    model_types: frozenset[str] = frozenset()
    """MODEL_FAMILY: the config types the backend is built for."""
    file: str = REGISTRY_FILE
    """Where the check is: the registry, or the backend's own module (its constructor)."""

    @property
    def in_constructor(self) -> bool:
        return self.file != REGISTRY_FILE

    def __post_init__(self) -> None:
        if not self.function:
            msgspec.structs.force_setattr(self, "function", f"create_{self.backend}_backend")

    def fails(self, launch: Launch, speculative: bool) -> bool:
        check = self.check
        if check is BuildCheck.NEEDS_MLA:
            return launch.arch is not Arch.MLA
        if check is BuildCheck.NEEDS_MHA:
            return launch.arch is Arch.MLA
        if check is BuildCheck.NO_ENCODER_DECODER:
            return ModelFeature.ENCODER_DECODER in launch.features
        if check is BuildCheck.NO_SPECULATIVE:
            return speculative
        if check is BuildCheck.MODEL_FAMILY:
            return launch.model_type not in self.model_types
        # GPU: `get_device_capability()`. ROCm's torch reports its gfx9 parts (MI300X 9.4,
        # MI355X 9.5) as 9.x, which passes; off CUDA and ROCm it answers (None, None), which
        # fails. An unknown CUDA capability is not held against the launch.
        if launch.platform is Platform.ROCM:
            return False
        if launch.platform is not Platform.CUDA:
            return True
        capability = launch.capability
        if capability is None:
            return False
        majors = self.mla_majors if launch.arch is Arch.MLA else self.mha_majors
        return capability.major not in majors


class HybridGdnCheck(msgspec.Struct, frozen=True):
    """`attn_backend_wrapper` on a hybrid GDN model: on Blackwell, an allow-list per class."""

    line: int
    model_types: frozenset[str]
    """The config types its `hybrid_gdn_config` answers for."""
    blackwell: GpuGate
    """`is_blackwell()`."""
    allowed: frozenset[str]
    """The backends allowed on Blackwell (on its SM100-class parts when `sm120` is set)."""
    sm120: GpuGate | None = None
    """The SM120-class test that selects `sm120_allowed` (None: one list for all)."""
    sm120_allowed: frozenset[str] = frozenset()

    def allowed_on(self, launch: Launch) -> frozenset[str] | None:
        """The allow-list on this machine; None where the wrapper checks nothing."""
        if launch.model_type not in self.model_types or not gpu_gate_holds(self.blackwell, launch):
            return None
        if self.sm120 is not None and gpu_gate_holds(self.sm120, launch):
            return self.sm120_allowed
        return self.allowed


class DraftRaise(msgspec.Struct, frozen=True):
    """A line of the draft factory and its function (a builder's raise, a model's path)."""

    line: int
    function: str


class ModelDraftPath(msgspec.Struct, frozen=True):
    """The factory's branch ahead of its maps (`if self.qsa_profile is not None:`): for a
    model with the feature it builds the draft on its own backends, whatever the backend."""

    feature: ModelFeature
    """What the EAGLE worker reads of the draft runner's config to take the branch."""
    backend: str
    """The name the factory stamps on what it builds (`_stamp_qsa`)."""
    decode: DraftRaise
    """The branch in `create_decode_backend` (after its one-step return) and its builder."""
    extend: DraftRaise
    """The branch in `create_draft_extend_backend` and its builder."""


class DraftRules(msgspec.Struct, frozen=True):
    """One release's `DraftBackendFactory`: the backends with a draft variant and where it
    raises otherwise."""

    line: int
    """`_create_backend`'s `raise ValueError` for a backend outside the map."""
    backends: frozenset[str]
    """The keys of its backend map (the decode and the draft-extend maps are the same)."""
    mla_decode: dict[str, DraftRaise] = msgspec.field(default_factory=dict)
    """The multi-step decode builders that raise for a model without MLA."""
    mla_extend: dict[str, DraftRaise] = msgspec.field(default_factory=dict)
    """The draft-extend builders that raise for a model without MLA."""
    model_path: ModelDraftPath | None = None
    """The path a QSA model's draft takes ahead of the maps (None: the release has none)."""

    def own_path(self, launch: Launch) -> ModelDraftPath | None:
        """The model's own path where the draft's model (`launch`) takes it."""
        path = self.model_path
        return path if path is not None and path.feature in launch.features else None

    def failure(self, backend: str, launch: Launch, decode: bool) -> BuildFailure | None:
        """Where building the draft's decode (or draft-extend) backend on `backend` fails."""
        if self.own_path(launch) is not None:
            return None  # its builders' constructors are not modelled, as the map's are not
        if backend not in self.backends:
            return BuildFailure(backend, BuildCheck.NO_DRAFT_VARIANT, DRAFT_LOOKUP, self.line,
                                self.backends, file=DRAFT_FILE, draft=True)  # fmt: skip
        raises = (self.mla_decode if decode else self.mla_extend).get(backend)
        if raises is None or launch.arch is Arch.MLA:
            return None
        return BuildFailure(backend, BuildCheck.NEEDS_MLA, raises.function, raises.line,
                            file=DRAFT_FILE, draft=True)  # fmt: skip


class BuildRules(msgspec.Struct, frozen=True):
    """Every check of one release's registry, in its order, and its draft factory."""

    checks: tuple[FactoryCheck, ...] = ()
    hybrid_gdn: HybridGdnCheck | None = None
    draft: DraftRules | None = None
    sub_checks: tuple[SubBuildCheck, ...] = ()
    """The checks of the sub-backends (`compat.engine.sub_build`), in SGLang's order."""

    def for_backend(self, backend: str) -> tuple[FactoryCheck, ...]:
        return tuple(check for check in self.checks if check.backend == backend)


class BuildFailure(msgspec.Struct, frozen=True):
    """Where SGLang raises while it builds a backend."""

    backend: str
    check: BuildCheck
    function: str
    line: int
    allowed: frozenset[str] = frozenset()
    """The allow-list that refused it (the hybrid GDN wrapper)."""
    majors: frozenset[int] = frozenset()
    """The compute-capability majors the factory accepts for this model (GPU)."""
    model_types: frozenset[str] = frozenset()
    """The config types the backend is built for (MODEL_FAMILY)."""
    file: str = REGISTRY_FILE
    draft: bool = False
    """The draft model's build (its runner's registry build or `DraftBackendFactory`), not
    the target's."""
    own: bool = False
    """The draft's backend is `--speculative-draft-attention-backend`, not the target's."""
    sub: SubBuildCheck | None = None
    """SUB_BACKEND: the check of the sub-backend flag that fails."""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def build_after_startup(
    rules: BuildRules,
    launch: Launch,
    phases: tuple[str | None, str | None],
    algorithm: str | None,
    steps: int | None = None,
    constructors: bool = True,
) -> BuildFailure | None:
    """`predict_build` over what start-up resolved: the (prefill, decode) backends and the
    speculative algorithm, then, where that algorithm has a draft model,
    `predict_draft_worker` (`constructors`: as `predict_build`)."""
    prefill, decode = phases
    built = tuple(backend for backend in (decode, prefill) if backend is not None)
    if not built:
        return None
    # The model, its vision encoder included, is built before its attention backends; the
    # sub-backends' checks are the model's and the DSA backend's own (`constructors`).
    sub = vision_failure(rules.sub_checks, launch) if constructors else None
    if sub is not None:
        return _sub_failure(sub)
    failure = predict_build(rules, launch, built, algorithm is not None, constructors)
    if failure is None and constructors:
        sub = dsa_failure(rules.sub_checks, launch, built)
        if sub is not None:
            return _sub_failure(sub)
    if failure is None and algorithm in DRAFT_ALGORITHMS and rules.draft is not None:
        decode = decode or built[0]
        phases = (prefill or decode, decode)
        failure = predict_draft_worker(rules, launch, phases, steps, constructors)
    return failure


def _sub_failure(check: SubBuildCheck) -> BuildFailure:
    return BuildFailure(check.value, BuildCheck.SUB_BACKEND, check.function, check.line,
                        majors=check.majors, file=check.file, sub=check)  # fmt: skip


def draft_launch(launch: Launch) -> Launch:
    """The launch as the draft's model runner reads it: the draft model's architecture
    (`ModelRunner.use_mla_backend` of the draft runner; up to 0.5.15 the factory reads the
    process-wide `use_mla_backend`, which the draft runner, built last, sets to the same).
    Its other facts are the model's: an MTP draft is the target's own config (which is what
    the EAGLE workers read the QSA profile of), and a launch describes no other."""
    if launch.draft_arch is None or launch.draft_arch is launch.arch:
        return launch
    return msgspec.structs.replace(launch, arch=launch.draft_arch)


def predict_draft_worker(
    rules: BuildRules,
    launch: Launch,
    phases: tuple[str, str],
    steps: int | None,
    constructors: bool = True,
) -> BuildFailure | None:
    """The draft worker's build, after the target's: its model runner builds its backend
    through the registry (`--speculative-draft-attention-backend` alone, else the target's
    decode and prefill backends: `ModelRunner._get_attention_backend`, from 0.5.16
    `resolve_attention_backend_strs` in model_runner_components/attention_backend_setup.py),
    then the EAGLE worker's `DraftBackendFactory` builds the multi-step decode and
    draft-extend backends on the flag, else on the target's (`_create_backend`)."""
    assert rules.draft is not None
    draft = draft_launch(launch)
    own = launch.draft_backend
    prefill, decode = phases
    # The draft runner builds what the target built, for the same model, unless the flag or
    # a model of its own moves it: only then can its registry build fail where the
    # target's passed.
    if own is not None or draft is not launch:
        runner = (own,) if own is not None else (decode, prefill)
        failure = predict_build(rules, draft, runner, True, constructors)
        if failure is not None:
            return msgspec.structs.replace(failure, draft=True, own=own is not None)
    backends = draft_factory_backends(rules.draft, draft, phases)
    failure = predict_draft(rules.draft, draft, backends, steps)
    if failure is not None and own is not None:
        failure = msgspec.structs.replace(failure, own=True)
    return failure


def draft_factory_backends(
    rules: DraftRules, launch: Launch, phases: tuple[str, str]
) -> tuple[str, str]:
    """The (draft-extend, multi-step decode) backends `DraftBackendFactory` builds, given the
    target's (prefill, decode): a model's own path for both where the draft takes it; else
    what `_create_backend` looks up: the flag for both where it is set; else the target's
    prefill and decode backends, the draft-extend one on the decode backend under
    `--speculative-attention-mode decode`."""
    path = rules.own_path(launch)
    if path is not None:
        return (path.backend, path.backend)
    own = launch.draft_backend
    if own is not None:
        return (own, own)
    prefill, decode = phases
    if launch.spec_mode is SpeculativeAttentionMode.DECODE:
        return (decode, decode)
    return (prefill, decode)


def predict_draft(
    rules: DraftRules, launch: Launch, phases: tuple[str, str], steps: int | None
) -> BuildFailure | None:
    """The first failure of the draft worker's `DraftBackendFactory` over the (draft-extend,
    decode) backends: its multi-step decode backend (none for one step), then its
    draft-extend backend."""
    prefill, decode = phases
    if steps is None or steps > 1:
        failure = rules.failure(decode, launch, decode=True)
        if failure is not None:
            return failure
    return rules.failure(prefill, launch, decode=False)


def predict_build(
    rules: BuildRules,
    launch: Launch,
    backends: tuple[str, ...],
    speculative: bool,
    constructors: bool = True,
) -> BuildFailure | None:
    """The first check that fails as `ModelRunner` builds `backends` (each through its
    factory and then the wrapper), in the order given; None when the build passes them all.

    SGLang builds the decode backend first, then the prefill one when it differs
    (`ModelRunner._get_attention_backend`): pass them in that order. `constructors=False`
    leaves out the checks of the backends' constructors (what the registry alone does).
    """
    for backend in dict.fromkeys(backends):
        for check in rules.for_backend(backend):
            if not constructors and check.in_constructor:
                continue
            if check.fails(launch, speculative):
                majors = check.mla_majors if launch.arch is Arch.MLA else check.mha_majors
                line = check.line
                if check.no_gpu_line and launch.platform not in _TORCH_CUDA:
                    line = check.no_gpu_line
                return BuildFailure(backend, check.check, check.function, line, majors=majors,
                                    model_types=check.model_types, file=check.file)  # fmt: skip
        gdn = rules.hybrid_gdn
        allowed = None if gdn is None else gdn.allowed_on(launch)
        if gdn is not None and allowed is not None and not set(backends) <= allowed:
            refused = next(b for b in backends if b not in allowed)
            return BuildFailure(refused, BuildCheck.HYBRID_GDN_BLACKWELL, WRAPPER, gdn.line,
                                allowed)  # fmt: skip
    return None
