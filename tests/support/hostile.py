"""Hostile-input fuzzing of the command line and the API, seeded and countable.

The contract: every in-process `compat ...` call exits 0, 1 or 2 (never 3, never an
exception), says why on stderr when it exits 2, leaves special files as they were, and a
write that succeeded leaves files that `--check` finds fresh; every API call returns or
raises one of the documented exceptions. The inputs are the classes a hostile user
tries: deep, huge and odd JSON, non-UTF-8 arguments and strict or ASCII stdout, FIFOs,
devices, symbolic links out of the tree, read-only and broken trees, pasted commands.

Run directly for the acceptance figures:
    python tests/support/hostile.py --cli 10000 --api 20000 [--seed N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hostile_files import Workspace, make_tree, random_json, workspace
from hostile_launch import launch_argv, shaped

from compat import (
    MATRIX,
    AttentionConfig,
    IncompatibleConfigError,
    InvalidConfigError,
    ModelConfigError,
    PlatformDetectionError,
    check,
    enforce,
)
from compat.cli import main
from compat.inputs.config import FLAG_FIELDS
from compat.inputs.model_config import load_model_facts
from compat.releases import NEWEST, RELEASES
from compat.vocab.terms import KV_DTYPE_SPELLINGS

# Every release's algorithms are the newest's or a subset (a removed one is a refusal too).
SPECULATIVE_ALGORITHMS = RELEASES[NEWEST].algorithm_choices

BACKENDS = MATRIX.backend_names
NEAR_MISSES = (
    "",
    " ",
    "MHA",
    "fa3 ",
    "FP8",
    "None",
    "0",
    "-1",
    "sm",
    "10.",
    "１０.０",
    "eagle\x00",
)


@dataclass
class Tally:
    cli_calls: int = 0
    api_calls: int = 0
    exit_codes: Counter[int] = field(default_factory=Counter)
    api_outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.failures.append(what)


# -- running ---------------------------------------------------------------------------------


def _streams(rng: random.Random) -> tuple[io.TextIOBase, io.TextIOBase]:
    """StringIO, or byte streams as strict as a real UTF-8 or ASCII terminal."""
    encoding = rng.choice([None, "utf-8", "ascii"])
    if encoding is None:
        return io.StringIO(), io.StringIO()
    return (
        io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict"),
        io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict"),
    )


def _text(stream: io.TextIOBase) -> str:
    if isinstance(stream, io.StringIO):
        return stream.getvalue()
    assert isinstance(stream, io.TextIOWrapper)
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode(stream.encoding, errors="replace")


def run_cli(argv: list[str], rng: random.Random, tally: Tally) -> tuple[int, str, str]:
    """One in-process invocation; anything but an exit code in {0, 1, 2} is a failure."""
    out, err = _streams(rng)
    tally.cli_calls += 1
    code: Any
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code
    except BaseException as error:  # counting them is the point
        tally.exit_codes[-1] += 1
        tally.fail(f"{argv!r} raised {type(error).__name__}: {error}")
        return -1, "", ""
    stdout, stderr = _text(out), _text(err)
    tally.exit_codes[code] += 1
    if code not in (0, 1, 2):
        tally.fail(f"{argv!r} exited {code!r}: {stderr.strip()[-300:]}")
    elif code == 2 and not stderr.strip():
        tally.fail(f"{argv!r} exited 2 without saying why")
    if "Traceback" in stdout + stderr:
        tally.fail(f"{argv!r} printed a traceback")
    return code, stdout, stderr


def _weird(rng: random.Random) -> str:
    """A token as a hostile shell would pass it: junk, near misses, non-UTF-8 bytes."""
    roll = rng.randrange(6)
    if roll == 0:
        return os.fsdecode(bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))))
    if roll == 1:
        return rng.choice(NEAR_MISSES)
    if roll == 2:
        return "9" * rng.choice([19, 5000])
    if roll == 3:
        return "".join(chr(rng.randrange(1, 0x2FFFF)) for _ in range(rng.randint(0, 5)))
    return rng.choice(["--", "-", "-h", "--json", "'", '"', "a b", "--x=y z"])


CHECK_VALUES: dict[str, list[str]] = {
    "--attention-backend": list(BACKENDS),
    "--prefill-attention-backend": list(BACKENDS),
    "--decode-attention-backend": list(BACKENDS),
    "--kv-cache-dtype": sorted(KV_DTYPE_SPELLINGS),
    "--page-size": ["1", "16", "64", "0", "-3"],
    "--speculative-algorithm": [*SPECULATIVE_ALGORITHMS, "eagle"],
    "--speculative-eagle-topk": ["1", "2", "4"],
    "--speculative-attention-mode": ["prefill", "decode"],
    "--attention-arch": ["mha", "mla"],
    "--compute-capability": ["10.0", "sm100", "90", "8.6", "sm_120", "nan", "0x10", "1e3", ""],
    "--platform": ["cuda", "rocm", "npu", "xpu", "cpu"],
    "--gpu": ["H100", "B200", "h200", "MI300X", "RTX 4090", "A100", "B300"],
    "--model": ["gpt-oss-120b", "DeepSeek-R1", "deepseek-ai/DeepSeek-R1", "gemma-3-27b-it"],
}
# What a document makes of a pasted command (#42 M7): typeset dashes and quotes.
TYPESET = {"--": ("\u2013", "\u2014", "\u2212\u2212"), '"': ("\u201c", "\u201d"), "'": ("\u2019",)}
# `NAME=value` before the program, and a shell variable no shell expanded (#42 L6).
PREFIXES = ("CUDA_VISIBLE_DEVICES=0", "A=1 B=", "PATH=", "X=$HOME")
# Hub ids of checkpoints the package knows, and one it does not (#43).
HUB_IDS = ("deepseek-ai/DeepSeek-R1", "openai/gpt-oss-120b", "Qwen/Qwen3-8B", "acme/unknown")
# The flags that name a config.json: the model's and the speculative draft model's.
CONFIG_FLAGS = ("--model-config", "--draft-model-config")


def _flags(rng: random.Random, zoo: list[str], count: int) -> list[str]:
    tokens: list[str] = []
    for _ in range(count):
        flag = rng.choice([*CHECK_VALUES, *CONFIG_FLAGS, "--sliding-window", "--json"])
        if flag == "--model" and "--model-config" in tokens:
            continue  # refused together, every time: a case that tells nothing
        if flag in ("--sliding-window", "--json"):
            tokens.append(flag)
            continue
        values = zoo if flag in CONFIG_FLAGS else CHECK_VALUES[flag]
        value = rng.choice(values) if rng.random() < 0.85 else _weird(rng)
        tokens += [f"{flag}={value}"] if rng.random() < 0.2 else [flag, value]
    return tokens


def _check_argv(rng: random.Random, zoo: list[str]) -> list[str]:
    argv = ["check", "--platform", rng.choice(CHECK_VALUES["--platform"] + ["cuda"] * 4)]
    if rng.random() < 0.05:
        argv = ["check"]  # detection with torch, when installed
    argv += _flags(rng, zoo, rng.randint(0, 5))
    if rng.random() < 0.5:
        launch = ["python3", "-m", "sglang.launch_server"]
        for flag in rng.sample(FLAG_FIELDS, rng.randint(0, 3)):
            name = "--" + flag.replace("_", "-")
            launch += [name, rng.choice(CHECK_VALUES.get(name, ["1"]))]
        if rng.random() < 0.3:
            launch += ["--model-path", rng.choice([*zoo, *HUB_IDS])]
        if rng.random() < 0.15:
            launch += ["--speculative-draft-model-path", rng.choice([*zoo, *HUB_IDS])]
        if rng.random() < 0.3:
            launch.insert(rng.randrange(len(launch) + 1), _weird(rng))
        if rng.random() < 0.15:
            launch = _typeset(rng, launch)
        if rng.random() < 0.1:
            launch = [*rng.choice(PREFIXES).split(), *launch]
        argv += ["--", *shaped(rng, launch)]
    return argv


def _typeset(rng: random.Random, words: list[str]) -> list[str]:
    """One word with its `--` or a quote as a word processor writes it."""
    at = rng.randrange(len(words))
    for ascii_text, typeset in TYPESET.items():
        if ascii_text in words[at]:
            words = list(words)
            words[at] = words[at].replace(ascii_text, rng.choice(typeset), 1)
            return words
    words = list(words)
    words[at] = rng.choice(TYPESET['"']) + words[at]
    return words


def cli_case(rng: random.Random, space: Workspace, tally: Tally) -> None:
    roll = rng.random()
    if roll < 0.4:
        run_cli(_check_argv(rng, space.zoo), rng, tally)
    elif roll < 0.5:
        argv = launch_argv(rng, _check_argv(rng, space.zoo), space)
        code, out, _ = run_cli(argv, rng, tally)
        if code == 0 and "would run: " not in out and "usage:" not in out:  # -h is help
            tally.fail(f"{argv!r}: --dry-run exited 0 without saying what it would run")
    elif roll < 0.6:
        argv = ["matrix", *_flags(rng, space.zoo, rng.randint(0, 3))]
        run_cli([t for t in argv if t != "--sliding-window"], rng, tally)
    elif roll < 0.65:
        run_cli(["explain", rng.choice([*BACKENDS, _weird(rng)])], rng, tally)
    elif roll < 0.7:
        run_cli([_weird(rng) for _ in range(rng.randint(0, 4))], rng, tally)
    elif roll < 0.85:
        _tree_case(rng, space, tally)
    else:
        path, unharmed = rng.choice(space.outputs)
        argv = ["export", "--output", path]
        if rng.random() < 0.2:
            argv.append("--follow-symlinks")
        run_cli(argv, rng, tally)
        if "--follow-symlinks" in argv:
            space.reset_outputs()
        elif not unharmed():
            tally.fail(f"{argv!r} harmed what {path} points at")


def _tree_case(rng: random.Random, space: Workspace, tally: Tally) -> None:
    root = make_tree(rng, space.base, space.originals)
    command = rng.choice(["docs", "export"])
    argv = [command, "--root", str(root)]
    if command == "docs" and rng.random() < 0.3:
        argv += ["--template-dir", rng.choice(space.templates)]
    checking = rng.random() < 0.5
    code, _, _ = run_cli([*argv, "--check"] if checking else argv, rng, tally)
    if space.marker.exists():
        tally.fail(f"{argv!r} ran code from a template")
        space.marker.unlink()
    if code == 0 and not checking:  # a write that succeeded must leave fresh files
        again, out, _ = run_cli([*argv, "--check"], rng, tally)
        if again != 0:
            tally.fail(f"{argv!r} exited 0 but --check then exited {again}: {out[-300:]}")
        leftovers = [p.name for p in root.rglob("*.tmp")]
        if leftovers:
            tally.fail(f"{argv!r} left temporary files {leftovers}")


# -- the API ---------------------------------------------------------------------------------


class OddStr(str):
    """A str subclass with its own hash, equality and upper(): must not reach a dict lookup."""

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return False

    def upper(self) -> str:
        return "NOT" + str.__str__(self)


class OddInt(int):
    def __hash__(self) -> int:
        return 7


def _api_value(rng: random.Random, field_name: str) -> Any:
    roll = rng.random()
    valid = {
        "attention_backend": list(BACKENDS),
        "prefill_attention_backend": list(BACKENDS),
        "decode_attention_backend": list(BACKENDS),
        "kv_cache_dtype": sorted(KV_DTYPE_SPELLINGS),
        "speculative_algorithm": list(SPECULATIVE_ALGORITHMS),
        "speculative_attention_mode": ["prefill", "decode"],
        "attention_arch": ["mha", "mla"],
        "platform": ["cuda", "rocm", "cpu"],
    }.get(field_name)
    if roll < 0.6 and valid:
        choice = rng.choice(valid)
        return OddStr(choice) if rng.random() < 0.2 else choice
    if roll < 0.7 and field_name in ("page_size", "speculative_eagle_topk"):
        return OddInt(rng.choice([1, 16, 64]))
    return rng.choice(
        [None, "", "\udcff", OddStr("fa3"), 0, -1, 2**100, 1.5, float("nan"), True, b"fa3",
         (10, 0), (10,), ("10", "0"), "sm100", [1], {"a": 1}, object(), OddInt(3)]
    )  # fmt: skip


API_FIELDS = (*FLAG_FIELDS, "attention_arch", "platform", "compute_capability", "sliding_window")
ALLOWED: dict[str, tuple[type[BaseException], ...]] = {
    "config": (InvalidConfigError,),
    "check": (TypeError,),
    "enforce": (InvalidConfigError, IncompatibleConfigError, PlatformDetectionError, TypeError),
    "model": (ModelConfigError, InvalidConfigError),
}


def api_case(rng: random.Random, space: Workspace, tally: Tally) -> None:
    roll = rng.random()
    fields = {name: _api_value(rng, name) for name in rng.sample(API_FIELDS, rng.randint(0, 6))}
    if roll < 0.5:
        report = _call(tally, "config", lambda: AttentionConfig(**fields))
        if isinstance(report, AttentionConfig):
            _call(tally, "check", lambda: check(report).suggestions)
    elif roll < 0.6:
        junk = rng.choice([None, "fa3", 3, fields, [], object(), AttentionConfig])
        _call(tally, "check", lambda: check(junk), must_raise=True)
    elif roll < 0.9:
        args: Any = fields if rng.random() < 0.5 else argparse.Namespace(**fields)
        if rng.random() < 0.1:
            args = rng.choice([None, "fa3", 3, b"x", 1.5])
        arch = rng.choice(["mha", "mla", "mla", "MLA", OddStr("mha"), None])
        platform = rng.choice(["cuda", "cpu", "rocm", None, 5])
        cc = rng.choice([(10, 0), (9, 0), None, "sm100", "junk"])
        _call(
            tally,
            "enforce",
            lambda: enforce(args, attention_arch=arch, platform=platform, compute_capability=cc),
        )
    else:
        path = rng.choice(space.zoo)
        if path.endswith("fifo.json") or path == "/dev/null":
            path = space.zoo[0]
        if rng.random() < 0.5:
            random_file = space.base / f"random-{rng.randrange(10**9)}.json"
            random_file.write_text(json.dumps(random_json(rng)), encoding="utf-8")
            path = str(random_file)
        if rng.random() < 0.5:
            _call(tally, "model", lambda: AttentionConfig.from_model_config(path, **fields))
        else:
            _call(tally, "model", lambda: load_model_facts(path))


def _call(tally: Tally, kind: str, function: Callable[[], Any], must_raise: bool = False) -> Any:
    tally.api_calls += 1
    try:
        result = function()
    except ALLOWED[kind] as error:
        tally.api_outcomes[type(error).__name__] += 1
        if not str(error).strip():
            tally.fail(f"{kind}: {type(error).__name__} without a message")
        return None
    except Exception as error:  # counting them is the point
        tally.api_outcomes["uncaught " + type(error).__name__] += 1
        tally.fail(f"{kind}: uncaught {type(error).__name__}: {error}")
        return None
    tally.api_outcomes["returned"] += 1
    if must_raise:
        tally.fail(f"{kind}: accepted a non-config")
    return result


def fuzz(seed: int, cli: int, api: int, seconds: float | None = None, at_least: int = 0) -> Tally:
    """Run `cli` CLI and `api` API cases (or as many as fit in `seconds`, but never fewer
    than `at_least` CLI cases: a busy machine must not shrink a time box to nothing)."""
    rng = random.Random(seed)
    tally = Tally()
    deadline = None if seconds is None else time.monotonic() + seconds
    with workspace() as space:
        while tally.cli_calls < cli or tally.api_calls < api:
            if deadline is not None and time.monotonic() > deadline and tally.cli_calls >= at_least:
                break
            if tally.cli_calls < cli:
                cli_case(rng, space, tally)
            if tally.api_calls < api:
                api_case(rng, space, tally)
    return tally


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=int, default=10_000)
    parser.add_argument("--api", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=11)
    options = parser.parse_args()
    start = time.perf_counter()
    tally = fuzz(options.seed, options.cli, options.api)
    elapsed = time.perf_counter() - start
    print(f"seed {options.seed}, {elapsed:.1f} s")
    print(f"in-process CLI invocations: {tally.cli_calls}")
    print("  exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(tally.exit_codes.items())))
    print(f"API calls: {tally.api_calls}")
    print("  outcomes: " + ", ".join(f"{k}: {n}" for k, n in sorted(tally.api_outcomes.items())))
    print(f"failures (uncaught exceptions, exit codes outside 0-2, harm): {len(tally.failures)}")
    for failure in tally.failures[:20]:
        print("  " + failure[:400])
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(_main())
