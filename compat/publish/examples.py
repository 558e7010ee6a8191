"""One launch example per backend for the docs page, each checked by the guard.

The page is rendered only when every example passes `check()`: an example the matrix stops
allowing fails `compat docs` and the site build, naming the example and the guard's errors.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace

from compat.claim.baseline import MATRIX
from compat.claim.matrix import Matrix
from compat.guard.check import check
from compat.inputs.assemble import LaunchRequest, assemble
from compat.inputs.config import AttentionConfig, InvalidConfigError
from compat.inputs.flags import flag_field
from compat.releases import RELEASE_NAMES, RELEASES

LAUNCHER = ("python3", "-m", "sglang.launch_server")
# Models the examples name; their facts (architecture, features) are given with each example.
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
QWEN3 = "Qwen/Qwen3-235B-A22B"
QWEN_1M = "Qwen/Qwen2.5-7B-Instruct-1M"
DEEPSEEK_R1 = "deepseek-ai/DeepSeek-R1"
DEEPSEEK_V32 = "deepseek-ai/DeepSeek-V3.2-Exp"


@dataclass(frozen=True)
class LaunchExample:
    backend: str
    gpu: str
    model: str
    arch: str
    flags: tuple[tuple[str, str], ...]
    """SGLang flags besides --model-path, in the order they are written."""
    features: tuple[tuple[str, bool], ...] = ()
    """Model facts the guard needs that the flags do not carry (e.g. dual-chunk attention)."""

    def config(self, release: str | None = None) -> AttentionConfig:
        """The configuration of this example, read as `compat check` reads its command."""
        request = LaunchRequest(
            flags={flag_field(flag): value for flag, value in self.flags},
            model={"attention_arch": self.arch, **dict(self.features)},
            gpu=self.gpu,
            detect=False,
            sglang_version=release,
        )
        return assemble(request).config

    @property
    def command(self) -> str:
        args = [*LAUNCHER, "--model-path", self.model]
        for flag, value in self.flags:
            args += [flag, value]
        return shlex.join(args)


def _both(backend: str, gpu: str, model: str, arch: str, *more: tuple[str, str]) -> LaunchExample:
    return LaunchExample(backend, gpu, model, arch, (("--attention-backend", backend), *more))


LAUNCH_EXAMPLES = (
    _both("triton", "H100", LLAMA, "mha"),
    _both("torch_native", "L40S", LLAMA, "mha"),
    _both("flex_attention", "H100", LLAMA, "mha"),
    LaunchExample(
        "nsa",
        "H200",
        DEEPSEEK_V32,
        "mla",
        (("--attention-backend", "nsa"),),
        (("sparse_attention", True),),
    ),
    _both("cutlass_mla", "B200", DEEPSEEK_R1, "mla", ("--page-size", "128")),
    _both("fa3", "H100", LLAMA, "mha"),
    LaunchExample(
        "fa4",
        "B200",
        QWEN3,
        "mha",
        (
            ("--prefill-attention-backend", "fa4"),
            ("--decode-attention-backend", "triton"),
        ),
    ),
    _both("flashinfer", "A100", LLAMA, "mha"),
    _both("flashmla", "H200", DEEPSEEK_R1, "mla", ("--page-size", "64")),
    _both("trtllm_mla", "B200", DEEPSEEK_R1, "mla", ("--kv-cache-dtype", "fp8_e4m3")),
    _both("trtllm_mha", "B200", QWEN3, "mha", ("--page-size", "64")),
    LaunchExample(
        "dual_chunk_flash_attn",
        "H100",
        QWEN_1M,
        "mha",
        (("--attention-backend", "dual_chunk_flash_attn"),),
        (("dual_chunk_attention", True),),
    ),
    _both("aiter", "MI300X", LLAMA, "mha"),
    _both("wave", "MI300X", LLAMA, "mha"),
    _both("intel_amx", "Xeon (CPU)", LLAMA, "mha"),
    _both("ascend", "Ascend 910B", LLAMA, "mha"),
    _both("intel_xpu", "Intel Data Center GPU Max", LLAMA, "mha"),
)


class ExampleFailsError(ValueError):
    """A launch example the guard refuses; the page must not show it."""


@dataclass(frozen=True)
class CheckedExample:
    example: LaunchExample
    runs_as: str


def checked_examples(
    matrix: Matrix = MATRIX,
    examples: Iterable[LaunchExample] | None = None,
    release: str = RELEASE_NAMES[0],
) -> tuple[CheckedExample, ...]:
    """Every example (`LAUNCH_EXAMPLES` by default) of a backend of the page's tables that
    `release` accepts, in the matrix's backend order, each one passing `check()` for that
    release; ExampleFailsError names every one that does not."""
    from compat.guard.report import runs_as

    offered = RELEASES[release].backend_set
    names = [name for name in MATRIX.backend_names if name in offered]
    chosen = LAUNCH_EXAMPLES if examples is None else examples
    by_backend = {example.backend: example for example in chosen}
    missing = [name for name in names if name not in by_backend]
    failures = [f"no launch example for {name}" for name in missing]
    checked = []
    for name in names:
        example = by_backend.get(name)
        if example is None:
            continue
        try:
            config = example.config(release)
        except InvalidConfigError as error:
            problems = "; ".join(str(problem) for problem in error.problems)
            failures.append(
                f"the {name} example on {example.gpu} is invalid for SGLang {release}: {problems}"
            )
            continue
        report = check(config, matrix)
        if not report.ok:
            errors = "; ".join(f"[{f.rule}] {f.message}" for f in report.errors)
            failures.append(
                f"the {name} example on {example.gpu} fails the guard for SGLang {release}: "
                f"{errors}"
            )
        checked.append(CheckedExample(example, runs_as(report.resolved)))
    if failures:
        raise ExampleFailsError("; ".join(failures))
    return tuple(checked)


def with_flag(example: LaunchExample, flag: str, value: str) -> LaunchExample:
    """The example with one flag set (for tests that prove a failing example is refused)."""
    flags = [(f, v) for f, v in example.flags if f != flag] + [(flag, value)]
    return replace(example, flags=tuple(flags))
