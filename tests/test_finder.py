"""The finder's precomputed data: complete, equal to `check()`, deterministic, and small."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compat import AttentionConfig, Report, check
from compat.finder import (
    AXIS_ORDER,
    DATA_GLOBAL,
    DATA_PATH,
    FINDER_RELEASE,
    finder_data,
    finder_options,
    render_finder_data,
    render_finder_script,
)
from compat.matrix import MATRIX
from compat.releases import RELEASES
from compat.vocab import KV_DTYPE_SPELLINGS, ComputeCapability, Platform

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 3_000_000


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return finder_data()


def _fields(values: dict[str, str]) -> dict[str, Any]:
    """The AttentionConfig fields for one combination of menu values, worked out here
    independently of compat.finder's own mapping."""
    fields: dict[str, Any] = {
        "attention_arch": values["arch"],
        "kv_cache_dtype": values["kv_cache_dtype"],
    }
    platform, _, capability = values["gpu"].partition("-")
    fields["platform"] = platform
    if capability:
        fields["compute_capability"] = ComputeCapability.parse(capability)
    if values["page_size"]:
        fields["page_size"] = int(values["page_size"])
    if values["topk"]:
        fields["speculative_algorithm"] = "EAGLE"
        fields["speculative_eagle_topk"] = int(values["topk"])
    return fields


def _combination(data: dict[str, Any], index: int) -> dict[str, str]:
    """Decode a combination index (mixed radix, last axis fastest) into menu values."""
    values: dict[str, str] = {}
    for axis in reversed(data["axes"]):
        index, position = divmod(index, len(axis["options"]))
        values[axis["id"]] = axis["options"][position]["value"]
    assert index == 0
    return values


def _stored(data: dict[str, Any], index: int, backend: int) -> tuple[str, list[tuple[str, ...]]]:
    verdict, finding_ids = data["outcomes"][data["results"][index][backend]]
    strings = data["strings"]
    findings: list[tuple[str, ...]] = []
    for finding_id in finding_ids:
        severity, rule, message, phases = data["findings"][finding_id]
        findings.append(
            (data["severities"][severity], strings[rule], strings[message], strings[phases])
        )
    return str(data["verdicts"][verdict]), findings


def _expected(report: Report) -> tuple[str, list[tuple[str, ...]]]:
    verdict = "incompatible" if not report.ok else "warnings" if report.warnings else "compatible"
    ordered = [*report.errors, *report.warnings, *report.infos]
    return verdict, [
        (f.severity.value, f.rule, f.message, "+".join(p.value for p in f.phases)) for f in ordered
    ]


def test_option_space_derives_from_the_vocabulary_and_the_matrix() -> None:
    axes = {axis.id: axis for axis in finder_options()}
    assert tuple(axes) == AXIS_ORDER
    kv = [option.value for option in axes["kv_cache_dtype"].options]
    offered = RELEASES[FINDER_RELEASE].kv_choices
    assert sorted(kv) == sorted(set(offered) - {"bfloat16"})
    assert {KV_DTYPE_SPELLINGS[name] for name in kv} == {KV_DTYPE_SPELLINGS[n] for n in offered}
    gpus = axes["gpu"].options
    platforms = {dict(option.fields)["platform"] for option in gpus}
    assert platforms == {platform.value for platform in Platform}
    for option in gpus:
        fields = dict(option.fields)
        assert ("compute_capability" in fields) == (fields["platform"] == Platform.CUDA.value)
    assert [o.value for o in gpus if o.value.startswith("cuda")] == [
        f"cuda-sm{cc}" for cc in ("80", "86", "89", "90", "100", "120")
    ]
    page_sizes = {int(o.value) for o in axes["page_size"].options if o.value}
    named = {
        s for t in MATRIX.tables for r in t.rows for c in r.cells.values() for s in c.page_sizes
    }
    assert named | {1} == page_sizes == {1, 16, 32, 64, 128}
    assert [o.value for o in axes["topk"].options] == ["", "1", "2", "4"]
    assert [o.value for o in axes["arch"].options] == ["mha", "mla"]
    assert {axis_id: axis.initial for axis_id, axis in axes.items()} == {
        "arch": "mla",
        "gpu": "cuda-sm100",
        "kv_cache_dtype": "fp4_e2m1",
        "page_size": "",
        "topk": "",
    }


