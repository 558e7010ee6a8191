"""What SGLang checks of a sub-backend when it builds the part of the model that uses it.

Two parts read a sub-backend flag after start-up, and each refuses some GPUs:

- the vision encoder (`VisionAttention` in `sglang/srt/layers/attention/vision.py`), built
  with a multimodal model's weights: `_determine_attention_backend` refuses
  `--mm-attention-backend fa3` on Blackwell (`is_blackwell()`), and each encoder class
  refuses the machines it has no kernel for (fa3, fa4 and flashinfer_cudnn need CUDA,
  aiter_attn ROCm, ascend_attn an NPU, xpu_attn an Intel GPU, amx_attn a CPU);
- the DeepSeek sparse attention backend (`DeepseekSparseAttnBackend`, 0.5.16+), built as
  the `dsa` (`nsa`) attention backend of a DSA model: `flashmla_sparse_q8` is an SM90-only
  prefill kernel and no decode kernel, `triton_sparse_mla` (0.5.22+) a CUDA kernel for
  SM90 and newer.

Each check is data per release (`compat.releases.sub_build`) with the line that raises;
`compat.engine.build.build_after_startup` replays them in SGLang's order: the encoder with
the model, before the attention backends; the DSA checks as the DSA backend is built.
Only a flag the launch sets is checked: SGLang's own choices when it is unset pass them.
Not modelled: the checks in those functions that read more than the GPU (the KV cache
dtype, heads per rank, `--enable-mixed-chunk`, HiSparse), and `--linear-attn-*` (whose
kernels' checks are the kernel packages' own).
"""

from __future__ import annotations

import msgspec

from compat.engine.launch import Launch
from compat.engine.predicates import GpuGate, gpu_gate_holds
from compat.vocab.terms import ModelFeature, Platform, Term

VISION_FILE = "sglang/srt/layers/attention/vision.py"
DSA_FILE = "sglang/srt/layers/attention/dsa_backend.py"
DSA_BACKENDS = frozenset({"dsa", "nsa"})
"""The attention backends whose construction builds `DeepseekSparseAttnBackend`."""


class SubPart(Term):
    """The part of the model a sub-backend flag chooses kernels for."""

    VISION = "vision encoder"
    DSA = "DeepSeek sparse attention backend"
    LINEAR = "linear-attention layers"

    @classmethod
    def of(cls, field: str) -> SubPart:
        """The part the sub-backend flag of config field `field` chooses kernels for."""
        if field == "mm_attention_backend":
            return cls.VISION
        return cls.LINEAR if field.startswith("linear_attn_") else cls.DSA


class SubCheck(Term):
    """What one check refuses."""

    BLACKWELL = "blackwell"
    """The sub-backend on a GPU the release's `is_blackwell()` answers for."""
    PLATFORM = "platform"
    """The sub-backend on a machine outside `platforms`."""
    GPU = "gpu"
    """The sub-backend on a CUDA GPU whose capability major is outside `majors`."""
    PHASE = "phase"
    """The sub-backend in this phase at all (a prefill-only kernel as the decode one)."""


class SubBuildCheck(msgspec.Struct, frozen=True):
    """One check of a sub-backend, where it raises."""

    field: str
    """The flag's ServerArgs field (`mm_attention_backend`)."""
    value: str
    """The sub-backend it refuses."""
    check: SubCheck
    function: str
    line: int
    platforms: frozenset[Platform] = frozenset()
    """PLATFORM: the machines the sub-backend is built on."""
    majors: frozenset[int] = frozenset()
    """GPU: the compute-capability majors it accepts."""
    gate: GpuGate | None = None
    """BLACKWELL: the release's `is_blackwell()`."""

    @property
    def part(self) -> SubPart:
        return SubPart.of(self.field)

    @property
    def file(self) -> str:
        return VISION_FILE if self.part is SubPart.VISION else DSA_FILE

    def fails(self, launch: Launch) -> bool:
        """Whether the launch sets this sub-backend and this check refuses it there."""
        if getattr(launch.sub_backends, self.field) != self.value:
            return False
        check = self.check
        if check is SubCheck.PHASE:
            return True
        if check is SubCheck.PLATFORM:
            return launch.platform not in self.platforms
        if check is SubCheck.BLACKWELL:
            return self.gate is not None and gpu_gate_holds(self.gate, launch)
        # GPU: `torch.cuda.get_device_capability()[0]`. ROCm's torch answers 9 for the
        # gfx9 parts it models (MI300X, MI355X); elsewhere, or on an unknown CUDA GPU, the
        # check is not predicted.
        if launch.platform is Platform.ROCM:
            return 9 not in self.majors
        if launch.platform is not Platform.CUDA or launch.capability is None:
            return False
        return launch.capability.major not in self.majors


def vision_failure(checks: tuple[SubBuildCheck, ...], launch: Launch) -> SubBuildCheck | None:
    """The first check the vision encoder fails, for a multimodal model; else None."""
    if (
        ModelFeature.MULTIMODAL not in launch.features
        or launch.sub_backends.mm_attention_backend is None
    ):
        return None
    return next((c for c in checks if c.part is SubPart.VISION and c.fails(launch)), None)


def dsa_failure(
    checks: tuple[SubBuildCheck, ...], launch: Launch, backends: tuple[str, ...]
) -> SubBuildCheck | None:
    """The first check the DSA backend fails, where one of `backends` builds it."""
    if DSA_BACKENDS.isdisjoint(backends):
        return None
    subs = launch.sub_backends
    if subs.dsa_prefill_backend is None and subs.dsa_decode_backend is None:
        return None
    return next((c for c in checks if c.part is SubPart.DSA and c.fails(launch)), None)
