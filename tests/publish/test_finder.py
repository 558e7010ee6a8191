"""The finder's precomputed data: complete, equal to `check()`, deterministic, and small."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from finder_menus import default_launch_passes, menu_fields
from finder_sample import SAMPLE_MODELS, SAMPLE_RELEASES, sample_env
from paths import ROOT

from compat import AttentionConfig, Report, check
from compat.inputs.config import speculation_with_topk
from compat.inputs.gpus import GPUS
from compat.publish import finder
from compat.publish.finder import (
    DATA_GLOBAL,
    INDEX_GLOBAL,
    INDEX_PATH,
    MAX_FIXES,
    VERDICTS,
    Row,
    combination_row,
    data_key,
    data_path,
    finding_order,
    generated_names,
    render_finder_data,
    render_finder_script,
)
from compat.publish.finder_build import site_files
from compat.publish.finder_options import (
    AXIS_ORDER,
    FINDER_RELEASES,
    MODELS_VARIABLE,
    NAMED_MODELS,
    RELEASES_VARIABLE,
    finder_backends,
    finder_options,
    gpu_order,
    hardware_classes,
    launch_passes,
    offered_models,
    offered_releases,
    opening,
    opening_selection,
    pair_prefills,
)
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab.terms import KV_DTYPE_SPELLINGS, Platform

MAX_BYTES = 500_000
"""The issue's budget: all the finder's data, pairs included, uncompressed."""


slow = pytest.mark.slow
"""Needs the sample releases' data: computed (a few minutes of CPU) unless the build cache
holds it."""


@cache
def _site_files() -> dict[str, str]:
    """The finder's files for the sample releases and models, as the site build gets them:
    each part computed once per state of what it reads, through the build cache (the
    site builds of the tests share the entries; the determinism test below recomputes one
    from scratch and compares)."""
    saved = {name: os.environ.get(name) for name in (RELEASES_VARIABLE, MODELS_VARIABLE)}
    os.environ.update({name: sample_env()[name] for name in saved})
    try:
        return dict(site_files(lambda line: None))
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


@cache
def _data(release: str, model: str) -> dict[str, Any]:
    script = _site_files()[data_path(release, model)]
    prefix = f"window.{DATA_GLOBAL}[{json.dumps(data_key(release, model))}] = "
    line = next(line for line in script.splitlines() if line.startswith(prefix))
    data: dict[str, Any] = json.loads(line.removeprefix(prefix).removesuffix(";"))
    return data


@pytest.fixture(
    scope="module", params=[(r, m) for r in SAMPLE_RELEASES for m in SAMPLE_MODELS], ids=str
)
def data(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _data(*request.param)


def _accepted(release: str) -> list[str]:
    """The backends a release's `--attention-backend` accepts that the release's matrix has."""
    choices = set(RELEASES[release].backend_choices)
    return [name for name in release_matrix(release).backend_names if name in choices]


def _radix(data: dict[str, Any]) -> list[int]:
    return [
        data["hardware"] if axis["id"] == "gpu" else len(axis["options"]) for axis in data["axes"]
    ]


def _combination(data: dict[str, Any], index: int) -> dict[str, str]:
    """Decode a combination index (mixed radix, last axis fastest) into menu values, the
    data's model first; the GPU axis counts hardware classes: the first GPU option of the
    class stands for it."""
    values: dict[str, str] = {"model": data["model"]}
    for axis, size in reversed(list(zip(data["axes"], _radix(data), strict=True))):
        index, position = divmod(index, size)
        if axis["id"] == "gpu":
            option = next(o for o in axis["options"] if o["hw"] == position)
        else:
            option = axis["options"][position]
        values[axis["id"]] = option["value"]
    assert index == 0
    return values


@cache
def _digit_values(alphabet: str) -> dict[str, int]:
    """Each digit's value in the data's alphabet (the digits in order)."""
    assert len(set(alphabet)) == len(alphabet), "a digit occurs twice"
    return {digit: value for value, digit in enumerate(alphabet)}


def _number(data: dict[str, Any], text: str) -> int:
    return _value(data["digits"], text)


def _value(alphabet: str, text: str) -> int:
    """The number `text` writes in `alphabet`'s digits (most significant first)."""
    values, base = _digit_values(alphabet), len(alphabet)
    value = 0
    for char in text:
        value = value * base + values[char]
    return value


def _numbers(data: dict[str, Any], text: str, width: int) -> tuple[int, ...]:
    return _decoded(data["digits"], text, width)


@cache  # each table is decoded once: the tests look up hundreds of thousands of cells
def _decoded(alphabet: str, text: str, width: int) -> tuple[int, ...]:
    return tuple(_value(alphabet, text[i : i + width]) for i in range(0, len(text), width))


@cache
def _group(alphabet: str, group: str, widths: tuple[int, ...]) -> tuple[int, ...]:
    """A `groups` entry: numbers of the given widths, one after the other."""
    numbers, start = [], 0
    for width in widths:
        numbers.append(_value(alphabet, group[start : start + width]))
        start += width
    assert start == len(group)
    return tuple(numbers)


