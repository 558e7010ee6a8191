"""enforce() on SGLang's own ServerArgs objects agrees with SGLang's own code, per release.

Before SGLang resolves (the raw flags), `enforce(..., parity=True)` raises exactly when the
release's own code fails the launch: its resolution raises, or its attention registry then
fails building the backends it resolved (run by tools/conformance/build.py). After it
(post-init up to 0.5.18, `resolve_once()` from 0.5.19, where the fields keep the raw flags
and the resolved values come from `resolved_dict()`), it reads back the backends and page
size SGLang chose.
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance.build import BuildCase, DraftCase, run_cases, run_draft_cases
from conformance.compare import model_inputs
from conformance.fake_torch import GPU_PROFILES
from conformance.grid import grid
from conformance.harness import open_runtime
from conformance.releases import selected

from compat import IncompatibleConfigError, InvalidConfigError, enforce
from compat.engine.build import DRAFT_ALGORITHMS
from compat.guard.report import Enforcement, Report
from compat.releases import RELEASES

SAMPLE_EVERY = 61  # about 300 launches per release and GPU: all of it costs time, not coverage


def _machine(gpu: str, release: str) -> dict[str, Any]:
    profile = GPU_PROFILES[gpu]
    return {
        "platform": profile.platform,
        "compute_capability": profile.capability if profile.platform == "cuda" else None,
        "sglang_version": release,
    }


@pytest.mark.parametrize("gpu", list(GPU_PROFILES))
@pytest.mark.parametrize("release", selected())
def test_enforce_with_parity_raises_exactly_when_sglang_fails(release: str, gpu: str) -> None:
    launches = [launch for launch in grid(release) if launch.gpu == gpu][::SAMPLE_EVERY]
    assert launches
    wrong: list[str] = []
    compared = 0
    # (launch, whether enforce raised on SGLang's resolved ServerArgs, whether only for a
    # kernel of the first forward pass, the backends to build, the draft's build where the
    # algorithm has a draft model)
    started: list[tuple[Any, bool, bool, tuple[BuildCase, ...], DraftCase | None]] = []
    with open_runtime(release, gpu) as runtime:
        for launch in launches:
            outcome = runtime.outcome(launch.model, launch.argv)
            if (outcome.error or "").startswith("argparse"):
                continue  # no ServerArgs exists for flags the parser refuses
            compared += 1
            model = model_inputs(launch.model)
            raw = runtime.raw_server_args(launch.model, launch.argv)
            raised = _raises(raw, **model, **_machine(gpu, release))
            in_a_kernel = raised and _fails_in_a_kernel_only(raw, **model, **_machine(gpu, release))
            if outcome.refused:
                if not raised:
                    wrong.append(f"raw {launch}: SGLang refused, enforce passed")
                continue
            resolved = runtime.server_args(launch.model, launch.argv)
            report = _report(resolved, **_machine(gpu, release))
            got = (report.resolved.prefill_backend, report.resolved.decode_backend)
            want = (outcome.prefill_backend, outcome.decode_backend)
            if got != want or report.resolved.page_size != outcome.page_size:
                wrong.append(
                    f"resolved {launch}: SGLang {want} page {outcome.page_size}, "
                    f"enforce read {got} page {report.resolved.page_size}"
                )
            speculative = _flag(launch.argv, "--speculative-algorithm")
            mla = model["attention_arch"] == "mla"
            cases = tuple(
                BuildCase(backend, mla=mla, speculative=speculative)
                for backend in dict.fromkeys(b for b in (*want,) if b is not None)
            )
            draft = None
            if (speculative or "").upper() in DRAFT_ALGORITHMS and want[1] is not None:
                # `--speculative-attention-mode decode`: the draft extends on decode's.
                on_decode = outcome.speculative_attention_mode == "decode"
                extend = want[1] if on_decode else want[0]
                draft = DraftCase(want[1], mla, outcome.num_steps or 3, extend)
            started.append((launch, raised, in_a_kernel, cases, draft))
    # SGLang then builds the backends of each launch it started: its own registry decides,
    # then, with a draft model, the draft worker's factory.
    profile = GPU_PROFILES[gpu]
    built = run_cases(release, profile, (c for *_, cases, _ in started for c in cases))
    drafts = run_draft_cases(release, profile, (d for *_, d in started if d is not None))
    # The harness runs the registry alone; a backend whose constructor's checks the engine
    # reads (hpc_ops, MiniCPM's) is left out here: test_conformance_build reads those lines.
    read_only = {c.backend for c in RELEASES[release].build.checks if c.in_constructor}
    for launch, raised, in_a_kernel, cases, draft in started:
        if any(case.backend in read_only for case in cases):
            continue
        fails = any(built[case].failed for case in cases)
        fails = fails or (draft is not None and drafts[draft].failed)
        # The harness builds the backends and runs no kernel: a launch refused for a kernel
        # of the first forward pass alone (tests/guard/test_kernel_limits.py and
        # test_trtllm_kernels.py hold those) must build.
        if in_a_kernel and not fails:
            continue
        if raised != fails:
            wrong.append(f"raw {launch}: SGLang's build fails={fails}, enforce raised {raised}")
    assert compared
    assert not wrong, f"{len(wrong)} of {compared} launches disagree:\n" + "\n".join(wrong[:40])


def _raises(server_args: Any, **kwargs: Any) -> bool:
    try:
        enforce(server_args, parity=True, log=False, **kwargs)
    except (IncompatibleConfigError, InvalidConfigError):
        return True
    return False


def _fails_in_a_kernel_only(server_args: Any, **kwargs: Any) -> bool:
    """Whether enforce refuses the launch only for a kernel the first forward pass runs."""
    try:
        enforce(server_args, parity=True, log=False, **kwargs)
    except IncompatibleConfigError as error:
        code = [f for f in error.report.errors if f.enforced is not Enforcement.DOCUMENTED]
        return bool(code) and all(f.enforced is Enforcement.WARMUP for f in code)
    except InvalidConfigError:
        return False
    return False


def _report(server_args: Any, **kwargs: Any) -> Report:
    """enforce()'s report on SGLang's resolved ServerArgs, whether it raises or not."""
    try:
        return enforce(server_args, parity=True, log=False, **kwargs)
    except IncompatibleConfigError as error:
        return error.report


def _flag(argv: tuple[str, ...] | list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_enforce_accepts_an_fp4_mx_block16_launch_of_sglang_0_5_23() -> None:
    """The launch that an older guard blocked: SGLang 0.5.23 accepts it, and so does enforce."""
    argv = ["--attention-backend", "triton", "--kv-cache-dtype", "fp4_mx_block16"]
    with open_runtime("0.5.23", "B200") as runtime:
        assert not runtime.outcome("Llama-3.1-8B", argv).refused
        resolved = runtime.server_args("Llama-3.1-8B", argv)
        report = enforce(resolved, **_machine("B200", "0.5.23"))
    assert report.ok and report.resolved.kv_dtype.value == "fp4_mx_block16"
    assert report.resolved.prefill_backend == report.resolved.decode_backend == "triton"
