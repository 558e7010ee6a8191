"""Compare the product's prediction with what SGLang's start-up did, launch by launch.

`prediction(row)` is the one adapter from a grid row to `compat.check()`; adjust it when
the product's API moves. Rows are the dump's: {"version", "gpu", "model", "argv", "outcome"};
the product is asked about the row's own SGLang release (`sglang_version`). A release the
product does not model yet is one disagreement per row ("product raised ..."), not a crash.

    PYTHONPATH=tools python -m conformance.compare conformance-0.5.7.jsonl [--examples N]
    PYTHONPATH=tools python -m conformance.compare conformance-0.5.*.jsonl --examples 3

prints, per file, the agreement figure and every disagreement, grouped (SGLang is not
re-run).
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.fake_torch import GPU_PROFILES
from conformance.models import MODELS

if TYPE_CHECKING:
    from compat.guard.report import Report

VERSION = "0.5.7"  # rows written before dumps carried their release
# argv flag -> AttentionConfig field, and how to read its value.
_FLAGS = {
    "--attention-backend": ("attention_backend", str),
    "--prefill-attention-backend": ("prefill_attention_backend", str),
    "--decode-attention-backend": ("decode_attention_backend", str),
    "--kv-cache-dtype": ("kv_cache_dtype", str),
    "--page-size": ("page_size", int),
    "--speculative-algorithm": ("speculative_algorithm", str),
    "--speculative-eagle-topk": ("speculative_eagle_topk", int),
    "--speculative-num-steps": ("speculative_num_steps", int),
    "--speculative-num-draft-tokens": ("speculative_num_draft_tokens", int),
    "--speculative-attention-mode": ("speculative_attention_mode", str),
}


@dataclass(frozen=True)
class Verdict:
    """One side's answer: refused at start-up, else the resolved phases and page size."""

    refused: bool
    prefill: str | None
    decode: str | None
    page: int | None
    reasons: tuple[str, ...] = ()

    def key(self) -> tuple[object, ...]:
        # A refusal is compared as a refusal only: SGLang stops before resolving the rest.
        # Whether it is invalid input (argparse's refusal, the product's InvalidConfigError)
        # or a start-up refusal must match too.
        if self.refused:
            first = self.reasons[0] if self.reasons else ""
            return (True, first == INVALID or first.startswith("argparse"))
        return (False, self.prefill, self.decode, self.page)

    def describe(self) -> str:
        if self.refused:
            return "refuses: " + ("; ".join(self.reasons) or "(no reason given)")
        return f"starts: prefill {self.prefill}, decode {self.decode}, page {self.page}"


def model_inputs(model: str) -> dict[str, Any]:
    """What an operator states about the model: its architecture, MLA or not, KV heads."""
    config = MODELS[model]
    return {
        "model_architecture": config["architectures"][0],
        # DeepSeek-style MLA configs carry a compressed-KV rank; SGLang's own decision
        # (ModelConfig.attention_arch) is checked against this in the harness tests.
        "attention_arch": "mla" if "kv_lora_rank" in config else "mha",
        "kv_heads": config["num_key_value_heads"],
    }


def config_kwargs(row: dict[str, Any]) -> dict[str, Any]:
    """The AttentionConfig keyword arguments describing one grid row."""
    profile = GPU_PROFILES[row["gpu"]]
    kwargs: dict[str, Any] = {
        "platform": profile.platform,
        "compute_capability": profile.capability if profile.platform == "cuda" else None,
        "cuda_version": profile.cuda_version_tuple,
        "sglang_version": row.get("version", VERSION),
        **model_inputs(row["model"]),
    }
    if row.get("env"):  # the environment axis (tests/engine/test_conformance_env.py)
        kwargs["environment"] = tuple(sorted(row["env"].items()))
    argv = row["argv"]
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        field, parse = _FLAGS[flag]
        kwargs[field] = parse(value)
    return kwargs


INVALID = "invalid input"


@functools.cache
def _zoo_configs() -> Path:
    """The zoo's published configs as files, as an operator passes them (--model-config)."""
    # Imported where used: tools/intake.py loads this module before it may call
    # compat.releases.stand_in(), which must come before any import of compat.inputs.
    from compat.inputs.zoo import ZOO

    root = Path(tempfile.mkdtemp(prefix="compat-zoo-"))
    for name, model in ZOO.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(model.config))
    return root


def zoo_config(row: dict[str, Any]) -> Any:
    """The AttentionConfig of one zoo row, read as `compat check` reads a launch: the
    command after `--`, the model's config.json (`--model-config`) and the machine
    (`--gpu`, or `--platform cpu` for the AMX CPU, and `--cuda-version`: the CUDA the
    harness's torch reports, not the release's image's)."""
    from compat.inputs.assemble import LaunchRequest, assemble

    profile = GPU_PROFILES[row["gpu"]]
    request = LaunchRequest(
        command=("python3", "-m", "sglang.launch_server", *row["argv"]),
        model_config=str(_zoo_configs() / row["model"]),
        gpu=None if profile.platform == "cpu" else row["gpu"],
        platform="cpu" if profile.platform == "cpu" else None,
        cuda_version=profile.cuda_version,
        detect=False,
        sglang_version=row.get("version", VERSION),
        # The DSA-on-ROCm axis (tests/engine/test_conformance_dsa_rocm.py): the variables
        # and kernel package versions SGLang ran with, as `--env` and `--package` give them.
        environment=tuple(f"{name}={value}" for name, value in row.get("env", {}).items()),
        packages=tuple(f"{name}=={version}" for name, version in row.get("packages", {}).items()),
    )
    return assemble(request).config


