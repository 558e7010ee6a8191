"""What SGLang's own start-up code does with a launch, replayed from the release's rules.

SGLang resolves its attention flags in `ServerArgs.__post_init__` before any weight loads:
platform hooks, model-specific overrides, the default backend, page-size snaps, dtype
fallbacks, the KV4 check and the speculative-decoding handler, in that order, each reading
the fields the previous one wrote. This module replays that order over a release's rules
(`compat.releases`), field for field, so that the guard can say both what SGLang will run
and whether it refuses to start. The conformance suite proves the replay against the
release's own code.

The steps live by job: `prelude` (names, platforms, models, NVFP4), `backend` (the backend
check and the default decision), `kv` (the KV dtype checks) and `spec` (speculative
decoding); what they share is in `state`. The replay returns facts (`compat.engine.events`);
the guard words them.
"""

from __future__ import annotations

import msgspec

from compat.engine.build import BuildFailure, build_after_startup
from compat.engine.environment import default_page_size
from compat.engine.events import StartupEvent
from compat.engine.kernels import KernelFailure, predict_kernels
from compat.engine.launch import Launch
from compat.engine.rules import DefaultMove, ReleaseRules
from compat.engine.shapes import ShapeFailure, predict_shapes
from compat.engine.startup.backend import handle_attention_backend_compatibility
from compat.engine.startup.kv import handle_kv4_compatibility, handle_kv_dtype_gpu
from compat.engine.startup.models import (
    handle_model_loading,
    handle_model_rules,
    handle_quantization,
)
from compat.engine.startup.prelude import (
    handle_deprecated_args,
    handle_nvfp4_prefill_backends,
    handle_platform_backends,
)
from compat.engine.startup.serving import handle_data_parallelism, handle_deterministic_inference
from compat.engine.startup.spec import handle_speculative_decoding
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.engine.startup.sub_backends import handle_sub_backends
from compat.engine.sub_backends import NO_SUB_BACKENDS
from compat.engine.verify import (
    DraftWindowGap,
    VerifyFailure,
    draft_extend_backend,
    predict_verify,
)
from compat.vocab.terms import Severity


class Startup(msgspec.Struct, frozen=True):
    """SGLang's start-up outcome: the values it runs with and what it did on the way."""

    fields: ServerArgsFields
    """The ServerArgs fields as the last step left them (no step runs after)."""
    events: tuple[StartupEvent, ...]
    default_backend: str | None
    """The backend SGLang's default decision chose, when it had to choose one."""
    model: str
    """The model architecture the replay read (the launch's, else the release's usual one)."""
    default_by: str | None = None
    """Who chose the default when not the default decision: the model's own branch, the
    device, or deterministic inference."""
    build: BuildFailure | None = None
    """Where `ModelRunner` then fails building the backends, after the weights load (None:
    the registry's checks pass, or start-up refuses first)."""
    default_move: DefaultMove | None = None
    """The default decision's usual branch for this machine and model, when a launch
    condition turned it down (say why the default moved)."""
    kernel: KernelFailure | None = None
    """Where the first forward pass then fails in a kernel the release pins (None: every
    kernel runs on this GPU, or start-up or the build fails first)."""
    verify: VerifyFailure | None = None
    """Where speculative decoding's first verify pass then fails in the target's backend
    (None: it runs, or something fails first)."""
    shape: ShapeFailure | None = None
    """Where the first prefill then fails compiling a kernel over the model's shapes (None:
    it compiles, or something fails first)."""

    @property
    def refused(self) -> bool:
        return any(e.severity is Severity.ERROR for e in self.events)

    @property
    def page_size(self) -> int:
        """The page size SGLang runs (`_handle_page_size` has filled an unset one)."""
        assert self.fields.page_size is not None
        return self.fields.page_size


def replay(launch: Launch, rules: ReleaseRules) -> Startup:
    """Replay the release's start-up resolution over `launch`; never raises for a refusal.

    SGLang stops at its first refusal; the replay goes on, so that every reason is reported
    and the documented checks still see the values SGLang was about to run with.
    """
    log = StartupLog()
    model = launch.model_architecture or rules.assumed_architecture(launch.arch)
    f = ServerArgsFields.of(launch)
    handle_deprecated_args(rules, f, log)
    model = handle_model_loading(launch, rules, model, log)
    handle_quantization(launch, rules, log)
    chosen = handle_platform_backends(launch, f)
    # Who chose `chosen`, when not the default decision: the device, unless a later step
    # does (the device's words are written at the end: most launches never need them).
    by: str | None = None
    by_device = True
    if (own := handle_model_rules(launch, rules, model, f, log)) is not None:
        chosen, by, by_device = own, f"{model}'s own branch", False
    deterministic = rules.deterministic.picks_default
    if deterministic and (own := handle_deterministic_inference(launch, rules, model, f, log)):
        chosen, by, by_device = own, "deterministic inference", False
    handle_nvfp4_prefill_backends(launch, rules, f, log)
    default = handle_attention_backend_compatibility(launch, rules, model, f, log)
    if default is not None or chosen is None:
        chosen, by, by_device = default, None, False
    handle_kv_dtype_gpu(launch, rules, f, log)
    handle_kv4_compatibility(launch, rules, f, log)
    if launch.sub_backends is not NO_SUB_BACKENDS:  # most launches set none of them
        handle_sub_backends(launch, rules, f, log)
    if f.page_size is None:  # `_handle_page_size`; only a variable moves it from 1
        f.page_size = default_page_size(launch, rules.release) if launch.environment else 1
    handle_data_parallelism(launch, rules, f, log)
    handle_speculative_decoding(launch, rules, model, f, log)
    if not deterministic:
        handle_deterministic_inference(launch, rules, model, f, log)
    if by_device:
        by = f"--device {launch.on_device}"
    events = tuple(log.events)
    build: BuildFailure | None = None
    kernel: KernelFailure | None = None
    verify: VerifyFailure | None = None
    shape: ShapeFailure | None = None
    if not any(event.severity is Severity.ERROR for event in events):
        drafted = _drafted(launch, f)
        build = build_after_startup(rules.build, drafted, f.phases, f.algorithm, f.steps)
        if build is None:
            kernel = predict_kernels(rules.kernels, launch, f.phases)
        if build is None and kernel is None:
            draft_extend = draft_extend_backend(rules.build, drafted, f.phases, f.algorithm)
            verify = predict_verify(rules.verify, drafted, f.phases, f.algorithm, model,
                                    draft_extend)  # fmt: skip
            # The draft's capture comes before the warm-up's prefill, its verify after.
            if verify is None or not isinstance(verify.gap, DraftWindowGap):
                prefill = f.phases[0] or f.phases[1]
                shape = predict_shapes(rules.shapes, launch, prefill, model)
                verify = None if shape is not None else verify
    move = log.default_move if default is not None else None
    return Startup(f, events, chosen, model, by, build, move, kernel, verify, shape)


def _drafted(launch: Launch, f: ServerArgsFields) -> Launch:
    """The launch with the draft's backend start-up left (a deprecated name renamed, the
    native NVFP4 cache's own)."""
    if f.draft_backend == launch.draft_backend:
        return launch
    return msgspec.structs.replace(launch, draft_backend=f.draft_backend)
