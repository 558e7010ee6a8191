"""The trtllm_mha and trtllm_mla prefill paths, and the DSA backend's trtllm decode, into
FlashInfer's trtllm-gen FMHA are what the wheels say.

`tools/kernel_limits.py` (with tools/kernels/trtllm.py) reads them into
compat/releases/kernels_data.py (TRTLLM_MHA, TRTLLM_MLA, DSA_TRTLLM): SGLang's call of the
prefill function (of the MLA decode, named trtllm-gen, for the DSA backend), the majors
trtllm_mha sends to fmha_v2 instead, FlashInfer's entry into its trtllm-gen module and the
`TllmGenFmhaRunner` check with the capabilities it accepts. These tests read the cached
wheels again: every line the data cites says what the data says it does. Without a wheel
(no cache, no network) they skip with the reason, except in CI, where they fail.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_source
from conformance.wheel import wheel_path
from kernel_limits import trtllm_data
from kernel_wheels import read_kernel_wheel, text_line, wheels_at_hand
from kernels import trtllm
from kernels.wheels import read_text

from compat.releases import RELEASE_NAMES
from compat.releases.kernels import pins
from compat.releases.kernels_data import DSA_TRTLLM, TRTLLM_MHA, TRTLLM_MLA

CHOSEN = [release for release in RELEASE_NAMES if release in releases.selected()]
TABLES = {"mha": TRTLLM_MHA, "mla": TRTLLM_MLA}


def test_every_release_has_both_paths_at_the_flashinfer_it_pins() -> None:
    for release in RELEASE_NAMES:
        pinned = {site.package: site.version for site in pins(release)}
        for kind, table in TABLES.items():
            data = table[release]
            assert f"=={data['kernel'][1]}" in pinned["flashinfer-python"], (release, kind)


@pytest.mark.parametrize("release", CHOSEN)
def test_the_data_is_what_the_tool_reads_from_the_wheels(release: str) -> None:
    require_source(release)
    with wheels_at_hand():
        found = trtllm_data(release)
    assert found == (TRTLLM_MHA.get(release), TRTLLM_MLA.get(release), DSA_TRTLLM.get(release))


@pytest.mark.parametrize("kind", sorted(TABLES))
@pytest.mark.parametrize("release", CHOSEN)
def test_every_line_the_path_cites_says_it(release: str, kind: str) -> None:
    require_source(release)
    data = TABLES[kind][release]
    module, function, module_entry = trtllm.PATHS[kind]
    wheel = wheel_path(release)
    # SGLang's call of FlashInfer's prefill function, on the backend's module.
    file, _, line = data["caller"]
    assert file.endswith(f"/{module}.py")
    assert f"{function}(" in text_line(read_text(wheel, file), line)
    elsewhere = data["elsewhere"]
    if elsewhere is not None:
        assert kind == "mha"
        source = text_line(read_text(wheel, elsewhere[0]), elsewhere[2])
        assert f"self.{trtllm.ROUTE} =" in source
        # Each major the route names is a predicate of SGLang's own utilities.
        utils = read_text(wheel, trtllm.UTILS)
        for major in elsewhere[3]:
            assert re.search(rf"device_capability_majors=\[{major}\]", utils), major
    # FlashInfer's entry into its trtllm-gen module, and the runner's check.
    flashinfer = read_kernel_wheel("flashinfer-python", data["kernel"][1])
    entry_file, entry_function, entry_line = data["entry"]
    prefill = read_text(flashinfer, entry_file)
    assert entry_function == function and f".{module_entry}" in text_line(prefill, entry_line)
    _holds_the_runner_check(data, flashinfer)


@pytest.mark.parametrize("release", [r for r in CHOSEN if r in DSA_TRTLLM])
def test_every_line_the_dsa_trtllm_path_cites_says_it(release: str) -> None:
    require_source(release)
    data = DSA_TRTLLM[release]
    wheel = wheel_path(release)
    # SGLang's call of FlashInfer's MLA decode, in the DSA backend's module, which names
    # the trtllm-gen backend itself (FlashInfer's "auto" would choose by GPU).
    file, where, line = data["caller"]
    assert Path(file).stem in trtllm.DSA_MODULES and data["elsewhere"] is None
    source = read_text(wheel, file)
    assert f"{trtllm.DSA_DECODE}(" in text_line(source, line)
    assert trtllm.dsa_call_site(source) == (where, line)
    assert f'"{trtllm.TRTLLM_GEN}"' in source
    flashinfer = read_kernel_wheel("flashinfer-python", data["kernel"][1])
    entry_file, entry_function, entry_line = data["entry"]
    assert trtllm.DSA_DECODE in entry_function
    assert f".{trtllm.DECODE_ENTRY}" in text_line(read_text(flashinfer, entry_file), entry_line)
    _holds_the_runner_check(data, flashinfer)


def test_the_dsa_trtllm_path_is_read_where_the_dsa_backend_names_trtllm_gen() -> None:
    # Every release from the first with the path has it (the DSA backend keeps it).
    first = RELEASE_NAMES.index(next(iter(DSA_TRTLLM)))
    assert list(DSA_TRTLLM) == list(RELEASE_NAMES[first:])


def _holds_the_runner_check(data: dict[str, Any], flashinfer: Path) -> None:
    package, _, runner_file, runner_function, runner_line = data["kernel"]
    assert package == "flashinfer-python"
    runner = read_text(flashinfer, runner_file)
    check = " ".join(runner.splitlines()[runner_line - 1 : runner_line + 1])
    assert "FLASHINFER_CHECK(" in check and "Unsupported architecture" in check
    assert runner_function == trtllm.RUNNER_FUNCTION
    # The accepted capabilities are exactly those the check compares, by the constants'
    # values in the wheel's common.h (getSMVersion is major * 10 + minor).
    common = read_text(flashinfer, trtllm.COMMON)
    values = dict(re.findall(r"constexpr int32_t (kSM_\w+) = (\d+);", common))
    compared = {divmod(int(values[name]), 10) for name in re.findall(r"mSM == (kSM_\w+)", check)}
    assert tuple(sorted(compared)) == data["accepted"]
    sm_file, sm_function, sm_line = data["sm_version"]
    assert sm_function in text_line(read_text(flashinfer, sm_file), sm_line)
    assert "sm_major * 10 + sm_minor" in "\n".join(common.splitlines()[sm_line : sm_line + 10])


def test_the_runner_accepts_sm107_only_from_the_flashinfer_that_names_it() -> None:
    # Read, not assumed: the constant set changes with the pinned flashinfer-python.
    versions = {data["kernel"][1]: data["accepted"] for data in TRTLLM_MHA.values()}
    assert all((10, 0) in accepted and (10, 3) in accepted for accepted in versions.values())
    assert {v for v, accepted in versions.items() if (10, 7) in accepted} >= {"0.7.2"}
    assert (10, 7) not in versions["0.5.3"]
