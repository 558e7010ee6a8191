"""The engine's launch for one case of the backend-build grids (tools/conformance/build.py)."""

from __future__ import annotations

from conformance.build import BUILD_PROFILES, BuildCase

from compat.engine.launch import Launch
from compat.engine.sub_backends import NO_SUB_BACKENDS
from compat.releases.image import CUDA_12_IMAGE
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch, ModelFeature, Platform, SpeculativeAttentionMode

_GDN_MODEL_TYPE = "qwen3_next"  # a hybrid GDN model in every release


def launch_of(gpu: str, case: BuildCase) -> Launch:
    """The engine's launch for one case of the build grid."""
    profile = BUILD_PROFILES[gpu]
    platform = Platform(profile.platform)
    cuda = platform is Platform.CUDA and profile.capability is not None
    capability = ComputeCapability(*profile.capability) if cuda and profile.capability else None
    features = frozenset({ModelFeature.ENCODER_DECODER}) if case.encoder_decoder else frozenset()
    return Launch(
        arch=Arch.MLA if case.mla else Arch.MHA,
        platform=platform,
        capability=capability,
        cuda_version=profile.cuda_version_tuple,
        # Every CUDA profile gives torch's CUDA, and no other platform reads it: the
        # image's never decides here.
        image_cuda=CUDA_12_IMAGE.version,
        backend=case.backend,
        prefill=None,
        decode=None,
        kv_spelling="auto",
        page_size=None,
        algorithm=case.speculative,
        topk=None,
        steps=None,
        draft_tokens=None,
        model_architecture=None,
        kv_heads=None,
        q_heads=None,
        qk_nope_head_dim=None,
        qk_rope_head_dim=None,
        features=features,
        device=None,
        tp_size=1,
        dp_size=1,
        dp_attention=False,
        deterministic=False,
        quantization=None,
        disaggregation="null",
        trust_remote_code=False,
        round_robin_balance=False,
        cuda_graph=True,
        hybrid_swa_memory=True,
        hierarchical_cache=False,
        model_type=_GDN_MODEL_TYPE if case.hybrid_gdn else "llama",
        checkpoint_quantization=None,
        remote_code=False,
        spec_mode=SpeculativeAttentionMode.PREFILL,
        draft_backend=None,
        sub_backends=NO_SUB_BACKENDS,
        draft_architecture=None,
        draft_arch=None,
        mamba_strategy="auto",
        mamba_ssm_dtype=None,
        environment=(),
        packages=(),
    )
