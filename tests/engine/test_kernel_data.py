"""Each release's kernel pins and kernel limits are what its wheels say.

`tools/kernel_limits.py` reads them into compat/releases/kernels_data.py: the kernel
packages the sglang wheel's METADATA pins, the line of SGLang's code that takes each path
into a kernel, the kernel package's check (flash-attn-4's SM100 assert, with the CuTe DSL's
`Arch`) or the architectures its wheel carries kernels for (DeepGEMM's headers, the kernel
images in FlashMLA's fatbin). These tests read the cached wheels again: every line the data
cites says what the data says it does. Without
a wheel (no cache, no network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import zipfile
from types import ModuleType
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.wheel import wheel_path
from kernel_limits import release_data
from kernel_wheels import read_kernel_wheel, text_line, wheels_at_hand
from kernels import deepgemm, fa4, fatbin, flashmla
from kernels.pins import pins
from kernels.wheels import members, read_text

from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.kernels import pins as release_pins
from compat.releases.kernels_data import (
    BACKEND_FA4,
    DSA_PAGED_MQA,
    FLASHMLA,
    PINS,
    VISION_FA4,
)

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]


def test_every_release_pins_its_kernels() -> None:
    for release in RELEASE_NAMES:
        found = {site.package: site for site in release_pins(release)}
        assert "flashinfer-python" in found, release
        assert "==" in found["flashinfer-python"].version, release  # an exact pin
        assert {"sgl-kernel", "sglang-kernel"} & set(found), release
        assert all(site.line > 0 and site.file.endswith("METADATA") for site in found.values())


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheels(release: str) -> None:
    require_source(release)
    with wheels_at_hand():
        pinned, vision, backend, dsa, mla = release_data(release)
    assert pinned == PINS[release]
    assert vision == VISION_FA4.get(release)
    assert backend == BACKEND_FA4.get(release)
    assert dsa == DSA_PAGED_MQA.get(release)
    assert mla == FLASHMLA.get(release)


@pytest.mark.parametrize("release", CHOSEN)
def test_the_pins_are_the_wheels_metadata_lines(release: str) -> None:
    require_source(release)
    wheel = wheel_path(release)
    name, metadata, found = PINS[release]
    assert wheel.name == name
    assert pins(wheel) == found
    text = read_text(wheel, metadata)
    for package, spec, line in found:
        written = text_line(text, line)
        assert written.startswith("Requires-Dist:"), (release, line)
        name = written.removeprefix("Requires-Dist:").strip().lower().replace("_", "-")
        assert name.startswith(package) and spec.split("]")[-1] in written.replace(" ", "")


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in VISION_FA4])
def test_the_vision_path_and_the_fa4_assert_are_the_wheels(release: str) -> None:
    require_source(release)
    data = VISION_FA4[release]
    file, function, line = data["caller"]
    vision = read_text(wheel_path(release), file)
    assert "major" in text_line(vision, line) and function.endswith(fa4.VISION_FUNCTION)
    package, version, kernel_file, kernel_function, kernel_line = data["kernel"]
    source = read_text(read_kernel_wheel(package, version), kernel_file)
    assert fa4.fa4_assert(source)[:2] == (kernel_function, kernel_line)
    assert "assert" in text_line(source, kernel_line) and "Arch." in text_line(source, kernel_line)
    dsl_package, dsl_version, _, alias_function, alias, cuda = data["dsl"]
    dsl = read_kernel_wheel(dsl_package, dsl_version)
    assert fa4.alias_line(dsl, cuda) == (alias_function, alias)
    # Run again: the verdicts are the DSL's own `Arch` evaluated in the kernel's assert.
    accepted = fa4.accepted(source, dsl, cuda)
    assert tuple(sorted(accepted)) == data["accepted"]
    known = fa4.capabilities(dsl)
    reached = fa4.vision_default(vision, known)
    dispatch_file, dispatch_function, dispatch_line, sent = data["dispatch"]
    interface = read_text(read_kernel_wheel(package, version), dispatch_file)
    assert fa4.sm100_dispatch(interface, known) == (
        dispatch_function,
        dispatch_line,
        frozenset(sent),
    )
    assert "arch" in text_line(interface, dispatch_line)
    assert reached is not None and tuple(sorted(reached[2] & frozenset(sent))) == data["reaches"]
    assert (
        reached[3] == data["fallback"]
        and data["fallback"] in RELEASES[release].sub_choices["mm_attention_backend"]
    )


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in BACKEND_FA4])
def test_the_fa4_backends_call_of_flash_attn_4_is_the_wheels(release: str) -> None:
    require_source(release)
    data = BACKEND_FA4[release]
    file, function, line = data["caller"]
    source = read_text(wheel_path(release), file)
    call = "\n".join(source.splitlines()[line - 1 : line + 30])
    assert "ver=self.fa_impl_ver" in call.replace(" ", "")
    assert fa4.backend_call(source) == (function, line)
    registry = read_text(wheel_path(release), deepgemm.REGISTRY)
    assert data["backends"] == fa4.v4_backends(registry) and "fa4" in data["backends"]
    assert data["accepted"] == VISION_FA4.get(release, data)["accepted"]


def _caller_reads_back(release: str, data: dict[str, Any], reader: ModuleType) -> None:
    """The path's call in SGLang's wheel is where the data says (the reader's `CALL` on the
    line, found by its `call_site`), and every backend the data names is a registered one."""
    file, function, line = data["caller"]
    wheel = wheel_path(release)
    source = read_text(wheel, file)
    assert reader.CALL in text_line(source, line)
    assert reader.call_site(source) == (function, line)
    registry = read_text(wheel, deepgemm.REGISTRY)
    assert data["backends"] and all(
        f'register_attention_backend("{name}")' in registry for name in data["backends"]
    )


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in DSA_PAGED_MQA])
def test_the_dsa_path_and_deepgemms_kernels_are_the_wheels(release: str) -> None:
    require_source(release)
    data = DSA_PAGED_MQA[release]
    _caller_reads_back(release, data, deepgemm)
    package, version, compiled, _ = data["kernel"]
    dg = read_kernel_wheel(package, version)
    names = set(members(dg))
    assert compiled in names
    assert all(f"deep_gemm/{header}" in names for _, header in data["built"])
    assert data["majors"] == tuple(sorted({int(arch[2:]) // 10 for arch, _ in data["built"]}))


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in FLASHMLA])
def test_the_flashmla_path_and_its_kernel_images_are_the_wheels(release: str) -> None:
    require_source(release)
    data = FLASHMLA[release]
    _caller_reads_back(release, data, flashmla)
    package, version, extension, _ = data["kernel"]
    pinned = {name: spec for name, spec, _ in PINS[release][2]}
    assert pinned[package].endswith(version)  # the release's own pin
    with zipfile.ZipFile(read_kernel_wheel(package, version)) as archive:
        elf = archive.read(extension)
    assert fatbin.images(elf) == data["images"] and data["images"]
    # The entries' flags say what each uncompressed cubin names as its own target.
    for (arch, variant), targets in fatbin.cubin_targets(elf).items():
        assert targets == {f"sm_{arch}{variant}"}, (release, arch, variant, targets)