def _outcome(data: dict[str, Any], index: int, column: int) -> tuple[int, list[int]]:
    """One cell, decoded as finder_data's docstring lays it out: the union of the block's
    shared set, its page size's, its topk's and its own set; finding ids in increasing
    order."""
    widths, digits = data["widths"], data["digits"]
    block, position = divmod(index, data["block"])
    page, topk = divmod(position, data["topks"])
    results = _decoded(digits, data["results"], widths["group"])
    group = data["groups"][results[block * len(data["columns"]) + column]]
    kinds = ("set", "tuple", "tuple", "tuple", "pattern")
    shared, by_page, by_topk, own, pattern = _group(digits, group, tuple(widths[k] for k in kinds))
    chosen = [shared]
    for table, place in ((by_page, page), (by_topk, topk), (own, position)):
        chosen.append(_numbers(data, data["tuples"][table], widths["set"])[place])
    ids = {i for s in chosen for i in _numbers(data, data["sets"][s], widths["finding"])}
    return int(data["patterns"][pattern][position]), sorted(ids)


def _text(data: dict[str, Any], number: int) -> str:
    """A text: its word numbers, `widths.word` digits each, words joined."""
    digits = data["widths"]["word"]
    return "".join(data["words"][n] for n in _numbers(data, data["texts"][number], digits))


def _text_numbers(data: dict[str, Any], number: int) -> tuple[int, ...]:
    return _numbers(data, data["texts"][number], data["widths"]["word"])


