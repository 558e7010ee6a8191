"""The launch commands of the hostile fuzzer: as operators paste them, and `compat launch`."""

from __future__ import annotations

import random

from hostile_files import Workspace


def shaped(rng: random.Random, launch: list[str]) -> list[str]:
    """The launch command as an operator pastes it: as words, quoted whole (on one line or
    several, with backslash continuations), or with a flag quoted together with its value."""
    roll = rng.random()
    if roll < 0.3:
        return [" ".join(launch)]
    if roll < 0.45:
        return [" \\\n  ".join(launch) if rng.random() < 0.8 else "\n".join(launch)]
    if roll < 0.6:
        flags = [i for i, word in enumerate(launch[:-1]) if word.startswith("--")]
        if flags:
            at = rng.choice(flags)
            return [*launch[:at], f"{launch[at]} {launch[at + 1]}", *launch[at + 2 :]]
    return launch


def launch_argv(rng: random.Random, check_argv: list[str], space: Workspace) -> list[str]:
    """`compat launch --dry-run` with a `compat check` case's flags and launch command, maybe
    a --config file, a program that is not SGLang, a policy."""
    kept = [token for token in check_argv[1:] if token not in ("--json", "--parity")]
    argv = ["launch", "--dry-run", *kept]
    if "--" not in argv:
        argv += ["--", "python3", "-m", "sglang.launch_server"]
    if rng.random() < 0.2:
        argv += ["--config", rng.choice(space.launch_configs)]
    if rng.random() < 0.1:
        argv.insert(argv.index("--") + 1, rng.choice(["", "bash", "vllm", "sglang serve"]))
    if rng.random() < 0.2:
        argv.insert(1, rng.choice(["--parity", "--warn-only", "--any-command"]))
    return argv
