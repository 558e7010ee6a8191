"""The guard's words for where SGLang fails in the first forward pass, in a kernel the
release pins.

The engine predicts the failure (`compat.engine.kernels`); `finding()` words it, enforced at
the warm-up, naming SGLang's line that takes the path, the kernel package's own check (or,
for compiled code, the architectures its wheel carries kernels for) and the GPUs it accepts.
"""

from __future__ import annotations

from compat.engine.kernels import (
    KERNEL_RULE_PREFIX,
    Capability,
    KernelFailure,
    KernelLimit,
    KernelPath,
    image_name,
)
from compat.guard.report import Enforcement, Finding
from compat.vocab.terms import Severity


def is_kernel_finding(finding: Finding) -> bool:
    """Whether `finding` is a kernel's failure in SGLang's first forward pass."""
    return finding.rule.startswith(KERNEL_RULE_PREFIX)


def _sm(capability: Capability) -> str:
    return f"sm{capability[0]}{capability[1]}"


def accepted_gpus(limit: KernelLimit) -> str:
    """The GPUs the kernel accepts, as exact capabilities (and majors, for a package that
    dispatches on the major alone; the kernel images, for compiled code that carries them)."""
    exact = [_sm(c) for c in sorted(limit.accepted) if c[0] not in limit.accepted_majors]
    majors = [f"sm{major}x" for major in sorted(limit.accepted_majors)]
    return ", ".join(majors + exact + [image_name(i) for i in limit.images]) or "none"


_PATHS = {
    KernelPath.VISION_FA4: (
        "--mm-attention-backend",
        "the multimodal encoder's attention defaults to fa4 on this GPU ({caller}); "
        "flash-attn-4's SM100 forward kernel refuses {gpu} ({kernel}; with {also} it "
        "accepts {accepted}). --mm-attention-backend {fallback} (SGLang's choice on the "
        "other GPUs) avoids it",
    ),
    KernelPath.FA4_BACKEND: (
        "--attention-backend",
        "the fa4 backend runs flash-attn-4's CuTe DSL kernels ({caller}); its SM100 forward "
        "kernel refuses {gpu} ({kernel}; with {also} it accepts {accepted})",
    ),
    KernelPath.DSA_PAGED_MQA: (
        "--attention-backend",
        "the DSA backend's metadata asks DeepGEMM for its paged MQA logits schedule "
        "({caller}); the pinned DeepGEMM runs it only on {accepted} ({kernel}, built with "
        "kernels for {built}), not {gpu}",
    ),
    **dict.fromkeys(
        (KernelPath.TRTLLM_MHA, KernelPath.TRTLLM_MLA),
        (
            "--attention-backend",
            "the {backends} backend's prefill runs FlashInfer's trtllm-gen FMHA ({caller}; "
            "{also}); its runner accepts only {accepted}, not {gpu} ({kernel}: "
            '"Unsupported architecture")',
        ),
    ),
    KernelPath.DSA_TRTLLM: (
        "--dsa-decode-backend",
        "the {backends} backend's trtllm decode runs FlashInfer's sparse MLA decode on "
        "trtllm-gen ({caller}; {also}); its runner accepts only {accepted}, not {gpu} "
        '({kernel}: "Unsupported architecture")',
    ),
    KernelPath.FLASHMLA: (
        "--attention-backend",
        "the backend's metadata asks FlashMLA for its decoding schedule ({caller}), and its "
        "decode runs FlashMLA's kernels; the pinned extension carries kernel images "
        "for {built} only and no PTX ({kernel}), none of which runs on {gpu}: CUDA finds no "
        "kernel image for it",
    ),
}


def finding(failure: KernelFailure, release: str) -> Finding:
    """The finding for a first forward pass that fails in `release` on this GPU."""
    limit = failure.limit
    flag, words = _PATHS[limit.path]
    said = words.format(
        caller=limit.caller.where,
        kernel=limit.kernel.where,
        also="; ".join(site.where for site in limit.also),
        accepted=accepted_gpus(limit),
        built=", ".join(limit.kernel.built),
        gpu=_sm(failure.capability),
        fallback=limit.fallback,
        backends=" / ".join(sorted(limit.backends)),
    )
    return Finding(
        limit.path.rule,
        Severity.ERROR,
        f"SGLang {release} starts and loads the weights, then fails in the first forward "
        f"pass: {said}",
        (flag,),
        value=_sm(failure.capability),
        allowed=tuple(_sm(c) for c in sorted(limit.accepted)) + limit.kernel.built,
        enforced=Enforcement.WARMUP,
        raised_at=f"{limit.kernel.file}:{limit.kernel.line} ({limit.kernel.function})"
        if limit.kernel.line
        else f"{limit.kernel.file} ({limit.kernel.function})",
    )