def _findings(data: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """Every finding: its severity's number and the text numbers of rule, message, phases."""
    return _decoded_findings(data["digits"], data["findings"], data["widths"]["text"])


@cache  # the tests decode each release's table once
def _decoded_findings(alphabet: str, table: str, digits: int) -> list[tuple[int, int, int, int]]:
    data = {"digits": alphabet}
    size = 1 + 3 * digits
    assert len(table) % size == 0
    return [
        (_number(data, table[at]), *_numbers(data, table[at + 1 : at + size], digits))  # type: ignore[misc]
        for at in range(0, len(table), size)
    ]


def _fixes(data: dict[str, Any], index: int) -> list[tuple[str, str]] | None:
    width = data["widths"]["fixes"]
    number = _number(data, data["fixes"][index * width : (index + 1) * width])
    if number == 0:
        return None
    return [(_text(data, a), _text(data, b)) for a, b in data["fixlists"][number - 1]]


def _stored(data: dict[str, Any], index: int, backend: int) -> tuple[str, list[tuple[str, ...]]]:
    verdict, finding_ids = _outcome(data, index, backend)
    table = _findings(data)
    findings: list[tuple[str, ...]] = []
    for finding_id in finding_ids:
        severity, rule, message, phases = table[finding_id]
        findings.append(
            (
                data["severities"][severity],
                _text(data, rule),
                _text(data, message),
                _text(data, phases),
            )
        )
    return str(data["verdicts"][verdict]), findings


def _expected(report: Report) -> tuple[str, list[tuple[str, ...]]]:
    verdict = "incompatible" if not report.ok else "warnings" if report.warnings else "compatible"
    ordered = [*report.errors, *report.warnings, *report.infos]
    return verdict, [
        (f.severity.value, f.rule, f.message, "+".join(p.value for p in f.phases)) for f in ordered
    ]


@pytest.mark.parametrize("release", FINDER_RELEASES)
def test_option_space_follows_the_release(release: str) -> None:
    axes = {axis.id: axis for axis in finder_options(release)}
    assert tuple(axes) == AXIS_ORDER
    kv = [option.value for option in axes["kv_cache_dtype"].options]
    offered = RELEASES[release].kv_choices
    assert sorted(kv) == sorted(set(offered) - {"bfloat16"})
    assert {KV_DTYPE_SPELLINGS[name] for name in kv} == {KV_DTYPE_SPELLINGS[n] for n in offered}
    gpus = axes["gpu"].options
    platforms = {dict(option.fields)["platform"] for option in gpus}
    assert platforms == {platform.value for platform in Platform}
    for option in gpus:
        fields = dict(option.fields)
        assert ("compute_capability" in fields) == (fields["platform"] == Platform.CUDA.value)
    assert [o.value for o in gpus][: len(GPUS)] == [
        gpu.name.lower().replace(" ", "-") for gpu in GPUS
    ]
    page_sizes = {int(o.value) for o in axes["page_size"].options if o.value}
    matrix = release_matrix(release)
    named = {
        s for t in matrix.tables for r in t.rows for c in r.cells.values() for s in c.page_sizes
    }
    # The matrix's page sizes: 256 too from 0.5.12 (dsv4's row, read from its code).
    assert named | {1} == page_sizes >= {1, 16, 32, 64, 128}
    assert [o.value for o in axes["topk"].options] == ["", "1", "2", "4"]
    for option in axes["topk"].options[1:]:
        assert dict(option.fields) == speculation_with_topk(int(option.value))
        assert "--speculative-num-steps" in option.args
    named = [name.lower() for name in NAMED_MODELS]
    assert [o.value for o in axes["model"].options] == ["mha", "mla", *named]
    # A named model is what `compat check --model NAME` judges, with the flags of its card.
    for option in axes["model"].options[2:]:
        assert option.args.startswith("--model ") and not option.fix_search
        known = AttentionConfig.from_known_model(option.value, sglang_version=release)
        assert AttentionConfig(sglang_version=release, **dict(option.fields)) == known
    # The menus open on the computed opening (test_the_finder_opens_on_a_passing_launch).
    initial = {axis_id: axis.initial for axis_id, axis in axes.items()}
    assert initial == opening_selection(release)
    assert initial["page_size"] == initial["topk"] == ""


def test_every_modelled_release_is_offered_newest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(RELEASES_VARIABLE, "all")
    monkeypatch.delenv(MODELS_VARIABLE, raising=False)
    assert offered_releases() == FINDER_RELEASES == tuple(reversed(RELEASE_NAMES))
    assert len(FINDER_RELEASES) == len(RELEASES) and FINDER_RELEASES[0] == NEWEST
    models = offered_models()
    assert models == ("mha", "mla", *(name.lower() for name in NAMED_MODELS))
    files = [data_path(r, m) for r in FINDER_RELEASES for m in models]
    assert generated_names() == (INDEX_PATH, *files)
    # Unset, a build offers the newest release alone, with every model.
    monkeypatch.delenv(RELEASES_VARIABLE)
    assert offered_releases() == (NEWEST,)
    assert generated_names() == (INDEX_PATH, *(data_path(NEWEST, m) for m in models))
    # Fewer models too (kept in menu order); an unknown one is refused in one line.
    monkeypatch.setenv(MODELS_VARIABLE, "gpt-oss-120b,mha")
    assert offered_models() == ("mha", "gpt-oss-120b")
    monkeypatch.setenv(MODELS_VARIABLE, "gpt-oss")
    with pytest.raises(ValueError, match=r"gpt-oss is not an option of the model menu; "):
        offered_models()
    monkeypatch.delenv(MODELS_VARIABLE)
    # A build may offer fewer (kept newest first); a release that is not modelled is refused
    # in one line that names the choices.
    monkeypatch.setenv(RELEASES_VARIABLE, "0.5.7, 0.5.16")
    assert offered_releases() == ("0.5.16", "0.5.7")
    monkeypatch.setenv(RELEASES_VARIABLE, "all")
    assert offered_releases() == FINDER_RELEASES
    for wrong in ("0.5.99", " , "):
        monkeypatch.setenv(RELEASES_VARIABLE, wrong)
        with pytest.raises(ValueError, match=r"choose among 0\.5\.7, 0\.5\.8") as error:
            offered_releases()
        assert "\n" not in str(error.value)
    # The site build says so in one line too (MkDocs' PluginError), before computing anything.
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import Files

    monkeypatch.setenv(RELEASES_VARIABLE, "0.5.99")
    config = load_config(str(ROOT / "mkdocs.yml"))
    with pytest.raises(PluginError, match=r"0\.5\.99 is not a modelled release"):
        config.plugins.on_files(Files([]), config=config)


def test_the_releases_differ_where_sglang_changed() -> None:
    """Newest first; 0.5.7 has fp4_e2m1, the newest nvfp4 and not fp4_e2m1; only accepted
    backends are offered."""
    assert FINDER_RELEASES[0] == NEWEST and "0.5.7" in FINDER_RELEASES
    order = [RELEASE_NAMES.index(release) for release in FINDER_RELEASES]
    assert order == sorted(set(order), reverse=True), "newest first, each once"
    kv = {
        r: [o.value for o in finder_options(r)[AXIS_ORDER.index("kv_cache_dtype")].options]
        for r in FINDER_RELEASES
    }
    assert "fp4_e2m1" in kv["0.5.7"] and "nvfp4" not in kv["0.5.7"]
    assert {"nvfp4", "fp4_mx_block16", "mxfp8"} <= set(kv[NEWEST])
    assert "fp4_e2m1" not in kv[NEWEST]
    assert "cutlass_mla" in _accepted("0.5.7") and "cutlass_mla" not in _accepted(NEWEST)


@slow
def test_data_covers_every_combination_and_backend(data: dict[str, Any]) -> None:
    release = data["release"]
    combinations = math.prod(_radix(data))
    options = finder_options(release)
    classes = {tuple(sorted(dict(o.fields).items())) for o in options[1].options}
    assert data["hardware"] == len(classes)
    dtypes = len(set(RELEASES[release].kv_choices) - {"bfloat16"})
    pages = len(next(axis for axis in options if axis.id == "page_size").options)
    assert combinations == len(classes) * dtypes * pages * 4
    assert data["backends"] == _accepted(release)
    columns = len(data["columns"])
    widths = data["widths"]
    # Each table's numbers have as few digits as its size allows.
    sizes = {
        "finding": len(_findings(data)),
        "set": len(data["sets"]),
        "tuple": len(data["tuples"]),
        "pattern": len(data["patterns"]),
        "group": len(data["groups"]),
    }
    for key, size in sizes.items():
        assert 64 ** (widths[key] - 1) < size <= 64 ** widths[key] or widths[key] == 1
    assert len(data["fixlists"]) + 1 <= 64 ** widths["fixes"]
    # A block is every page size and topk of one hardware class and dtype.
    assert data["block"] == pages * data["topks"] and data["topks"] == 4
    assert combinations % data["block"] == 0
    blocks = combinations // data["block"]
    assert len(data["results"]) == blocks * columns * widths["group"]
    assert all(len(p) == data["block"] for p in data["patterns"])
    assert {len(t) for t in data["tuples"]} <= {
        pages * widths["set"],
        4 * widths["set"],
        pages * 4 * widths["set"],
    }
    assert len(data["fixes"]) == combinations * widths["fixes"]
    # A named model's rows carry no fix search (the page's command runs it).
    assert data["fix_search"] == (data["model"] in ("mha", "mla"))
    assert data["fix_search"] or (not data["fixlists"] and set(data["fixes"]) == {"0"})
    assert len(data["defaults"]) == 2 * combinations
    backends = len(data["backends"])
    assert [column for column in data["columns"][:backends]] == [[-1, b] for b in range(backends)]
    for index in range(0, combinations, 7):
        for column in range(columns):
            _outcome(data, index, column)  # every number decodes to a stored entry
    table = _findings(data)
    findings = len(table)
    texts = len(data["texts"])
    assert all(0 <= s < texts for finding in table for s in finding[1:])
    assert 64 ** (widths["text"] - 1) < texts <= 64 ** widths["text"] or widths["text"] == 1
    assert all(0 <= n < len(data["words"]) for t in range(texts) for n in _text_numbers(data, t))
    # Deduplicated: every word, text, finding, set, part, block and fix list is stored once.
    assert len({_text(data, t) for t in range(texts)}) == texts
    for table_name in ("words", "texts", "sets", "tuples", "patterns", "groups"):
        assert len(set(data[table_name])) == len(data[table_name]), table_name
    assert len(set(table)) == findings
    assert len({json.dumps(f) for f in data["fixlists"]}) == len(data["fixlists"])
    # Every verdict occurs somewhere in an architecture's space; a checkpoint both passes
    # and fails somewhere (DeepSeek V3.2 on 0.5.7 never passes without a warning).
    verdicts = {data["verdicts"][int(d)] for pattern in data["patterns"] for d in pattern}
    if data["fix_search"]:
        assert verdicts == set(data["verdicts"])
    else:
        assert "incompatible" in verdicts and len(verdicts) >= 2


@slow
def test_stored_verdicts_and_findings_equal_check(data: dict[str, Any]) -> None:
    count = math.prod(_radix(data))
    # The initial selection, the first and last combinations, and a seeded sample.
    sample = {0, count - 1, *random.Random(20240601).sample(range(count), 120)}
    initial = {axis["id"]: axis["initial"] for axis in data["axes"]}
    sample |= {i for i in range(count) if _combination(data, i) == initial}
    assert len(sample) > 100
    for index in sorted(sample):
        values = _combination(data, index)
        fields = menu_fields(values, data["release"])
        for b, backend in enumerate(data["backends"]):
            report = check(AttentionConfig(attention_backend=backend, **fields))
            assert _stored(data, index, b) == _expected(report), (values, backend)
        resolved = check(AttentionConfig(**fields)).resolved
        expected_defaults = [resolved.prefill_backend, resolved.decode_backend]
        digits = data["defaults"][2 * index : 2 * index + 2]
        shown = [(data["backends"] + [None])[data["digits"].index(d)] for d in digits]
        assert shown == expected_defaults, values


@slow
def test_one_backend_over_the_whole_space(data: dict[str, Any]) -> None:
    """Every combination for one backend, so no corner of the index is off by one."""
    b = data["backends"].index("flashinfer")
    for index in range(math.prod(_radix(data))):
        fields = menu_fields(_combination(data, index), data["release"])
        report = check(AttentionConfig(attention_backend="flashinfer", **fields))
        assert _stored(data, index, b) == _expected(report)


@slow
def test_errors_come_first_and_verdicts_match_severities(data: dict[str, Any]) -> None:
    order = {name: rank for rank, name in enumerate(data["severities"])}
    assert list(order) == ["error", "warning", "info"]
    table = _findings(data)
    cells = {
        (verdict, tuple(ids))
        for index in range(0, math.prod(_radix(data)), 5)
        for verdict, ids in (_outcome(data, index, c) for c in range(len(data["columns"])))
    }
    for verdict, ids in cells:
        severities = [table[i][0] for i in ids]
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


@slow
@pytest.mark.parametrize(("release", "model"), [("0.5.7", "mha"), ("0.5.7", "gpt-oss-120b")])
def test_rendering_is_deterministic_and_small(release: str, model: str) -> None:
    """A fresh computation in another interpreter, with another hash seed, writes the bytes
    the site build got (through its cache)."""
    data = _data(release, model)
    text = render_finder_data(release, model, data)
    assert json.loads(text) == json.loads(json.dumps(data))
    # Another interpreter, with another hash seed, writes the same bytes.
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from compat.publish.finder import render_finder_data as r; "
            f"sys.stdout.buffer.write(r({release!r}, {model!r}).encode())",
        ],
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        timeout=900,
        check=True,
    )
    assert other.stdout.decode("utf-8") == text
    script = render_finder_script(release, model, data)
    key = json.dumps(data_key(release, model))
    assert f"window.{DATA_GLOBAL}[{key}] = {text};\n" in script
    # The budget holds for each release's file on its own.
    assert len(script.encode("utf-8")) <= MAX_BYTES


