"""The CUDA of each release's official image: what a launch without `--cuda-version` runs on.

The default is the image the plain tag names (`lmsysorg/sglang:vX.Y.Z`, and `latest`), its
x86 build; the arm64 build of the same tag has the same CUDA. `MOVES` names the releases
whose image changed it (the baseline first); a release absent from it has its
predecessor's, carried forward as the folding carries every per-release table.

Read from SGLang's release workflows and its own statements, not from the wheel (a wheel
does not say which image ships it). The wheels agree: 0.5.7 to 0.5.10 pin torch 2.9.1, and
0.5.11 on torch 2.11 or later (2.11 is the first PyTorch whose default build is CUDA 13.0)
(`tests/releases/test_image_cuda.py` reads the pins back).
"""

from __future__ import annotations

from collections.abc import Mapping

from compat.engine.launch import ImageCuda
from compat.engine.preshuffle import RocmImage
from compat.releases.doc import SGLANG
from compat.vocab.evidence import Evidence

CUDA_12_IMAGE = ImageCuda(
    (12, 9),
    Evidence(
        source="SGLang's Docker release workflow at 64ec4f88e1ee: v${version} and latest are "
        "the CUDA 12.9.1 images (amd64 and arm64)",
        url=f"{SGLANG}/blob/64ec4f88e1ee38fff05d2df5987f2f995c995828/"
        ".github/workflows/release-docker.yml",
        note="CUDA 13 images had their own suffix up to 0.5.10 (v0.5.10 beside v0.5.10-cu130); "
        "no -cu129 tag of a release before 0.5.11 is known.",
    ),
)
"""0.5.7 to 0.5.10: the plain tag is the CUDA 12.9 image."""

CUDA_13_IMAGE = ImageCuda(
    (13, 0),
    Evidence(
        source="SGLang PR #21441 (docker/Dockerfile: CUDA 12.9.1 -> 13.0.2) and issue #21498 "
        "(default CUDA 13.0, done 2026-05-06)",
        url=f"{SGLANG}/pull/21441",
        note="PR #21441 also moves the torch index from cu129 to cu130; its CI passed on "
        "2026-04-12, after 0.5.10. 0.5.11's release notes: the default CUDA version moves to "
        "13.0 across SGLang, sgl-kernel and the Docker images, with torch 2.11. The runtime "
        "release workflow tags v{version}-runtime from the cu130 build and "
        "v{version}-cu129-runtime from the cu129 one; from 0.5.11 both -cu129 and -cu130 "
        "tags exist. PR #31610 (2026-07) states that latest is the CUDA 13.0 build.",
    ),
)
"""0.5.11 on: the plain tag is the CUDA 13.0 image, the CUDA 12.9 one is `-cu129`."""

MOVES: Mapping[str, ImageCuda] = {"0.5.7": CUDA_12_IMAGE, "0.5.11": CUDA_13_IMAGE}
"""release -> the image CUDA from that release on."""


def image_cuda(release: str, before: ImageCuda) -> ImageCuda:
    """The CUDA of `release`'s official image: its row of `MOVES`, else the one before's."""
    return MOVES.get(release, before)


ROCM_DOCKERFILE_COMMIT = "004ae46fa39b5524a7f96575ec3c3f52e9c4aee0"
ROCM_IMAGE = RocmImage(
    environment=(("SGLANG_USE_AITER", "1"),),
    packages=(),  # Triton: not established (below)
    evidence=(
        Evidence(
            source=f"SGLang's docker/rocm.Dockerfile at {ROCM_DOCKERFILE_COMMIT[:12]} (its usage "
            "lines build v0.5.17), the closing `# Performance environment variable.` block: "
            "`ENV SGLANG_USE_AITER=1` (the 9th line from the end); no ENV or ARG of the file "
            "names SGLANG_DSA_HIP_DISABLE_PRESHUFFLE, SGLANG_NSA_HIP_DISABLE_PRESHUFFLE or "
            "AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS",
            url=f"{SGLANG}/blob/{ROCM_DOCKERFILE_COMMIT}/docker/rocm.Dockerfile",
            note="The same `ENV SGLANG_USE_AITER=1` closes the versions of the file that build "
            "v0.5.5.post3 and the later rocm724 flavors; the repository is read here at one "
            "commit, not at each release's tag.",
        ),
        Evidence(
            source=f"SGLang's docker/rocm.Dockerfile at {ROCM_DOCKERFILE_COMMIT[:12]}: Triton "
            "is not established. The default flavor (`ARG GPU_ARCH=gfx950`, and gfx942: the "
            "rocm700 images) sets `ENV BUILD_TRITON=\"0\"` and keeps the Triton of its base "
            "image `rocm/sgl-dev:rocm7-vllm-20250904`, which no public file of the repository "
            "states; the rocm720/rocm724 flavors install `ARG TRITON_VERSION="
            "\"3.7.0+amd.rocm7.2.0.git89002410\"` over a base whose torch pins triton==3.5.1 "
            "(the file's own comment), and the rocm1000 flavor `3.8.0+git4cff872c`.",
            url=f"{SGLANG}/blob/{ROCM_DOCKERFILE_COMMIT}/docker/rocm.Dockerfile",
            note="So the package takes no Triton for the image: a launch gives it "
            "(`--package triton==X`), enforce() and the plugin read the installed one, and "
            "otherwise the answer says that DSA's page size on ROCm turns on it.",
        ),
    ),
)
"""What the official ROCm image sets among the inputs the replay reads: every release
(the variable has closed the Dockerfile since before 0.5.7)."""


def rocm_image(release: str, before: RocmImage | None) -> RocmImage:
    """The official ROCm image of `release` (one for every release modelled)."""
    return ROCM_IMAGE