def test_data_covers_every_combination_and_backend(data: dict[str, Any]) -> None:
    sizes = [len(axis["options"]) for axis in data["axes"]]
    combinations = math.prod(sizes)
    assert combinations == 2 * 10 * 5 * 6 * 4
    assert data["backends"] == list(MATRIX.backend_names)
    assert len(data["results"]) == len(data["defaults"]) == combinations
    backends = len(data["backends"])
    assert all(len(row) == backends for row in data["results"])
    outcomes = len(data["outcomes"])
    assert all(0 <= outcome < outcomes for row in data["results"] for outcome in row)
    assert all(-1 <= b < backends for pair in data["defaults"] for b in pair)
    findings = len(data["findings"])
    assert all(0 <= f < findings for _, ids in data["outcomes"] for f in ids)
    strings = len(data["strings"])
    assert all(0 <= s < strings for finding in data["findings"] for s in finding[1:])
    # Deduplicated: every string, finding and outcome is stored once.
    assert len(set(data["strings"])) == strings
    assert len({tuple(f) for f in data["findings"]}) == findings
    assert len({(v, tuple(ids)) for v, ids in data["outcomes"]}) == outcomes
    # Every verdict occurs somewhere in the space.
    assert {data["verdicts"][v] for v, _ in data["outcomes"]} == set(data["verdicts"])


def test_stored_verdicts_and_findings_equal_check(data: dict[str, Any]) -> None:
    count = len(data["results"])
    # The initial selection, the first and last combinations, and a seeded sample.
    sample = {0, count - 1, *random.Random(20240601).sample(range(count), 120)}
    initial = {axis["id"]: axis["initial"] for axis in data["axes"]}
    sample |= {i for i in range(count) if _combination(data, i) == initial}
    assert len(sample) > 100
    for index in sorted(sample):
        values = _combination(data, index)
        fields = _fields(values)
        for b, backend in enumerate(data["backends"]):
            report = check(AttentionConfig(attention_backend=backend, **fields))
            assert _stored(data, index, b) == _expected(report), (values, backend)
        resolved = check(AttentionConfig(**fields)).resolved
        expected_defaults = [resolved.prefill_backend, resolved.decode_backend]
        shown = [None if b < 0 else data["backends"][b] for b in data["defaults"][index]]
        assert shown == expected_defaults, values


def test_one_backend_over_the_whole_space(data: dict[str, Any]) -> None:
    """Every combination for one backend, so no corner of the index is off by one."""
    b = data["backends"].index("flashinfer")
    for index in range(len(data["results"])):
        fields = _fields(_combination(data, index))
        report = check(AttentionConfig(attention_backend="flashinfer", **fields))
        assert _stored(data, index, b) == _expected(report)


def test_errors_come_first_and_verdicts_match_severities(data: dict[str, Any]) -> None:
    order = {name: rank for rank, name in enumerate(data["severities"])}
    assert list(order) == ["error", "warning", "info"]
    for verdict, ids in data["outcomes"]:
        severities = [data["findings"][i][0] for i in ids]
        assert severities == sorted(severities)
        names = {data["severities"][s] for s in severities}
        expected = (
            "incompatible"
            if "error" in names
            else "warnings"
            if "warning" in names
            else "compatible"
        )
        assert data["verdicts"][verdict] == expected


def test_rendering_is_deterministic_and_small(data: dict[str, Any]) -> None:
    text = render_finder_data()
    assert json.loads(text) == json.loads(json.dumps(data))
    # Another interpreter, with another hash seed, writes the same bytes.
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from compat.finder import render_finder_data as r; "
            "sys.stdout.buffer.write(r().encode())",
        ],
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        timeout=120,
        check=True,
    )
    assert other.stdout.decode("utf-8") == text
    script = render_finder_script()  # a second render in this interpreter
    assert f"window.{DATA_GLOBAL} = {text};\n" in script
    assert len(script.encode("utf-8")) < MAX_BYTES


def test_import_compat_stays_light() -> None:
    heavy = ["compat.finder", "jinja2", "mkdocs", "torch"]
    code = f"import sys, compat; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"
    code = f"import sys, compat.finder; print([m for m in {heavy[1:]!r} if m in sys.modules])"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"


def test_hook_adds_the_data_to_the_site_and_refuses_a_committed_copy(tmp_path: Path) -> None:
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File, Files

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    # Through MkDocs' own event dispatch, which runs the hooks listed in mkdocs.yml.
    files = config.plugins.on_files(Files([]), config=config)
    added = files.get_file_from_path(DATA_PATH)
    assert added is not None
    assert added.content_string == render_finder_script()
    assert not (ROOT / "docs" / DATA_PATH).exists()

    committed = File(DATA_PATH, str(tmp_path), str(tmp_path / "site"), use_directory_urls=True)
    with pytest.raises(PluginError, match="generated at build time"):
        config.plugins.on_files(Files([committed]), config=config)