def prediction(row: dict[str, Any]) -> Verdict:
    """The product's prediction of SGLang's start-up for one grid (or zoo) row."""
    from compat import AttentionConfig, InvalidConfigError, check
    from compat.inputs.assemble import InputError
    from compat.inputs.zoo import ZOO

    try:
        zoo = row["model"] in ZOO
        config = zoo_config(row) if zoo else AttentionConfig(**config_kwargs(row))
    except (InvalidConfigError, InputError) as error:
        # Invalid input for this release, as SGLang's own argument parser refuses it; the
        # comparison below requires SGLang to refuse it too (at argparse, see `observed`).
        problems = getattr(error, "problems", (error,))
        return Verdict(True, None, None, None, (INVALID, *map(str, problems)))
    return verdict_of(check(config))


def verdict_of(report: Report) -> Verdict:
    """What the product says SGLang's start-up does, from the guard's report."""
    resolved = report.resolved
    return Verdict(
        refused=report.refused_at_startup,
        prefill=resolved.prefill_backend,
        decode=resolved.decode_backend,
        page=resolved.page_size,
        reasons=tuple(f"[{finding.rule}] {finding.message}" for finding in report.startup_reasons),
    )


def observed(row: dict[str, Any]) -> Verdict:
    """What SGLang's start-up did for one grid row."""
    outcome = row["outcome"]
    return Verdict(
        refused=outcome["refused"],
        prefill=outcome["prefill_backend"],
        decode=outcome["decode_backend"],
        page=outcome["page_size"],
        reasons=(outcome["error"],) if outcome["error"] else (),
    )


@dataclass(frozen=True)
class Disagreement:
    row: dict[str, Any]
    sglang: Verdict
    product: Verdict | None  # None: the product raised `raised` instead of predicting
    raised: str | None = None

    @property
    def group(self) -> str:
        if self.product is None:
            return f"product raised | {self.raised}"[:140]
        if self.sglang.refused != self.product.refused:
            if self.sglang.refused:
                who, reason = "SGLang refuses, product predicts start", self.sglang.reasons
            else:
                who, reason = "SGLang starts, product predicts refusal", self.product.reasons
            return f"{who} | {(reason or ('?',))[0][:110]}"
        fields = [
            name
            for name, a, b in (
                ("prefill", self.sglang.prefill, self.product.prefill),
                ("decode", self.sglang.decode, self.product.decode),
                ("page", self.sglang.page, self.product.page),
            )
            if a != b
        ]
        return "both start, resolution differs in " + "+".join(fields)

    def line(self) -> str:
        row = self.row
        product = self.product.describe() if self.product else f"raised {self.raised}"
        return (
            f"  {row['gpu']} {row['model']} {' '.join(row['argv']) or '(no flags)'}\n"
            f"      SGLang : {self.sglang.describe()}\n"
            f"      product: {product}"
        )


def disagreements(
    rows: Iterable[dict[str, Any]],
    predict: Callable[[dict[str, Any]], Verdict] = prediction,
) -> list[Disagreement]:
    """The rows where `predict` (the grid's adapter unless an axis has its own) and what
    SGLang did differ."""
    found = []
    for row in rows:
        sglang = observed(row)
        try:
            product = predict(row)
        except Exception as exc:  # reported with the rest, not as one traceback
            found.append(Disagreement(row, sglang, None, f"{type(exc).__name__}: {exc}"))
            continue
        if sglang.key() != product.key():
            found.append(Disagreement(row, sglang, product))
    return found


RAISED_EXAMPLES = 5


def report(total: int, found: Sequence[Disagreement], examples: int | None = None) -> str:
    """The agreement figure, the groups with counts, then every disagreement (or the
    first `examples` of each group)."""
    agreed = total - len(found)
    lines = [f"agreement {agreed}/{total} ({100 * agreed / max(total, 1):.2f}%)"]
    groups: dict[str, list[Disagreement]] = defaultdict(list)
    for item in found:
        groups[item.group].append(item)
    counts = Counter({name: len(items) for name, items in groups.items()})
    lines += [f"{count:6d}  {name}" for name, count in counts.most_common()]
    for name, _ in counts.most_common():
        lines += ["", f"== {name} ({counts[name]})"]
        # The product raising (e.g. a release it does not model yet) repeats one message:
        # a few launches show it.
        shown = (
            min(examples or RAISED_EXAMPLES, RAISED_EXAMPLES)
            if name.startswith("product raised")
            else examples
        )
        lines += [item.line() for item in groups[name][:shown]]
    return "\n".join(lines)


def load(path: Path) -> list[dict[str, Any]]:
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.compare", description=__doc__)
    parser.add_argument(
        "dumps", type=Path, nargs="+", help="JSON Lines written by conformance.dump"
    )
    parser.add_argument("--examples", type=int, help="print only N launches per group")
    args = parser.parse_args(argv)
    status = 0
    for path in args.dumps:
        rows = load(path)
        found = disagreements(rows)
        if len(args.dumps) > 1:
            print(f"=== {path}")
        print(report(len(rows), found, args.examples))
        status = status or (1 if found else 0)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