def test_import_compat_stays_light() -> None:
    heavy = ["compat.publish.finder", "jinja2", "mkdocs", "torch"]
    code = f"import sys, compat; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"
    loaded = f"[m for m in {heavy[1:]!r} if m in sys.modules]"
    code = f"import sys, compat.publish.finder; print({loaded})"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"


@slow
def test_hook_adds_the_data_to_the_site_and_refuses_a_committed_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File, Files

    for name in (RELEASES_VARIABLE, MODELS_VARIABLE):
        monkeypatch.setenv(name, sample_env()[name])
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    # Through MkDocs' own event dispatch, which runs the hooks listed in mkdocs.yml.
    files = config.plugins.on_files(Files([]), config=config)
    index = files.get_file_from_path(INDEX_PATH)
    assert index is not None
    prefix = f"window.{INDEX_GLOBAL} = "
    line = next(line for line in index.content_string.splitlines() if line.startswith(prefix))
    listed = json.loads(line.removeprefix(prefix).removesuffix(";"))
    assert [entry["release"] for entry in listed] == list(SAMPLE_RELEASES)
    for entry in listed:
        release = entry["release"]
        assert [model["value"] for model in entry["models"]] == list(SAMPLE_MODELS)
        assert entry["initial_model"] == opening_selection(release, SAMPLE_MODELS)["model"]
        for model in entry["models"]:
            path = data_path(release, model["value"])
            assert path.endswith("/" + model["file"])
            added = files.get_file_from_path(path)
            assert added is not None
            assert added.content_string == render_finder_script(
                release, model["value"], _data(release, model["value"])
            )
            assert not (ROOT / "docs" / path).exists()
    assert not (ROOT / "docs" / INDEX_PATH).exists()

    for path in generated_names():
        committed = File(path, str(tmp_path), str(tmp_path / "site"), use_directory_urls=True)
        with pytest.raises(PluginError, match="generated at build time"):
            config.plugins.on_files(Files([committed]), config=config)


