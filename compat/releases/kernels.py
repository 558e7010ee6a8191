"""Each release's kernel limits (`compat.engine.kernels`), built from the data the wheels
gave (`compat.releases.kernels_data`, written by `tools/kernel_limits.py`).

A release's limits are those of its own pins: the flash-attn-4 and CuTe DSL it pins for
the multimodal encoder's fa4 path, the DeepGEMM it pins for the DSA backend's indexer.
A limit that refuses no GPU its path reaches is left out: it cannot fail a launch.
"""

from __future__ import annotations

from typing import Any

from compat.engine.kernels import Capability, KernelLimit, KernelPath, KernelRules, Site
from compat.engine.models.lookup import release_models
from compat.releases.kernels_data import DSA_PAGED_MQA, MM_BACKENDS, PINS, VISION_FA4

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


def _vision(release: str) -> KernelLimit | None:
    data = VISION_FA4.get(release)
    if data is None:
        return None
    reaches, accepted = _capabilities(data["reaches"]), _capabilities(data["accepted"])
    if reaches <= accepted:
        return None
    file, function, line = data["caller"]
    package, version, dsl_file, dsl_function, dsl_line, cuda = data["dsl"]
    return KernelLimit(
        KernelPath.VISION_FA4,
        Site(_SGLANG, release, file, function, line),
        Site(*data["kernel"]),
        reaches,
        accepted=accepted,
        models=release_models(release).multimodal,
        also=(Site(package, f"{version} (CUDA {cuda})", dsl_file, dsl_function, dsl_line),),
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


def kernel_rules(release: str, before: KernelRules) -> KernelRules:
    """`release`'s kernel limits, in the order its first forward pass meets them: the
    attention backend's metadata, then the encoder (a multimodal warm-up batch). A release
    the wheels were not read for (a stand-in for a newer one) has `before`'s."""
    if release not in PINS:
        return before
    limits = tuple(limit for limit in (_dsa(release), _vision(release)) if limit is not None)
    return KernelRules(limits, MM_BACKENDS[release][2])
