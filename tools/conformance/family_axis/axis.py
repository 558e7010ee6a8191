"""The family axis: each architecture a release special-cases, on a few machines, with the
backend flags and deterministic inference, through the release's own start-up code.

The grid runs five text models and the zoo 21 checkpoints; a release's branch for a model
family neither holds is never run. Here the architectures come from the wheel itself
(`scan.special_cased`): every one whose branch touches an attention field. Each runs as a
stand-in checkpoint, a grid config with the architecture swapped in (Llama-3.1-8B's, or
DeepSeek-V3's for a branch that reads the MLA ranks, or DeepSeek-V3's with the head fields
DeepSeek V4's shapes read), so what differs from launch to launch is only what SGLang keys
on the architecture. A branch that reads a field neither carries
(a vision tower, an indexer) cannot run: its launches are counted as unreadable and left
out of the comparison, never guessed.

Launches per (machine, architecture): no flag, `--enable-deterministic-inference`, each
of `FLAG_BACKENDS` with and without it, and each of `EXTRA_FLAGS`. SGLang's outcomes are
cached beside the wheels, keyed by the wheel, the harness and this package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from conformance.compare import Disagreement, Verdict, verdict_of
from conformance.compare import disagreements as compared
from conformance.fake_torch import GPU_PROFILES
from conformance.family_axis.scan import special_cased
from conformance.models import MODELS
from conformance.wheel import FRESH, cache_dir, harness_digest, source_root

MACHINES = ("H200", "B200", "MI300X")
# The grid's configs a stand-in is made from, tried in order: an MHA model, then an MLA one
# (for the branches that read the compressed-KV ranks), then the MLA one with the fields
# DeepSeek V4's shapes read (tried last, so no other architecture's stand-in changes).
BASES = ("Llama-3.1-8B", "DeepSeek-V3", "DeepSeek-V3+V4")
# What `ModelConfig._derive_model_shapes` reads for DeepseekV4ForCausalLM (0.5.12
# configs/model_config.py:648-659; the same in later releases): `head_dim` and
# `qk_rope_head_dim` (the head split), `sliding_window` (`window_size`), `index_head_dim`
# (the indexer), `compress_ratios` (per layer; 0, 4 or 128). Sizes of V4's published shape.
_EXTRA_FIELDS: dict[str, dict[str, Any]] = {
    "V4": {
        "head_dim": 512,
        "qk_rope_head_dim": 64,
        "sliding_window": 128,
        "index_head_dim": 128,
        "compress_ratios": [0, 0, 4, 128],
    },
}
FLAG_BACKENDS = ("flashinfer", "triton")
DETERMINISTIC = ("--enable-deterministic-inference",)
UNREADABLE = "unreadable"
# The harness modules whose change does not change SGLang's side (dump.py's list).
_PRODUCT_SIDE = frozenset({"compare.py", "model_data.py", "zoo_summary.py", "build.py"})


def stand_in(architecture: str, base: str) -> dict[str, Any]:
    """The config.json of the stand-in checkpoint of `architecture`, made from `base`
    (`grid model+extra`: the grid's config with `_EXTRA_FIELDS[extra]` added)."""
    model, _, extra = base.partition("+")
    return {**MODELS[model], **_EXTRA_FIELDS.get(extra, {}), "architectures": [architecture]}


def model_name(architecture: str, base: str) -> str:
    return f"{architecture}@{base}"


# Launches that reach the branches' other conditions: one phase flag alone (the branches
# that fill or check the other phase), and an FP8 KV cache (the defaults that read it).
EXTRA_FLAGS = (
    ("--prefill-attention-backend", "triton"),
    ("--kv-cache-dtype", "fp8_e4m3"),
)


def flag_sets() -> list[tuple[str, ...]]:
    sets: list[tuple[str, ...]] = [(), DETERMINISTIC]
    for backend in FLAG_BACKENDS:
        chosen = ("--attention-backend", backend)
        sets += [chosen, (*chosen, *DETERMINISTIC)]
    return sets + list(EXTRA_FLAGS)


def launches(version: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(machine, architecture, flags) of `version`'s family axis, in a fixed order."""
    return [
        (gpu, architecture, flags)
        for gpu in MACHINES
        for architecture in special_cased(version)
        for flags in flag_sets()
    ]


def _cache_file(version: str) -> Path:
    digest = harness_digest(version, _PRODUCT_SIDE)
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return cache_dir() / "outcomes" / f"families-{version}-{digest.hexdigest()[:16]}.jsonl"


def rows(version: str, cache: bool = True) -> list[dict[str, Any]]:
    """Every launch of the axis with SGLang `version`'s outcome (`outcome` None and
    `unreadable` set where no stand-in could carry the release's branch; `base` names the
    grid config the stand-in was made from)."""
    path = _cache_file(version) if cache and not os.environ.get(FRESH) else None
    if path is not None and path.is_file():
        return [json.loads(line) for line in path.read_text().splitlines()]
    source_root(version)
    planned = launches(version)
    stdin = "".join(json.dumps([gpu, arch, list(flags)]) + "\n" for gpu, arch, flags in planned)
    tools = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tools, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "conformance.family_axis.worker", version],
        input=stdin, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"family axis worker failed:\n{done.stderr[-4000:]}")
    results = [json.loads(line) for line in done.stdout.splitlines()]
    table = [
        {"version": version, "gpu": gpu, "model": arch, "argv": list(flags), **result}
        for (gpu, arch, flags), result in zip(planned, results, strict=True)
    ]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text("".join(json.dumps(row) + "\n" for row in table))
        tmp.replace(path)
    return table


@cache
def _configs() -> Path:
    return Path(tempfile.mkdtemp(prefix="compat-families-"))


def _config_file(architecture: str, base: str) -> Path:
    directory = _configs() / model_name(architecture, base)
    if not directory.is_dir():
        directory.mkdir()
        (directory / "config.json").write_text(json.dumps(stand_in(architecture, base)))
    return directory


def prediction(row: dict[str, Any]) -> Verdict:
    """The product's answer for one row, read as `compat check` reads the launch: the
    command, the stand-in's config.json and the machine."""
    from compat import check
    from compat.inputs.assemble import LaunchRequest, assemble

    request = LaunchRequest(
        command=("python3", "-m", "sglang.launch_server", *row["argv"]),
        model_config=str(_config_file(row["model"], row["base"])),
        gpu=row["gpu"],
        detect=False,
        sglang_version=row["version"],
    )
    return verdict_of(check(assemble(request).config))


def disagreements(table: Iterable[dict[str, Any]]) -> list[Disagreement]:
    """The comparable rows where the product and SGLang differ."""
    return compared((row for row in table if not row.get(UNREADABLE)), prediction)


def machines_known() -> bool:
    return all(gpu in GPU_PROFILES for gpu in MACHINES)