def _pair_config(data: dict[str, Any], index: int, column: int) -> AttentionConfig:
    prefill, decode = (data["backends"][b] for b in data["columns"][column])
    fields = menu_fields(_combination(data, index), data["release"])
    return AttentionConfig(
        prefill_attention_backend=prefill, decode_attention_backend=decode, **fields
    )


@slow
def test_pairs_equal_check_or_name_the_prefill_refusal(data: dict[str, Any]) -> None:
    """Each pair column is check() of that prefill/decode pair; where the prefill backend is
    refused whatever the partner, the column holds exactly the errors all pairs share."""
    backends = len(data["backends"])
    prefills = sorted({p for p, _ in data["columns"][backends:]})
    assert [data["backends"][p] for p in prefills] == ["fa4"]
    count = math.prod(_radix(data))
    rng = random.Random(7)
    blackwell = [i for i in range(count) if _combination(data, i)["gpu"] in ("b200", "b300")]
    sample = sorted({*rng.sample(range(count), 40), *rng.sample(blackwell, 30)})
    refused_seen = served_seen = 0
    for index in sample:
        for p_number, prefill in enumerate(prefills):
            refused = data["refused"][index * len(prefills) + p_number] == "1"
            columns = [c for c, (p, _) in enumerate(data["columns"]) if p == prefill]
            for column in columns:
                report = check(_pair_config(data, index, column))
                verdict, stored = _stored(data, index, column)
                if refused:
                    assert verdict == "incompatible" and not report.ok
                    expected = {(f.rule, f.message) for f in report.errors}
                    assert {(rule, msg) for _, rule, msg, _ in stored} <= expected
                else:
                    assert (verdict, stored) == _expected(report)
            refused_seen += refused
            served_seen += not refused
    assert refused_seen and served_seen


@slow
def test_fa4_prefill_with_an_fp4_cache_on_b200(data: dict[str, Any]) -> None:
    """PR #14467's headline case: the decode partners of fa4 prefill with an FP4 cache, as
    check() has them (for DeepSeek V3.2, whose sparse attention takes no FP4 cache, none)."""
    # SGLang runs nvfp4 only on the backends it lists for it, no fa4 pair among them: where
    # a release has no fp4_e2m1 (0.5.21 on), the question is asked with fp4_mx_block16.
    offered = [option.value for option in finder_options(data["release"])[2].options]
    kv = next(name for name in ("fp4_e2m1", "fp4_mx_block16") if name in offered)
    wanted = {"gpu": "b200", "kv_cache_dtype": kv, "page_size": "", "topk": ""}
    index = next(
        i
        for i in range(math.prod(_radix(data)))
        if _combination(data, i) == {"model": data["model"], **wanted}
    )
    fa4 = data["backends"].index("fa4")
    passing = set()
    for column, (prefill, decode) in enumerate(data["columns"]):
        if prefill == fa4:
            verdict, _ = _stored(data, index, column)
            report = check(_pair_config(data, index, column))
            assert (verdict != "incompatible") == report.ok, data["backends"][decode]
            if report.ok:
                passing.add(data["backends"][decode])
    assert "trtllm_mha" not in passing
    assert bool(passing) == (data["model"] != "deepseek-v3.2-exp")


