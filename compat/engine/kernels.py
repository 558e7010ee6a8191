"""Where the kernel packages a release pins fail on a GPU, after the backends build.

SGLang starts, loads the weights and builds the backends; the first forward pass (the
warm-up, CUDA graph capture, or the first batch) then runs kernels from the packages the
release pins (flash-attn-4's CuTe DSL kernels, DeepGEMM, ...). Some of those kernels accept
fewer GPUs than SGLang's own checks let through: an assert in the kernel package's Python,
or kernels built for some architectures only. Each such limit is data per release
(`compat.releases.kernels`, read from the wheels by `tools/kernel_limits.py`): the path of
SGLang's code that reaches the kernel (with its line), the compute capabilities on which
SGLang takes that path, and the capabilities the kernel accepts, keyed on the exact
capability (major, minor): a kernel may accept SM 10.0 and refuse SM 10.3.

`predict_kernels` replays them after the backend build and returns the first that fails.
"""

from __future__ import annotations

import msgspec

from compat.engine.launch import Launch
from compat.vocab.terms import Arch, ModelFeature, Platform, Term

KERNEL_RULE_PREFIX = "kernel-"
"""The rule ids of the guard's findings for a kernel that fails: the prefix, then the path
(`KernelPath.rule`)."""

Capability = tuple[int, int]
"""A CUDA compute capability as (major, minor): the limits compare exact capabilities."""

Image = tuple[str, int, str]
"""A kernel image a compiled extension carries (its fatbin's entry): the kind ("cubin" or
"ptx"), the architecture (major * 10 + minor) and the variant ("", "a" or "f")."""


def image_runs_on(image: Image, capability: Capability) -> bool:
    """Whether a GPU runs the image, by CUDA's compatibility rules: a cubin `sm_XY` (or the
    family's `sm_XYf`) on major X from minor Y on, an arch-specific `sm_XYa` on X.Y alone;
    plain PTX on every GPU from X.Y on (the driver compiles it), `a`/`f` PTX as its cubin."""
    kind, arch, variant = image
    major, minor = divmod(arch, 10)
    if variant == "a":
        return capability == (major, minor)
    if kind == "ptx" and not variant:
        return capability >= (major, minor)
    return capability[0] == major and capability[1] >= minor


def image_name(image: Image) -> str:
    """`sm_100a` for a cubin, `compute_90` for PTX."""
    kind, arch, variant = image
    return f"{'sm' if kind == 'cubin' else 'compute'}_{arch}{variant}"


class KernelPath(Term):
    """A path of SGLang's code into a kernel package."""

    VISION_FA4 = "vision-fa4"
    """The multimodal encoder's attention (`VisionAttention`) on its default backend fa4:
    flash-attn-4's CuTe DSL forward kernel."""
    DSA_PAGED_MQA = "dsa-paged-mqa"
    """The DSA backend's metadata for the indexer: DeepGEMM's paged MQA logits."""
    FA4_BACKEND = "fa4-backend"
    """The fa4 attention backend on an MHA model: flash-attn-4's CuTe DSL forward kernel
    (an MLA model's takes flash-attn-4's MLA kernel instead, not modelled)."""
    TRTLLM_MHA = "trtllm-mha"
    """The trtllm_mha backend's prefill on an MHA model: FlashInfer's trtllm-gen FMHA
    (`trtllm_batch_context_with_kv_cache`), whose runner checks the GPU."""
    TRTLLM_MLA = "trtllm-mla"
    """The trtllm_mla backend's prefill on an MLA model: FlashInfer's trtllm-gen FMHA
    (`trtllm_ragged_attention_deepseek`), whose runner checks the GPU."""
    DSA_TRTLLM = "dsa-trtllm"
    """The DSA backend's decode on its trtllm sub-backend (`--dsa-decode-backend trtllm`):
    FlashInfer's sparse MLA decode, named trtllm-gen, whose runner checks the GPU."""
    FLASHMLA = "flashmla"
    """The flashmla backend's decode: FlashMLA's schedule (`get_mla_metadata`) and split-KV
    MLA kernels, compiled for the GPUs its extension carries kernel images for."""

    def __init__(self, value: str) -> None:
        self.rule = f"{KERNEL_RULE_PREFIX}{value}"
        """The id of the guard's finding."""


class Site(msgspec.Struct, frozen=True):
    """Where a fact is: a package's file, the function and the line (0: compiled code,
    where `built` names what the package carries instead)."""

    package: str
    version: str
    file: str
    function: str
    line: int = 0
    built: tuple[str, ...] = ()
    """Compiled code: the architectures the wheel carries kernels for (and where)."""

    @property
    def where(self) -> str:
        at = f"{self.file}:{self.line}" if self.line else self.file
        return f"{self.package} {self.version}, {at} ({self.function})"

    @property
    def at(self) -> str:
        """`file:line`, as a finding cites a link of its chain."""
        return f"{self.file}:{self.line}"


def sglang_site(release: str, where: tuple[str, str, int]) -> Site:
    """A site of `release`'s sglang wheel from the generated data's (file, function, line)."""
    return Site("sglang", release, *where)


