"""Which GPUs run a kernel image a compiled extension carries (CUDA's compatibility rules):
the FlashMLA path accepts a GPU when one of its extension's images runs on it."""

from __future__ import annotations

import pytest

from compat.engine.kernels import image_name, image_runs_on


@pytest.mark.parametrize(
    ("image", "runs", "refuses"),
    [
        # Arch-specific: that capability alone.
        (("cubin", 100, "a"), [(10, 0)], [(10, 3), (11, 0), (12, 0), (9, 0)]),
        (("cubin", 90, "a"), [(9, 0)], [(10, 0), (12, 0)]),
        # Family-specific and plain cubins: the major, from the minor on.
        (("cubin", 100, "f"), [(10, 0), (10, 3)], [(11, 0), (12, 0), (9, 0)]),
        (("cubin", 80, ""), [(8, 0), (8, 6), (8, 9)], [(9, 0), (12, 0), (7, 5)]),
        (("cubin", 103, "f"), [(10, 3)], [(10, 0), (12, 1)]),
        # Plain PTX: every GPU from its architecture on (the driver compiles it).
        (("ptx", 90, ""), [(9, 0), (10, 0), (12, 1)], [(8, 9)]),
        # Arch-specific PTX: as its cubin.
        (("ptx", 90, "a"), [(9, 0)], [(10, 0)]),
    ],
)
def test_an_image_runs_on_the_gpus_cudas_rules_allow(
    image: tuple[str, int, str], runs: list[tuple[int, int]], refuses: list[tuple[int, int]]
) -> None:
    assert all(image_runs_on(image, capability) for capability in runs)
    assert not any(image_runs_on(image, capability) for capability in refuses)


def test_images_are_named_as_nvcc_names_them() -> None:
    assert image_name(("cubin", 100, "a")) == "sm_100a"
    assert image_name(("ptx", 90, "")) == "compute_90"