@slow
def test_fixes_where_nothing_passes_are_the_guards_suggestions(data: dict[str, Any]) -> None:
    backends = len(data["backends"])
    count = math.prod(_radix(data))
    nothing_passes = {
        i for i in range(count) if all(_outcome(data, i, b)[0] == 2 for b in range(backends))
    }
    fixed = [i for i in range(count) if _fixes(data, i) is not None]
    assert set(fixed) == (nothing_passes if data["fix_search"] else set())
    for index in fixed[::97]:
        fields = menu_fields(_combination(data, index), data["release"])
        suggestions = check(AttentionConfig(**fields)).suggestions
        stored = _fixes(data, index)
        assert stored and stored == [(s.summary, s.reason) for s in suggestions[: len(stored)]]


def _one_row_a_part(release: str, model: int, hardware: int) -> list[Row]:
    """A stand-in for a part's rows (module level: the worker processes unpickle it)."""
    return [Row((), "", (release, str(model * 100 + hardware)), None)]


def test_computing_says_each_part_as_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build takes minutes for every release: it tells the builder each part (a release
    and a model) as it is done, newest first, and the parts come back in order whichever
    process computed them."""
    monkeypatch.setattr(finder, "release_rows", _one_row_a_part)
    said: list[str] = []
    rows = finder.compute_rows(["0.5.23", "0.5.15", "0.5.7"], said.append)
    parts = [
        (release, option.value)
        for release in ("0.5.23", "0.5.15", "0.5.7")
        for option in finder_options(release)[0].options
    ]
    assert list(rows) == parts
    assert [line.split("SGLang ", 1)[1].split(" computed", 1)[0] for line in said] == [
        f"{release}, model {model}" for release, model in parts
    ]
    assert [line.split("(", 1)[1].split(" parts", 1)[0] for line in said] == [
        f"{number} of {len(parts)}" for number in range(1, len(parts) + 1)
    ]
    for (release, model), part in rows.items():
        axes = finder_options(release)
        classes = len(hardware_classes(axes))
        number = [option.value for option in axes[0].options].index(model)
        assert [row.defaults for row in part] == [
            (release, str(number * 100 + h)) for h in range(classes)
        ]


ROWS_PER_RELEASE = 6
"""Combinations per release held to the guard by the test below (besides the initial one)."""


@slow
@pytest.mark.parametrize("release", FINDER_RELEASES)
def test_every_releases_rows_are_the_guards(release: str) -> None:
    """Every release, not only the sample whose whole data the tests above decode: the
    rows the build computes for it (seeded combinations and the initial selection) equal
    check() afresh, column by column, with SGLang's defaults and the guard's fixes. With
    the sample's data decoded to check() above and in Chromium, this is why CI's site may
    offer the sample only (`.ci/run`), while the published site computes every release."""
    axes = finder_options(release)
    rng = random.Random(f"rows-{release}")
    picks = [{axis.id: axis.initial for axis in axes}]
    picks += [
        {axis.id: rng.choice(axis.options).value for axis in axes} for _ in range(ROWS_PER_RELEASE)
    ]
    backends = finder_backends(release)
    severities = ("error", "warning", "info")
    for values in picks:
        row = combination_row(release, values)
        fields = menu_fields(values, release)
        shown = [
            (VERDICTS[verdict], [(severities[s], rule, msg, ph) for s, rule, msg, ph in found])
            for verdict, found in row.cells
        ]
        reports = [check(AttentionConfig(attention_backend=b, **fields)) for b in backends]
        assert shown[: len(backends)] == [_expected(r) for r in reports], values
        pairs = [
            (p, d, prefill_number)
            for prefill_number, p in enumerate(pair_prefills(release))
            for d in backends
            if d != p
        ]
        assert len(row.cells) == len(backends) + len(pairs)
        for (prefill, decode, number), cell in zip(pairs, shown[len(backends) :], strict=True):
            report = check(
                AttentionConfig(
                    prefill_attention_backend=prefill, decode_attention_backend=decode, **fields
                )
            )
            if row.refused[number] == "1":  # the prefill backend's own errors that all share
                assert cell[0] == "incompatible" and not report.ok
                assert {(rule, msg) for _, rule, msg, _ in cell[1]} <= {
                    (f.rule, f.message) for f in report.errors
                }
            else:
                assert cell == _expected(report), (values, prefill, decode)
        unset = check(AttentionConfig(**fields))
        assert row.defaults == (unset.resolved.prefill_backend, unset.resolved.decode_backend)
        if any(report.ok for report in reports) or values["model"] not in ("mha", "mla"):
            assert row.fixes is None
        else:
            expected = unset.suggestions[:MAX_FIXES]
            assert row.fixes == tuple((s.summary, s.reason) for s in expected), values


def test_finding_ids_follow_the_guards_order_or_the_build_fails() -> None:
    """A cell's findings are shown in id order, so ids must fit every cell's order."""
    a, b, c = ((0, rule, "m", "prefill+decode") for rule in "abc")

    def rows(*cells: tuple[Any, ...]) -> list[Row]:
        return [Row(tuple((2, cell) for cell in cells), "", (None, None), None)]

    assert finding_order(rows((b, c), (a, b), (a, c))) == [a, b, c]
    with pytest.raises(ValueError, match="both orders"):
        finding_order(rows((a, b), (b, c), (c, a)))


def test_the_model_menu_applies_gpt_oss_rules_on_b200() -> None:
    """Issue 22's case: the model menu's gpt-oss on B200 runs SGLang's GPT-OSS branch (its
    backend list, its default), which the architecture alone does not; its rows carry no
    fix search, its architecture's do."""
    backends = finder_backends(NEWEST)
    flashinfer = backends.index("flashinfer")
    menus = {"gpu": "b200", "kv_cache_dtype": "auto", "page_size": "", "topk": ""}
    model = combination_row(NEWEST, {"model": "gpt-oss-120b", **menus})
    generic = combination_row(NEWEST, {"model": "mha", **menus})
    verdict, findings = model.cells[flashinfer]
    assert VERDICTS[verdict] == "incompatible"
    assert "startup-gpt-oss-backends" in {rule for _, rule, _, _ in findings}
    assert VERDICTS[generic.cells[flashinfer][0]] != "incompatible"
    assert model.defaults == ("trtllm_mha", "trtllm_mha")
    expected = check(
        AttentionConfig.from_known_model(
            "gpt-oss-120b", sglang_version=NEWEST, platform="cuda", compute_capability=(10, 0)
        )
    )
    assert model.defaults == (expected.resolved.prefill_backend, expected.resolved.decode_backend)
    # DeepSeek V3.2's sparse attention: SGLang fixes its page size at 64.
    dsa = combination_row(NEWEST, {"model": "deepseek-v3.2-exp", **menus})
    cells = dict(zip(backends, dsa.cells, strict=False))
    assert any(VERDICTS[v] != "incompatible" for v, _ in cells.values())
    assert model.fixes is None and dsa.fixes is None


