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
