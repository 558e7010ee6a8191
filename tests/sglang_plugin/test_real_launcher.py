"""The plugin inside SGLang 0.5.23's real launcher (opt-in: not part of the default run).

`COMPAT_REAL_SGLANG` names the Python of a virtual environment that holds SGLang 0.5.23 in
full and this project; without it every test here is skipped. Set up (about 5 minutes and
10 GB):

    python3 -m venv /tmp/sglang-0.5.23 && /tmp/sglang-0.5.23/bin/pip install sglang==0.5.23
    /tmp/sglang-0.5.23/bin/pip install --no-deps -e .
    COMPAT_REAL_SGLANG=/tmp/sglang-0.5.23/bin/python .venv/bin/python -m pytest -q \\
        tests/sglang_plugin/test_real_launcher.py

Each test runs `python -m sglang.launch_server` on a tiny Llama written here (a config, a
word-level tokenizer, `--load-format dummy`: no weights, no network) with `--device cpu`,
as an operator would, and asserts what the plugin does: a refusal before the model loads,
under parity one info line, under warn one block, a bad policy named once, the advice's
`SGLANG_PLUGINS` value disabling it and keeping SGLang's other plugins, a valid launch left
alone. A launch that gets past the plugin may then fail (no GPU, a kernel missing on CPU):
the server's fate is not asserted, only the plugin's. Every message appears once per launch
(SGLang resolves its arguments three times in the launcher and again in its workers), and
the plugin's CPU time, summed over every process of the launch
(`tests/support/timing_site/sitecustomize.py` measures it), stays under 100 ms in every
launch that goes on (valid, parity, warn, a mistyped policy). A refused launch also
searches for the fixes it prints; its figure is recorded, not held to the budget: that
launch ends there, before any weight loads. The figures
are written to `tests/artifacts/real_launcher.json`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

PYTHON = os.environ.get("COMPAT_REAL_SGLANG")
pytestmark = pytest.mark.skipif(
    not PYTHON, reason="opt-in: COMPAT_REAL_SGLANG names a Python with sglang 0.5.23 installed"
)
TIMING_SITE = ROOT / "tests" / "support" / "timing_site"
ARTIFACT = ROOT / "tests" / "artifacts" / "real_launcher.json"
BUDGET_S = 0.100
LAUNCH_TIMEOUT_S = 420
DOCUMENTED_ONLY = ("--attention-backend", "fa3")  # fa3 needs CUDA: SGLang does not check it
VALID = ("--attention-backend", "torch_native")
REFUSED = "attention-compat refused this launch"
WARNED = "attention-compat starts this launch anyway"
PARITY_LINE = "attention-compat: SGLang starts this launch (COMPAT_POLICY=parity)"
BAD_POLICY = "attention-compat: COMPAT_POLICY='parrity' is not a policy"
LOADING = "Load weight begin"  # SGLang's first line of loading the model


def tiny_model(root: Path) -> Path:
    """A two-layer Llama config and a word-level tokenizer: enough for SGLang to start."""
    model = root / "tiny-llama"
    model.mkdir()
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 259,
        "max_position_embeddings": 512,
        "rms_norm_eps": 1e-5,
        "torch_dtype": "bfloat16",
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"w{i}": i + 3 for i in range(256)}}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": 512,
    }
    (model / "config.json").write_text(json.dumps(config))
    (model / "tokenizer.json").write_text(json.dumps(tokenizer))
    (model / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    return model


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """Byte-compile the project where the venv imports it from, as `pip install` does: the
    plugin's cost is measured as an installed copy runs, not as a first import compiles."""
    assert PYTHON is not None
    where = subprocess.run(
        [PYTHON, "-c", "import compat, os; print(os.path.dirname(compat.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run([PYTHON, "-m", "compileall", "-q", where], capture_output=True, check=True)


def launch(tmp_path: Path, flags: tuple[str, ...], **env: str) -> dict[str, Any]:
    """One real launch, to its end (or killed with its process group after the timeout):
    its output, and the plugin's CPU seconds in each of its processes."""
    assert PYTHON is not None
    tmp_path.mkdir(parents=True, exist_ok=True)
    timing = tmp_path / "timing"
    timing.mkdir()
    environment = {
        key: value
        for key, value in os.environ.items()
        # As installed by pip: the project byte-compiled (see compiled()), read from its .pyc.
        if not key.startswith(("COMPAT_", "SGLANG_PLUGINS", "PYTHONDONTWRITEBYTECODE"))
    }
    environment.update(
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(TIMING_SITE),
        COMPAT_PLUGIN_TIMING_DIR=str(timing),
        **env,
    )
    command = [PYTHON, "-m", "sglang.launch_server", "--model-path", str(tiny_model(tmp_path))]
    command += ["--device", "cpu", "--load-format", "dummy", "--port", "39123", *flags]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        start_new_session=True,  # SGLang kills its own process tree when a worker fails
    )
    try:
        output, _ = process.communicate(timeout=LAUNCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    spent = [json.loads(path.read_text()) for path in sorted(timing.glob("*.json"))]
    return {
        "output": output,
        "processes": len(spent),
        "checks": sum(len(entry["checks"]) for entry in spent),
        "cpu_s": sum(entry["load"] + sum(entry["checks"]) for entry in spent),
        "per_process": [
            {
                "load_ms": round(entry["load"] * 1000, 1),
                "checks_ms": [round(c * 1000, 1) for c in entry["checks"]],
            }
            for entry in spent
        ],
    }


def record(case: str, result: dict[str, Any], messages: int) -> None:
    """Keep a launch's figures (message count, processes, checks, CPU) for the record."""
    ARTIFACT.parent.mkdir(exist_ok=True)
    known = json.loads(ARTIFACT.read_text()) if ARTIFACT.exists() else {}
    known[case] = {
        "messages": messages,
        "processes_with_the_plugin": result["processes"],
        "checks": result["checks"],
        "plugin_cpu_ms": round(result["cpu_s"] * 1000, 1),
        "per_process": result["per_process"],
    }
    ARTIFACT.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")


def other_plugins() -> str:
    """The general plugins installed beside SGLang other than this one, as SGLANG_PLUGINS
    lists them (read from the entry points with the venv's own Python)."""
    assert PYTHON is not None
    code = (
        "from importlib.metadata import entry_points as e; "
        "print(','.join(x.name for x in e(group='sglang.srt.plugins') "
        "if x.name != 'attention_compat'))"
    )
    listed = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, check=True)
    return listed.stdout.strip()


def count(output: str, text: str) -> int:
    return len(re.findall(re.escape(text), output))


def test_real_launcher_refuses_fa3_on_cpu_once_before_the_model_loads(tmp_path: Path) -> None:
    result = launch(tmp_path, DOCUMENTED_ONLY)
    output = result["output"]
    messages = count(output, REFUSED)
    record("refusal", result, messages)
    assert messages == 1, output[-4000:]
    assert LOADING not in output  # refused before a weight loads
    others = other_plugins()
    assert others, "SGLang 0.5.23 installs smg-servicer and smg-zmq: the advice must keep them"
    assert f"SGLANG_PLUGINS={others} disables this check and keeps the other plugins" in output


def test_real_launcher_under_parity_logs_documented_only_problems_on_one_info_line(
    tmp_path: Path,
) -> None:
    result = launch(tmp_path, DOCUMENTED_ONLY, COMPAT_POLICY="parity")
    output = result["output"]
    lines = [line for line in output.splitlines() if PARITY_LINE in line]
    record("parity", result, len(lines))
    assert len(lines) == 1, output[-4000:]
    assert "[platform-unsupported] fa3 does not run on cpu" in lines[0]
    assert REFUSED not in output
    assert result["processes"] >= 2, result  # the workers ran the plugin too, and stayed silent
    assert result["cpu_s"] < BUDGET_S, result  # a launch that goes on: within the budget


def test_real_launcher_under_warn_logs_one_block_per_launch(tmp_path: Path) -> None:
    result = launch(tmp_path, DOCUMENTED_ONLY, COMPAT_POLICY="warn")
    output = result["output"]
    messages = count(output, WARNED)
    record("warn", result, messages)
    assert messages == 1, output[-4000:]
    block = output[output.index(WARNED) :].splitlines()
    # Every line of the block names attention-compat (SGLang's format drops logger names).
    assert all(line.startswith("attention-compat") for line in block[1:7]), block[:8]
    assert result["processes"] >= 2, result
    assert result["cpu_s"] < BUDGET_S, result


def test_real_launcher_names_a_mistyped_policy_once_and_starts_a_valid_launch(
    tmp_path: Path,
) -> None:
    result = launch(tmp_path, VALID, COMPAT_POLICY="parrity")
    output = result["output"]
    messages = count(output, BAD_POLICY)
    record("bad policy, valid launch", result, messages)
    assert messages == 1, output[-4000:]
    assert REFUSED not in output and WARNED not in output
    assert result["cpu_s"] < BUDGET_S, result


# A flag smg-servicer (installed with SGLang 0.5.23) adds to SGLang's parser.
OTHER_PLUGINS_FLAG = ("--metrics-port", "39124")


def test_real_launcher_disabled_by_the_advised_sglang_plugins_value(tmp_path: Path) -> None:
    flags = (*DOCUMENTED_ONLY, *OTHER_PLUGINS_FLAG)
    result = launch(tmp_path, flags, SGLANG_PLUGINS=other_plugins())
    output = result["output"]
    record("disabled", result, count(output, "attention-compat"))
    assert "attention-compat" not in output, output[-4000:]
    assert result["checks"] == 0  # the plugin never ran
    # SGLang's other plugins are still there: the flag one of them adds parses.
    assert "unrecognized arguments" not in output, output[-4000:]
    # The old advice (SGLANG_PLUGINS=none) loses that flag: the launch dies parsing it.
    dropped = launch(tmp_path / "none", flags, SGLANG_PLUGINS="none")["output"]
    assert "unrecognized arguments: --metrics-port" in dropped, dropped[-2000:]


def test_real_launcher_leaves_a_valid_launch_alone_within_100_ms_of_cpu(tmp_path: Path) -> None:
    result = launch(tmp_path, VALID)
    output = result["output"]
    record("valid", result, count(output, "attention-compat"))
    assert "attention-compat" not in output, output[-4000:]
    # It ran in the launcher and in each worker: all of it, loading included, in the budget.
    assert result["processes"] >= 2, result
    assert result["cpu_s"] < BUDGET_S, result