def test_the_model_menu_offers_the_families_operators_run() -> None:
    """Issue 22's list: gpt-oss, Llama 3 and 4, DeepSeek V3/R1/V3.2, Qwen3, Qwen3-Next, Gemma
    and Kimi-K2 each have a checkpoint in the menu, judged by its own architecture (so Llama
    3.1 runs SGLang's Llama branch and DeepSeek-R1 its DeepSeek V3 branch, as `--model` does)."""
    from compat.inputs.zoo import ZOO

    options = finder_options(NEWEST)[0].options[2:]
    families = {ZOO[name].family: name for name in NAMED_MODELS}
    assert set(families) >= {
        "gpt-oss", "llama3", "llama4", "deepseek-v3", "deepseek-v3.2", "qwen3", "qwen3-next",
        "gemma3", "kimi-k2",
    }  # fmt: skip
    labels = {option.value: option.label for option in options}
    notes = {option.value: option.note for option in options}
    # The label is the checkpoint's name (short enough for a phone's menu); the note under
    # the menu says the architecture it is judged as.
    assert labels["llama-3.1-8b-instruct"] == "Llama-3.1-8B-Instruct"
    assert notes["llama-3.1-8b-instruct"].startswith("LlamaForCausalLM, ")
    assert labels["deepseek-r1"] == "DeepSeek-R1"
    assert notes["deepseek-r1"].startswith("DeepseekV3ForCausalLM, ")
    # Llama 3 on an H100 with nothing set: SGLang's fa3 default for Llama's architecture;
    # DeepSeek-R1 on a B200: its MLA default with the page size that default sets.
    menus = {"kv_cache_dtype": "auto", "page_size": "", "topk": ""}
    llama = combination_row(NEWEST, {"model": "llama-3.1-8b-instruct", "gpu": "h100", **menus})
    r1 = combination_row(NEWEST, {"model": "deepseek-r1", "gpu": "b200", **menus})
    for row, name, gpu in ((llama, "Llama-3.1-8B-Instruct", (9, 0)), (r1, "DeepSeek-R1", (10, 0))):
        config = AttentionConfig.from_known_model(
            name, sglang_version=NEWEST, platform="cuda", compute_capability=gpu
        )
        resolved = check(config).resolved
        assert row.defaults == (resolved.prefill_backend, resolved.decode_backend)
    assert llama.defaults == ("fa3", "fa3") and r1.defaults == ("trtllm_mla", "trtllm_mla")


# -- issue 44: the finder opens on a working launch ----------------------------------------


