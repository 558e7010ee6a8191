"""The product predicts SGLang's start-up on every launch of each release's model zoo.

The zoo (tools/conformance/zoo.py) is 18 published checkpoints SGLang special-cases (their
config.json as published) on the four machines, under the flags the main grid never varies:
deterministic inference, tensor and data parallelism, `--device`, `--quantization`, PD
disaggregation, KV dtypes, page sizes, speculation and the sub-backend flags. SGLang's own
config loader,
ModelConfig and start-up resolution run on each launch; the product reads the same launch
the way `compat check` does (the command after `--`, the model's config.json, `--gpu`) and
must agree on whether SGLang refuses to start and, where it starts, on the prefill backend,
decode backend and page size it runs with.

Releases: those of the main conformance suite (`COMPAT_CONFORMANCE_RELEASES`); SGLang's
outcomes are cached beside the wheels, keyed by the wheel, the harness code and the zoo's configs.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conformance import releases
from conformance.availability import require_zoo
from conformance.compare import disagreements, report
from conformance.dump import rows as zoo_rows
from conformance.zoo import strategy_flag, sub_backend_choices

from compat.cli import main
from compat.inputs.zoo import ZOO
from compat.releases import RELEASES

MIN_ZOO = 2_000
MAX_ZOO = 3_400
MACHINES = {"H200", "B200", "MI300X", "CPU-AMX"}


@functools.cache
def _zoo(version: str) -> list[dict[str, Any]]:
    """SGLang's outcomes on `version`'s zoo, once per session (cached beside the wheels)."""
    require_zoo(version)
    return zoo_rows(version, workers=2, cache=True, zoo=True)


@pytest.fixture(scope="module", params=releases.selected())
def rows(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return _zoo(request.param)


def test_zoo_covers_every_model_machine_and_flag(rows: list[dict[str, Any]]) -> None:
    assert MIN_ZOO <= len(rows) <= MAX_ZOO
    assert {row["model"] for row in rows} == set(ZOO)
    assert len({model.config["architectures"][0] for model in ZOO.values()}) >= 15
    assert {row["gpu"] for row in rows} == MACHINES
    flags = Counter(flag for row in rows for flag in row["argv"] if flag.startswith("--"))
    for flag in (
        "--enable-deterministic-inference",
        "--tp-size",
        "--dp-size",
        "--enable-dp-attention",
        "--device",
        "--quantization",
        "--disaggregation-mode",
        "--trust-remote-code",
    ):
        assert flags[flag] >= 50, flag
    refused = sum(row["outcome"]["refused"] for row in rows)
    assert 0 < refused < len(rows)
    # Every sub-backend flag the release has, each of its choices, for a model with the part.
    version = rows[0]["version"]
    for field, (option, choices) in sub_backend_choices(version).items():
        tried = {
            row["argv"][row["argv"].index(option) + 1] for row in rows if option in row["argv"]
        }
        assert tried == set(choices), (field, sorted(set(choices) - tried))


def test_the_mamba_cache_strategies_are_the_parsers(rows: list[dict[str, Any]]) -> None:
    version = rows[0]["version"]
    assert RELEASES[version].mamba_strategy_choices == strategy_flag(version)[1]
    assert any("mamba" in flag for row in rows for flag in row["argv"])


def test_product_predicts_every_zoo_outcome(rows: list[dict[str, Any]]) -> None:
    found = disagreements(rows)
    if found:
        pytest.fail(f"sglang {rows[0]['version']} zoo: " + report(len(rows), found), pytrace=False)


# The issue's example commands, as an operator writes them (`--tp 4` for `--tp-size 4`),
# each with the zoo launch it is and what SGLang's own start-up code does with it (checked
# against the release's outcome below, not only stated).
EXAMPLES = [
    # (release, machine, zoo model, flags as written, the zoo row's flags, SGLang starts on)
    ("0.5.7", "H200", "gpt-oss-120b", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.7", "B200", "gpt-oss-120b", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.23", "H200", "gpt-oss-120b", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.23", "B200", "gpt-oss-120b", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.7", "H200", "Llama-4-Scout-17B-16E", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.23", "B200", "Llama-4-Scout-17B-16E", ["--attention-backend", "flashinfer"], None, None),
    ("0.5.7", "B200", "Qwen3-8B", ["--enable-deterministic-inference"], None, None),
    ("0.5.23", "B200", "Qwen3-8B", ["--enable-deterministic-inference"], None, ("flashinfer", 1)),
    (
        "0.5.23", "MI300X", "Kimi-K2-Instruct", ["--trust-remote-code", "--tp", "4"],
        ["--trust-remote-code", "--tp-size", "4"], ("aiter", 1),
    ),
    ("0.5.23", "B200", "Qwen3-Next-80B-A3B", ["--kv-cache-dtype", "nvfp4"], None, None),
    ("0.5.7", "H200", "DeepSeek-V3.2-Exp", [], None, ("nsa", 64)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "gpu", "model", "written", "zoo_flags", "starts"),
    EXAMPLES,
    ids=[f"{e[0]}-{e[1]}-{e[2]}-{'-'.join(e[3]) or 'plain'}" for e in EXAMPLES],
)
def test_the_issue_examples_answer_as_sglang_does(
    release: str,
    gpu: str,
    model: str,
    written: list[str],
    zoo_flags: list[str] | None,
    starts: tuple[str, int] | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if release not in releases.selected():
        pytest.skip(f"{release} is not among {releases.ENVIRONMENT}")
    argv = zoo_flags if zoo_flags is not None else written
    outcome = next(
        row["outcome"]
        for row in _zoo(release)
        if row["gpu"] == gpu and row["model"] == model and row["argv"] == argv
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(ZOO[model].config))
    code = main(
        [
            "check", "--json", "--parity", "--gpu", gpu, "--sglang-version", release,
            "--model-config", str(config),
            "--", "python3", "-m", "sglang.launch_server", "--model-path", ZOO[model].source,
            *written,
        ]
    )  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    resolved = report["resolved"]
    # SGLang's answer, and the product's through `compat check` as an operator runs it.
    assert outcome["refused"] is (starts is None)
    assert (code == 1) is outcome["refused"]
    assert report["refused_at_startup"] is outcome["refused"]
    if starts is None:
        assert [f for f in report["errors"] if f["enforced"] == "startup"], report
        return
    assert (outcome["prefill_backend"], outcome["page_size"]) == starts
    assert (
        resolved["prefill_attention_backend"],
        resolved["decode_attention_backend"],
        resolved["page_size"],
    ) == (
        outcome["prefill_backend"],
        outcome["decode_backend"],
        outcome["page_size"],
    )
    assert not [f for f in report["ignored_flags"] if f.startswith(("--tp", "--trust"))]
