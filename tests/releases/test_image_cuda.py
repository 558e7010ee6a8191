"""The CUDA of each release's official image (`compat.releases.image`): every release has one
with its source, it moves only where `MOVES` records a move, and it agrees with the torch
each wheel pins.

The image's CUDA is read from SGLang's release workflows, which a wheel does not hold; what
a wheel does hold is its torch pin, and the image installs that torch built for its own CUDA.
PyTorch 2.11 is the first whose default build is CUDA 13.0 (SGLang issue #21498): a wheel
that pins an older torch ships in a CUDA 12 image, one that pins 2.11 or later in a CUDA 13
one.
"""

from __future__ import annotations

import re
import zipfile

import pytest
from conformance.availability import require_source
from conformance.wheel import wheel_path

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.image import MOVES

_TORCH_PIN = re.compile(r"^Requires-Dist: torch==(\d+)\.(\d+)", re.MULTILINE)
FIRST_CUDA_13_TORCH = (2, 11)


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_release_has_an_image_cuda_with_its_source(release: str) -> None:
    image = RELEASES[release].image_cuda
    assert image.version >= (12, 0)
    assert image.label == f"{image.version[0]}.{image.version[1]}"
    assert image.evidence.source
    assert image.evidence.url is not None and image.evidence.url.startswith("https://")


@pytest.mark.parametrize("release", RELEASE_NAMES[1:])
def test_it_moves_only_where_a_release_is_recorded_as_moving_it(release: str) -> None:
    before = RELEASES[RELEASE_NAMES[RELEASE_NAMES.index(release) - 1]].image_cuda
    assert (RELEASES[release].image_cuda != before) is (release in MOVES)


def test_every_recorded_move_is_a_modelled_release_and_a_move() -> None:
    assert next(iter(MOVES)) == RELEASE_NAMES[0]
    assert set(MOVES) <= set(RELEASE_NAMES)
    versions = [image.version for image in MOVES.values()]
    assert versions == sorted(set(versions))


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_it_agrees_with_the_torch_the_wheel_pins(release: str) -> None:
    require_source(release)
    with zipfile.ZipFile(wheel_path(release)) as wheel:
        metadata = next(
            wheel.read(name).decode()
            for name in wheel.namelist()
            if name.endswith(".dist-info/METADATA")
        )
    pin = _TORCH_PIN.search(metadata)
    assert pin is not None, f"sglang {release} pins no torch version"
    torch = (int(pin[1]), int(pin[2]))
    cuda_13 = RELEASES[release].image_cuda.version >= (13, 0)
    assert cuda_13 is (torch >= FIRST_CUDA_13_TORCH), (release, torch)