@pytest.mark.parametrize("release", [NEWEST, "0.5.7"])
def test_the_finder_opens_on_a_passing_launch(release: str) -> None:
    """The opening selection is the first (model, GPU, KV dtype) of the menus, in the
    order `opening` searches them, on which SGLang's default launch passes: the row of its
    default backend is compatible, and so at least one row is."""
    axes = finder_options(release)
    initial = {axis.id: axis.initial for axis in axes}
    assert initial == opening_selection(release)
    assert default_launch_passes(initial, release)
    row = combination_row(release, initial)
    backends = finder_backends(release)
    assert any(VERDICTS[v] == "compatible" for v, _ in row.cells[: len(backends)])
    column = {name: number for number, name in enumerate(backends)}
    assert launch_passes(row.defaults, lambda name: row.cells[column[name]][0])
    # First in the search order: every earlier model has no passing launch anywhere, and
    # every earlier (GPU, dtype) of the chosen model fails.
    models = [option.value for option in axes[0].options]
    for model in models[: models.index(initial["model"])]:
        assert opening(release, model) is None, model
    gpus = gpu_order([option.value for option in axes[1].options])
    dtypes = [option.value for option in axes[2].options]
    order = [(g, k) for g in gpus for k in dtypes]
    for gpu, kv in order[: order.index((initial["gpu"], initial["kv_cache_dtype"]))]:
        assert not default_launch_passes({**initial, "gpu": gpu, "kv_cache_dtype": kv}, release)


@pytest.mark.parametrize("model", ["mla", "gpt-oss-120b", "deepseek-v3.2-exp"])
def test_each_models_opening_passes(model: str) -> None:
    """Each model's data opens its GPU and KV dtype menus on its own passing launch."""
    start = opening(NEWEST, model)
    assert start is not None
    gpu, kv = start
    values = {"model": model, "gpu": gpu, "kv_cache_dtype": kv, "page_size": "", "topk": ""}
    assert default_launch_passes(values, NEWEST)


@slow
def test_the_kv_dtype_follows_a_gpu_that_cannot_run_it(data: dict[str, Any]) -> None:
    """`kv_follow`, per hardware class, page size and top-k: the first KV dtype (menu
    order) on which SGLang's default launch passes there, as check() has it; the number of
    dtypes where none does."""
    release, axes = data["release"], {axis["id"]: axis for axis in data["axes"]}
    dtypes = [option["value"] for option in axes["kv_cache_dtype"]["options"]]
    pages, topks = len(axes["page_size"]["options"]), len(axes["topk"]["options"])
    width = len(data["kv_follow"]) // (data["hardware"] * pages * topks)
    follow = _numbers(data, data["kv_follow"], width)
    assert len(follow) == data["hardware"] * pages * topks
    h100 = next(o["hw"] for o in axes["gpu"]["options"] if o["value"] == "h100")
    rng = random.Random(f"follow-{release}-{data['model']}")
    blocks = {h100 * pages * topks, *rng.sample(range(len(follow)), 6)}
    for block in sorted(blocks):
        hardware, rest = divmod(block, pages * topks)
        page, topk = divmod(rest, topks)
        gpu = next(o["value"] for o in axes["gpu"]["options"] if o["hw"] == hardware)
        values = {
            "model": data["model"],
            "gpu": gpu,
            "page_size": axes["page_size"]["options"][page]["value"],
            "topk": axes["topk"]["options"][topk]["value"],
        }
        passing = [
            d for d in dtypes if default_launch_passes({**values, "kv_cache_dtype": d}, release)
        ]
        assert follow[block] == (dtypes.index(passing[0]) if passing else len(dtypes)), values
    if "nvfp4" in dtypes and data["model"] == "mla":
        # The case: nvfp4 on an H100 runs nowhere; the menu moves to a dtype that does.
        assert follow[h100 * pages * topks] < len(dtypes)


@slow
def test_other_platforms_backends_are_listed_per_hardware_class(data: dict[str, Any]) -> None:
    """`foreign`: per hardware class, the backends whose matrix entry does not run on its
    platform; the page folds their rows ("not for this platform (N)")."""
    release, axes = data["release"], {axis["id"]: axis for axis in data["axes"]}
    matrix = release_matrix(release)
    assert len(data["foreign"]) == data["hardware"]
    for option in axes["gpu"]["options"]:
        fields = menu_fields({**_some_values(), "gpu": option["value"]}, release)
        platform = Platform(fields["platform"])
        foreign = {data["backends"][b] for b in data["foreign"][option["hw"]]}
        expected = {b for b in data["backends"] if platform not in matrix.backend(b).platforms}
        assert foreign == expected, option["value"]
    b200 = next(o["hw"] for o in axes["gpu"]["options"] if o["value"] == "b200")
    # On a CUDA GPU: ROCm's, Intel's and Ascend's backends, never a CUDA one.
    on_cuda = {data["backends"][b] for b in data["foreign"][b200]}
    assert {"aiter", "wave", "intel_amx", "ascend"} <= on_cuda
    assert not on_cuda & {"flashinfer", "fa3", "triton"}


def _some_values() -> dict[str, str]:
    return {"model": "mha", "kv_cache_dtype": "auto", "page_size": "", "topk": ""}