class KernelLimit(msgspec.Struct, frozen=True):
    """One kernel that fails on some GPUs, and the path of SGLang's code that reaches it."""

    path: KernelPath
    caller: Site
    """Where SGLang's code takes the path (sglang's own file and line)."""
    kernel: Site
    """The check (or the build) in the kernel package that refuses the GPU."""
    reaches: frozenset[Capability] | None
    """The capabilities on which SGLang takes the path (None: every CUDA GPU)."""
    accepted: frozenset[Capability] = frozenset()
    """The exact capabilities the kernel accepts."""
    accepted_majors: frozenset[int] = frozenset()
    """Majors the kernel accepts whatever the minor (a package that dispatches on the
    major alone, as DeepGEMM does)."""
    backends: frozenset[str] = frozenset()
    """DSA_PAGED_MQA, FA4_BACKEND, FLASHMLA: the backend names whose build takes the path."""
    models: frozenset[str] = frozenset()
    """VISION_FA4: the architectures the release runs as multimodal (`ModelConfig`'s
    `multimodal_model_archs`)."""
    fallback: str | None = None
    """VISION_FA4: the encoder backend SGLang's default picks on the other CUDA GPUs (what
    `--mm-attention-backend` can set instead)."""
    also: tuple[Site, ...] = ()
    """Further evidence the verdict rests on (the CuTe DSL's architecture aliases)."""
    elsewhere_majors: frozenset[int] = frozenset()
    """TRTLLM_MHA: the majors whose prefill SGLang sends to another kernel instead."""
    images: tuple[Image, ...] = ()
    """FLASHMLA: the kernel images the extension carries (any capability one runs on is
    accepted)."""

    def accepts(self, capability: Capability) -> bool:
        if any(image_runs_on(image, capability) for image in self.images):
            return True
        return capability in self.accepted or capability[0] in self.accepted_majors

    def fails(self, launch: Launch, phases: tuple[str | None, str | None]) -> bool:
        capability = launch.capability
        if launch.platform is not Platform.CUDA or capability is None:
            return False
        key = (capability.major, capability.minor)
        if self.reaches is not None and key not in self.reaches:
            return False
        if key[0] in self.elsewhere_majors:
            return False
        return not (self.accepts(key) or not self._taken(launch, phases))

    def _taken(self, launch: Launch, phases: tuple[str | None, str | None]) -> bool:
        if self.path is KernelPath.VISION_FA4:
            # `--mm-attention-backend` set: the encoder's default is not asked.
            multimodal = ModelFeature.MULTIMODAL in launch.features or (
                launch.model_architecture in self.models
            )
            return multimodal and launch.sub_backends.mm_attention_backend is None
        if self.path in _PREFILL_ARCH:
            # The prefill kernel: the prefill phase's backend runs `forward_extend`.
            return phases[0] in self.backends and launch.arch is _PREFILL_ARCH[self.path]
        if self.path is KernelPath.DSA_TRTLLM:
            # Only as given: SGLang's own choice of the DSA kernels is not replayed.
            return (
                phases[1] in self.backends
                and ModelFeature.SPARSE_DSA in launch.features
                and launch.sub_backends.dsa_decode_backend == DSA_TRTLLM_KERNEL
            )
        if self.path is KernelPath.FLASHMLA:
            # Its extend runs FlashInfer's MLA (the parent class): the decode reaches FlashMLA,
            # with an MLA model's cache (an MHA model on it is the page's to refuse).
            return phases[1] in self.backends and launch.arch is Arch.MLA
        runs = any(backend in self.backends for backend in phases)
        if self.path is KernelPath.FA4_BACKEND:
            return runs and launch.arch is Arch.MHA
        return runs and ModelFeature.SPARSE_DSA in launch.features


DSA_TRTLLM_KERNEL = "trtllm"
"""The DSA decode kernel (`--dsa-decode-backend`) that runs FlashInfer's trtllm-gen decode."""
_PREFILL_ARCH = {KernelPath.TRTLLM_MHA: Arch.MHA, KernelPath.TRTLLM_MLA: Arch.MLA}
"""The paths into a backend's prefill kernel, and the attention of the models they run."""


class KernelFailure(msgspec.Struct, frozen=True):
    """Where the first forward pass fails: the limit, and the GPU it refuses."""

    limit: KernelLimit
    capability: Capability

    @property
    def path(self) -> KernelPath:
        return self.limit.path


class KernelRules(msgspec.Struct, frozen=True):
    """One release's kernel limits, in the order its first forward pass meets them."""

    limits: tuple[KernelLimit, ...] = ()


def predict_kernels(
    rules: KernelRules, launch: Launch, phases: tuple[str | None, str | None]
) -> KernelFailure | None:
    """The first kernel limit the launch's first forward pass meets, over the (prefill,
    decode) backends start-up resolved; None when every kernel runs on this GPU."""
    for limit in rules.limits:
        if limit.fails(launch, phases):
            capability = launch.capability
            assert capability is not None
            return KernelFailure(limit, (capability.major, capability.minor))
    return None
