"""Each release's kernel limits (`compat.engine.kernels`), built from the data the wheels
gave (`compat.releases.kernels_data`, written by `tools/kernel_limits.py`).

A release's limits are those of its own pins: the flash-attn-4 and CuTe DSL it pins for
the multimodal encoder's fa4 path, the DeepGEMM it pins for the DSA backend's indexer, the
flashinfer-python it pins for the trtllm_mha and trtllm_mla backends' prefill.
FlashMLA (sgl-kernel's, or sgl-flash-mla's) it pins for the flashmla backend.
A limit that refuses no GPU its path reaches is left out: it cannot fail a launch.
"""

from __future__ import annotations

from typing import Any

from compat.engine.kernels import (
    Capability,
    KernelLimit,
    KernelPath,
    KernelRules,
    Site,
    image_name,
)
from compat.engine.models.lookup import release_models
from compat.releases.kernels_data import (
    BACKEND_FA4,
    DSA_PAGED_MQA,
    DSA_TRTLLM,
    FLASHMLA,
    PINS,
    TRTLLM_MHA,
    TRTLLM_MLA,
    VISION_FA4,
)

_SGLANG = "sglang"


def pins(release: str) -> tuple[Site, ...]:
    """The kernel packages `release` pins, each with its METADATA line as the evidence."""
    if release not in PINS:
        return ()
    _, metadata, found = PINS[release]
    return tuple(
        Site(package, spec, metadata, "Requires-Dist", line) for package, spec, line in found
    )


def _capabilities(values: Any) -> frozenset[Capability]:
    return frozenset((int(major), int(minor)) for major, minor in values)


def _fa4(release: str, path: KernelPath, data: Any) -> KernelLimit | None:
    """A path into flash-attn-4's SM100 forward kernel: the GPUs SGLang's path and
    flash-attn-4's interface send to it, and those its assert accepts with the pinned DSL."""
    if data is None:
        return None
    reaches, accepted = _capabilities(data["reaches"]), _capabilities(data["accepted"])
    if reaches <= accepted:
        return None
    file, function, line = data["caller"]
    package, version, dsl_file, dsl_function, dsl_line, cuda = data["dsl"]
    dispatch_file, dispatch_function, dispatch_line, _ = data["dispatch"]
    kernel_package, kernel_version = data["kernel"][:2]
    vision = path is KernelPath.VISION_FA4
    return KernelLimit(
        path,
        Site(_SGLANG, release, file, function, line),
        Site(*data["kernel"]),
        reaches,
        accepted=accepted,
        backends=frozenset(data.get("backends", ())),
        models=release_models(release).multimodal if vision else frozenset(),
        fallback=data.get("fallback"),
        also=(
            Site(kernel_package, kernel_version, dispatch_file, dispatch_function, dispatch_line),
            Site(package, f"{version} (CUDA {cuda})", dsl_file, dsl_function, dsl_line),
        ),
    )


def _dsa(release: str) -> KernelLimit | None:
    data = DSA_PAGED_MQA.get(release)
    if data is None:
        return None
    file, function, line = data["caller"]
    package, version, compiled, call = data["kernel"]
    built = tuple(f"{arch} ({header})" for arch, header in data["built"])
    return KernelLimit(
        KernelPath.DSA_PAGED_MQA,
        Site(_SGLANG, release, file, function, line),
        Site(package, version, compiled, call, built=built),
        None,
        accepted_majors=frozenset(int(major) for major in data["majors"]),
        backends=frozenset(data["backends"]),
    )


def _trtllm(release: str, path: KernelPath, data: Any) -> KernelLimit | None:
    """A backend's call into FlashInfer's trtllm-gen runner, which checks the GPU's exact
    capability; the majors SGLang sends to another kernel are not reached."""
    if data is None:
        return None
    file, function, line = data["caller"]
    package, version = data["kernel"][:2]
    also = [Site(package, version, *data["entry"]), Site(package, version, *data["sm_version"])]
    elsewhere = data["elsewhere"]
    if elsewhere is not None:
        also.append(Site(_SGLANG, release, *elsewhere[:3]))
    return KernelLimit(
        path,
        Site(_SGLANG, release, file, function, line),
        Site(*data["kernel"]),
        None,
        accepted=_capabilities(data["accepted"]),
        backends=frozenset(data["backends"]),
        also=tuple(also),
        elsewhere_majors=frozenset(elsewhere[3]) if elsewhere is not None else frozenset(),
    )


def _flashmla(release: str) -> KernelLimit | None:
    """The flashmla backend's decode: every CUDA GPU start-up lets through reaches it, and
    the GPUs with a kernel image in the pinned extension run it."""
    data = FLASHMLA.get(release)
    if data is None:
        return None
    file, function, line = data["caller"]
    package, version, extension, call = data["kernel"]
    images = tuple((kind, int(arch), variant) for kind, arch, variant in data["images"])
    return KernelLimit(
        KernelPath.FLASHMLA,
        Site(_SGLANG, release, file, function, line),
        Site(package, version, extension, call, built=tuple(map(image_name, images))),
        None,
        backends=frozenset(data["backends"]),
        images=images,
    )


def kernel_rules(release: str, before: KernelRules) -> KernelRules:
    """`release`'s kernel limits, in the order its first forward pass meets them: the
    attention backend's metadata and kernels, then the encoder (a multimodal warm-up batch). A release
    the wheels were not read for (a stand-in for a newer one) has `before`'s."""
    if release not in PINS:
        return before
    limits = (
        _dsa(release),
        _flashmla(release),
        _fa4(release, KernelPath.FA4_BACKEND, BACKEND_FA4.get(release)),
        _trtllm(release, KernelPath.TRTLLM_MHA, TRTLLM_MHA.get(release)),
        _trtllm(release, KernelPath.TRTLLM_MLA, TRTLLM_MLA.get(release)),
        _trtllm(release, KernelPath.DSA_TRTLLM, DSA_TRTLLM.get(release)),
        _fa4(release, KernelPath.VISION_FA4, VISION_FA4.get(release)),
    )
    return KernelRules(tuple(limit for limit in limits if limit is not None))
