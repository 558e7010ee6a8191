"""Every `compat ...` example of README.md and docs/*.md runs as written.

Each example (tests/support/doc_examples.py says what counts as one) runs in a shell, as a
reader would paste it, on a machine without SGLang, offline and with an empty Hugging Face
cache: a hub id is judged from the published config.json the package holds for that
checkpoint (`compat.inputs.zoo`), `python3 -m sglang.launch_server` (what
`compat launch` runs) is a stand-in that only says it started, and `compat docs` and
`compat export` write into a scratch copy of docs/. A placeholder (`MODEL`, `X`, `DIR`, ...)
gets a value of its kind.

Every example must be valid input (exit 0 or 1: never 2, invalid input, nor 3, a bug);
where a console block shows the output, its first line is what the command prints first,
and every shown line that elides nothing is printed. An example whose verdict depends on
the release predicted must name it (`--sglang-version`): one that does not is run for the
oldest and the newest modelled release and must answer the same.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_examples import Example, examples
from paths import ROOT

from compat.inputs.zoo import ZOO
from compat.publish.outputs import package_templates
from compat.releases import BASELINE, NEWEST

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [example for path in DOCUMENTS for example in examples(path, ROOT)]
VALUES = {
    "X": NEWEST,
    "A": BASELINE,
    "B": NEWEST,
    "BACKEND": "flashinfer",
    "MODEL": "deepseek-ai/DeepSeek-R1",
    "[flags]": "",
}
# A shell function: `compat docs` and `compat export` write into $SCRATCH, not the checkout.
WRAPPER = (
    'compat() { case "$1" in docs|export) command compat "$@" --root "$SCRATCH" ;; '
    '*) command compat "$@" ;; esac; }'
)
# What `compat launch` runs for `python3 -m sglang.launch_server ...`: it says so and exits 0.
STAND_IN = '#!/bin/sh\necho "stand-in python3: $*"\n'
RELEASE_FREE = ("check", "launch")
"""The commands whose verdict depends on the release they predict."""


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the examples run in: offline, an empty Hugging Face cache, a scratch
    tree, a stand-in for python3."""
    root = tmp_path_factory.mktemp("examples")
    (root / "hf-home").mkdir()
    shutil.copytree(ROOT / "docs", root / "scratch" / "docs")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STAND_IN)
    (bin_dir / "python3").chmod(0o755)
    compat_dir = Path(sys.executable).parent  # the venv's `compat` script
    unset = ("COMPAT_SGLANG_VERSION", "CI", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {
        **env,
        "PATH": os.pathsep.join([str(bin_dir), str(compat_dir), env.get("PATH", "")]),
        "HF_HOME": str(root / "hf-home"),
        "HF_HUB_OFFLINE": "1",
        "SCRATCH": str(root / "scratch"),
        "HOME_FOR_EXAMPLES": str(root),
    }


def _command(example: Example) -> str:
    """The example's words, each placeholder given a value of its kind."""
    values = {**VALUES, "DIR": str(package_templates())}
    return " ".join(values.get(word, word) for word in example.words)


def _run(
    example: Example, env: dict[str, str], release: str | None = None
) -> subprocess.CompletedProcess[str]:
    if release is not None:
        env = {**env, "COMPAT_SGLANG_VERSION": release}
    return subprocess.run(
        ["bash", "-c", f"{WRAPPER}\n{_command(example)}"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=env["HOME_FOR_EXAMPLES"],
        check=False,
    )


def test_the_documents_hold_examples_of_every_kind() -> None:
    """The reader finds runnable examples, with output, with placeholders, in several files."""
    assert len(EXAMPLES) >= 10
    assert any(example.output for example in EXAMPLES)
    assert any(example.placeholders for example in EXAMPLES)
    assert len({example.source.split(":")[0] for example in EXAMPLES}) >= 4


def test_every_hub_id_an_example_names_is_a_checkpoint_the_package_knows() -> None:
    """With no cache, a hub id is judged from the zoo's copy of its published config."""
    named = {
        words[i + 1]
        for example in EXAMPLES
        for words in ([VALUES.get(w, w) for w in example.words],)
        for i, word in enumerate(words[:-1])
        if word in ("--model-path", "--model") and "/" in words[i + 1]
    }
    assert named and named <= {model.source for model in ZOO.values()}, named


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.source for example in EXAMPLES])
def test_the_example_runs_as_written(example: Example, machine: dict[str, str]) -> None:
    result = _run(example, machine)
    said = result.stdout + result.stderr
    assert "Traceback" not in said, said
    assert result.returncode in (0, 1), f"{example.source}: exit {result.returncode}: {said}"
    if example.output:
        printed = result.stdout.splitlines()
        assert printed and printed[0] == example.output[0], (example.source, printed[:1])
        every = [line.strip() for line in said.splitlines()]
        for shown in example.output:
            if shown.strip() and not any(mark in shown for mark in ("...", "<", "~")):
                assert shown.strip() in every, (example.source, shown)


@pytest.mark.parametrize(
    "example",
    [e for e in EXAMPLES if e.words[1] in RELEASE_FREE and "--sglang-version" not in e.words],
    ids=lambda example: example.source,
)
def test_an_example_that_does_not_name_its_release_answers_alike_for_every_release(
    example: Example, machine: dict[str, str]
) -> None:
    oldest, newest = _run(example, machine, BASELINE), _run(example, machine, NEWEST)
    first = [(r.returncode, r.stdout.splitlines()[:1]) for r in (oldest, newest)]
    assert first[0] == first[1], (
        f"{example.source} answers differently for SGLang {BASELINE} and {NEWEST}: name the "
        f"release with --sglang-version ({first})"
    )


def test_a_headline_example_names_its_release() -> None:
    """The README's first `compat check` example shows output: it names the release."""
    shown = next(e for e in EXAMPLES if e.output and e.words[1] == "check")
    assert "--sglang-version" in shown.words, shlex.join(shown.words)
