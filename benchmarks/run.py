"""Benchmark attention-compat: start-up, the guard's hot path, the proof and the docs build.

Run from the repository root after `pip install -e '.[docs,test]'`:

    python benchmarks/run.py            # full run, exit 1 when a budget fails
    python benchmarks/run.py --quick    # fewer repeats: a smoke run
    python benchmarks/run.py --no-budgets   # print budgets, but do not fail on them
    python benchmarks/run.py --write docs/performance.md   # also write the site's page

Every figure is a median over repeated runs. Added costs are measured against their
baseline in the same run (interleaved where they are separate processes). Correctness
problems (a heavy module loaded by `import compat`, a proof mismatch, a command that
fails) make the exit code non-zero even with --no-budgets.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import io
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT / "tests" / "support", ROOT / "tools", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The seeded mix and the consistency proof are about the PR #14467 baseline, which SGLang
# 0.5.7 shipped (as in the tests); the start-up figure below loads the newest release.
os.environ.setdefault("COMPAT_SGLANG_VERSION", "0.5.7")

import consistency  # noqa: E402  (the tests' proof module, importable once tests/ is on the path)
from finder_sample import sample_env  # noqa: E402
from machine import installed_env, machine, pace  # noqa: E402  (benchmarks/, this script's folder)

from compat import MATRIX, AttentionConfig, check  # noqa: E402
from compat.guard.plan import compiled  # noqa: E402

SEED = 14467
HEAVY_MODULES = ("torch", "jinja2", "mkdocs")

BUDGET_IMPORT_MS = 10.0
BUDGET_GUARD_MS = 60.0
BUDGET_CHECK_US = 10.0
BUDGET_PROOF_S = 10.0
BUDGET_DOCS_CHECK_S = 1.0  # every page: the main one, one per release, what changed


@dataclass(frozen=True)
class Repeats:
    startup: int
    configs: int
    inner: int
    proof: int
    proof_every: int
    """Prove the configurations of every n-th prefill backend (1: the whole space); the
    whole proof runs in the test suite, a smoke run only shows that this one works."""
    docs_check: int
    mkdocs: int


FULL = Repeats(startup=15, configs=2000, inner=20, proof=3, proof_every=1, docs_check=5, mkdocs=3)
QUICK = Repeats(startup=3, configs=200, inner=2, proof=1, proof_every=4, docs_check=1, mkdocs=1)


@dataclass(frozen=True)
class Line:
    label: str
    value: str
    detail: str = ""
    budget: str = ""
    verdict: str = ""


# -- the configuration mix --------------------------------------------------------------------

KV_DTYPES = ("auto", "bf16", "bfloat16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1")
PAGE_SIZES = (None, 1, 16, 32, 64, 128)
TOPKS = (None, None, 1, 2, 4)
PRESETS: tuple[tuple[str, tuple[int, int] | None], ...] = (
    ("cuda", (8, 0)),
    ("cuda", (9, 0)),
    ("cuda", (10, 0)),
    ("cuda", (12, 0)),
    ("cuda", None),
    ("rocm", None),
    ("npu", None),
    ("xpu", None),
    ("cpu", None),
)


def configuration_mix(count: int, seed: int = SEED) -> list[AttentionConfig]:
    """A fixed, seeded mix of compatible and incompatible configurations.

    Spread over architecture, backends per phase (one for both, a hybrid pair, or the
    default), KV dtype, page size, speculative topk, platform presets and model features.
    Half the draws are plausible (a backend with a row for the architecture, on a platform
    it runs on), so the mix is not dominated by obvious mismatches. Everything is built
    before timing starts.
    """
    rng = random.Random(seed)
    backends = MATRIX.backend_names
    configs = []
    for _ in range(count):
        arch = rng.choice(("mha", "mla"))
        plausible = rng.random() < 0.5
        pool = (
            [
                row.backend
                for table in MATRIX.tables
                if table.arch.value == arch
                for row in table.rows
            ]
            if plausible
            else list(backends)
        )
        placement = rng.random()
        chosen: dict[str, Any] = {}
        if placement < 0.55:
            chosen["attention_backend"] = rng.choice(pool)
        elif placement < 0.85:
            chosen["prefill_attention_backend"] = rng.choice(pool)
            chosen["decode_attention_backend"] = rng.choice(pool)
        elif placement < 0.92:
            chosen["decode_attention_backend"] = rng.choice(pool)
        presets = PRESETS
        if plausible and chosen:
            runs_on = MATRIX.backend(str(next(iter(chosen.values())))).platforms
            presets = tuple(p for p in PRESETS if any(p[0] == q.value for q in runs_on))
        platform, capability = rng.choice(presets)
        topk = rng.choice(TOPKS)
        configs.append(
            AttentionConfig(
                attention_arch=arch,
                kv_cache_dtype=rng.choice(KV_DTYPES),
                page_size=rng.choice(PAGE_SIZES),
                speculative_algorithm=None if topk is None else "EAGLE",
                speculative_eagle_topk=topk,
                platform=platform,
                compute_capability=capability,
                sliding_window=rng.random() < 0.2,
                multimodal=rng.random() < 0.2,
                **chosen,
            )
        )
    return configs


def config_fields(config: AttentionConfig) -> dict[str, Any]:
    return {
        name: getattr(config, name)
        for name in AttentionConfig.__dataclass_fields__
        if name != "parsed"
    }


# -- the floor: PR #14467's KV4 check as a hand-written if-chain -------------------------------
#
# This is the baseline check() is compared against, so its lists are typed by hand on
# purpose (the PR's own literal lists). Nothing else in the project may repeat them: the
# guard derives them from the matrix. It covers the KV4 rules only: FP4 only; off-CUDA is
# an error; fa4 prefill needs a decode partner from a fixed per-arch list; otherwise each
# backend must be in a fixed per-arch list; a hybrid pair warns.

_KV4_BACKENDS = {
    "mha": ("triton", "torch_native", "flex_attention", "trtllm_mha"),
    "mla": ("flashinfer", "cutlass_mla", "trtllm_mla"),
}
_KV4_FA4_DECODE = {
    "mha": ("triton", "torch_native", "flex_attention"),
    "mla": ("flashinfer", "cutlass_mla", "trtllm_mla"),
}


def kv4_floor(config: AttentionConfig) -> list[tuple[str, str]]:
    if config.kv_cache_dtype != "fp4_e2m1":
        return []
    findings = []
    if config.platform != "cuda":
        findings.append(("kv4-requires-cuda", "error"))
    prefill = config.prefill_attention_backend or config.attention_backend
    decode = config.decode_attention_backend or config.attention_backend
    arch = config.attention_arch
    if prefill == "fa4" and decode is not None and decode != "fa4":
        if decode not in _KV4_FA4_DECODE[arch]:
            findings.append(("kv4-fa4-decode-partner", "error"))
    else:
        if prefill is not None and prefill not in _KV4_BACKENDS[arch]:
            findings.append(("fp4-kv", "error"))
        if decode is not None and decode != prefill and decode not in _KV4_BACKENDS[arch]:
            findings.append(("fp4-kv", "error"))
        if prefill is not None and decode is not None and prefill != decode:
            findings.append(("kv4-hybrid-pair", "warning"))
    return findings


# -- measurement helpers -----------------------------------------------------------------------


def per_call_us(
    function: Callable[[Any], object], inputs: Sequence[Any], inner: int
) -> list[float]:
    """Microseconds per call for each input: `inner` calls timed as one batch."""
    timings = []
    clock = time.perf_counter_ns
    enabled = gc.isenabled()
    gc.disable()
    try:
        for item in inputs:
            start = clock()
            for _ in range(inner):
                function(item)
            timings.append((clock() - start) / inner / 1000)
    finally:
        if enabled:
            gc.enable()
    return timings


def run_seconds(command: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    return time.perf_counter() - start, done.returncode


def python_env() -> dict[str, str]:
    return installed_env(ROOT / "compat")


# -- the figures -------------------------------------------------------------------------------


def startup(repeats: Repeats, env: dict[str, str]) -> tuple[list[Line], bool, bool, bool]:
    """(lines, import budget met, the guard's budget met, no heavy module loaded)."""
    bare: list[float] = []
    loaded: list[float] = []
    guarded: list[float] = []
    # `import compat` loads names lazily; the second figure is the full cost of a usable
    # guard (matrix, validation, checks), which an engine pays once at start-up.
    use_guard = (
        "from compat import AttentionConfig, check, enforce; "
        "from compat.releases import NEWEST; "
        "check(AttentionConfig(attention_arch='mha', platform='cpu', sglang_version=NEWEST))"
    )
    for _ in range(repeats.startup):
        bare.append(run_seconds([sys.executable, "-c", "pass"], env)[0] * 1000)
        loaded.append(run_seconds([sys.executable, "-c", "import compat"], env)[0] * 1000)
        guarded.append(run_seconds([sys.executable, "-c", use_guard], env)[0] * 1000)
    bare_ms, loaded_ms = statistics.median(bare), statistics.median(loaded)
    guard_ms = statistics.median(guarded)
    added = loaded_ms - bare_ms
    probe = (
        f"import sys, compat; {use_guard}; "
        f"print(','.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    heavy = done.stdout.strip()
    light = done.returncode == 0 and heavy == ""
    import_fits, guard_fits = added <= BUDGET_IMPORT_MS, guard_ms - bare_ms <= BUDGET_GUARD_MS
    lines = [
        Line('start-up: python -c "pass"', f"{bare_ms:.1f} ms", f"{repeats.startup} runs"),
        Line(
            'start-up: python -c "import compat"',
            f"{loaded_ms:.1f} ms",
            f"{repeats.startup} runs, interleaved",
        ),
        Line(
            "start-up: import compat adds",
            f"{added:.1f} ms",
            f"ratio {loaded_ms / bare_ms:.2f}x",
            f"<= {BUDGET_IMPORT_MS:g} ms",
            verdict(import_fits),
        ),
        Line(
            "start-up: load the guard of the newest release and check once",
            f"adds {guard_ms - bare_ms:.1f} ms",
            f"{guard_ms:.1f} ms vs {bare_ms:.1f} ms for python -c pass",
            f"<= {BUDGET_GUARD_MS:g} ms",
            verdict(guard_fits),
        ),
        Line(
            "start-up: torch, jinja2, mkdocs not imported by the guard",
            "yes" if light else "no",
            heavy or ("" if done.returncode == 0 else f"probe exited {done.returncode}"),
            "must be yes",
            verdict(light),
        ),
    ]
    return lines, import_fits, guard_fits, light


def guard(repeats: Repeats) -> tuple[list[Line], bool, list[AttentionConfig]]:
    configs = configuration_mix(repeats.configs)
    reports = [check(config) for config in configs]  # warm: compile the per-backend plans
    incompatible = sum(not report.ok for report in reports) / len(reports)
    check_us = per_call_us(check, configs, repeats.inner)
    median_us = statistics.median(check_us)
    passing_us = [us for us, report in zip(check_us, reports, strict=True) if report.ok]
    failing_us = [us for us, report in zip(check_us, reports, strict=True) if not report.ok]
    mean_us = statistics.fmean(check_us)
    per_second = 1e6 / median_us
    fields = [config_fields(config) for config in configs]
    build_us = statistics.median(
        per_call_us(lambda kwargs: AttentionConfig(**kwargs), fields, repeats.inner)
    )
    floor_us = statistics.median(per_call_us(kv4_floor, configs, repeats.inner))
    cold_us, warm_us = single_calls(configs)
    fits = median_us <= BUDGET_CHECK_US
    lines = [
        Line(
            "check(): configuration mix",
            f"{len(configs)} configs",
            f"{incompatible:.1%} incompatible, seed {SEED}",
        ),
        Line(
            "check() per configuration",
            f"{median_us:.2f} µs",
            f"mean {mean_us:.2f} µs, {repeats.inner} calls per batch",
            f"<= {BUDGET_CHECK_US:g} µs",
            verdict(fits),
        ),
        Line(
            "check() throughput",
            f"{per_second:,.0f} configs/s",
            "1e6 / median",
            f">= {1e6 / BUDGET_CHECK_US:,.0f}/s",
            verdict(fits),
        ),
        Line(
            "check() by verdict",
            f"{median_of(passing_us)} / {median_of(failing_us)}",
            "compatible / incompatible configurations",
        ),
        Line(
            "check() single call, finding memo cold / warm",
            f"{cold_us:.2f} µs / {warm_us:.2f} µs",
            "one timed call per config; cold: memo of worded findings emptied first",
        ),
        Line(
            "AttentionConfig(...) construction",
            f"{build_us:.2f} µs",
            "validation, not included in check()",
        ),
        Line("KV4 if-chain floor (PR #14467 rules)", f"{floor_us:.3f} µs", "same mix"),
        Line(
            "check() / floor",
            f"{median_us / floor_us:.1f}x",
            "check() judges every column and rule, the floor only KV4",
        ),
    ]
    return lines, fits, configs


def single_calls(configs: Sequence[AttentionConfig]) -> tuple[float, float]:
    """Median µs of one call per config, with the finding memo emptied first, then kept.

    The guard reuses immutable findings it has already worded; the cold figure shows what a
    first-time configuration costs. Timing single calls adds clock overhead to both.
    """
    clock = time.perf_counter_ns
    cold: list[float] = []
    warm: list[float] = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for config in configs:
            compiled(MATRIX).findings.clear()
            compiled(MATRIX).backends.clear()
            start = clock()
            check(config)
            cold.append((clock() - start) / 1000)
        for config in configs:
            start = clock()
            check(config)
            warm.append((clock() - start) / 1000)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(cold), statistics.median(warm)


def proof(repeats: Repeats) -> tuple[list[Line], bool, bool]:
    """(lines, budget met, no mismatch)."""
    seconds = []
    configs = claims = 0
    mismatches: list[str] = []
    for _ in range(repeats.proof):
        start = time.perf_counter()
        configs, claims, mismatches = consistency.run_proof(every=repeats.proof_every)
        seconds.append(time.perf_counter() - start)
    median_s = statistics.median(seconds)
    whole = repeats.proof_every == 1
    space = "the whole space" if whole else f"every {repeats.proof_every}th prefill backend"
    fits = median_s < BUDGET_PROOF_S
    agree = not mismatches
    lines = [
        Line(
            "consistency proof: time",
            f"{median_s:.2f} s",
            f"{space}, {repeats.proof} runs, {os.cpu_count()} cores",
            f"< {BUDGET_PROOF_S:g} s" if whole else "",
            verdict(fits) if whole else "",
        ),
        Line("consistency proof: configurations", f"{configs:,}"),
        Line("consistency proof: claims compared", f"{claims:,}"),
        Line(
            "consistency proof: mismatches", f"{len(mismatches)}", "", "must be 0", verdict(agree)
        ),
    ]
    for mismatch in mismatches[:5]:
        print(f"mismatch: {mismatch}", file=sys.stderr)
    return lines, fits, agree


def docs(repeats: Repeats, env: dict[str, str]) -> tuple[list[Line], bool, bool]:
    """(lines, docs budget met, both commands succeeded)."""
    checks = [
        run_seconds([sys.executable, "-m", "compat", "docs", "--check"], env)
        for _ in range(repeats.docs_check)
    ]
    check_s = statistics.median(seconds for seconds, _ in checks)
    check_codes = {code for _, code in checks}
    mkdocs_env = {**env, "NO_MKDOCS_2_WARNING": "1"}
    builds = []
    with tempfile.TemporaryDirectory() as site:
        for _ in range(repeats.mkdocs):
            builds.append(
                run_seconds(
                    [
                        sys.executable,
                        "-m",
                        "mkdocs",
                        "build",
                        "--strict",
                        "--quiet",
                        "--site-dir",
                        site,
                    ],
                    mkdocs_env,
                )
            )
    build_s = statistics.median(seconds for seconds, _ in builds)
    build_codes = {code for _, code in builds}
    fresh = check_codes == {0}
    built = build_codes == {0}
    fits = fresh and check_s < BUDGET_DOCS_CHECK_S
    lines = [
        Line(
            "compat docs --check (end to end)",
            f"{check_s:.3f} s",
            f"{repeats.docs_check} runs, " + exits(check_codes),
            f"< {BUDGET_DOCS_CHECK_S:g} s",
            verdict(fits),
        ),
        Line(
            "mkdocs build --strict",
            f"{build_s:.2f} s",
            f"{repeats.mkdocs} runs, " + exits(build_codes),
            "must exit 0",
            verdict(built),
        ),
    ]
    return lines, fits, fresh and built


def median_of(timings: Sequence[float]) -> str:
    return f"{statistics.median(timings):.2f} µs" if timings else "n/a"


def exits(codes: set[int]) -> str:
    return "exit " + "/".join(str(code) for code in sorted(codes))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def hotspots(configs: Sequence[AttentionConfig], top: int = 12) -> str:
    """cProfile of check() over the mix: the functions with the most own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        for config in configs:
            check(config)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


def render(lines: Sequence[Line]) -> str:
    headers = Line("figure", "median", "detail", "budget", "verdict")
    rows = [headers, *lines]
    columns = ("label", "value", "detail", "budget", "verdict")
    widths = {name: max(len(getattr(row, name)) for row in rows) for name in columns}
    out = []
    for index, row in enumerate(rows):
        cells = [getattr(row, name).ljust(widths[name]) for name in columns]
        out.append("  ".join(cells).rstrip())
        if index == 0:
            out.append("  ".join("-" * widths[name] for name in columns))
    return "\n".join(out)


PAGE_HEADER = "<!-- Generated by benchmarks/run.py --write; do not edit. -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or " "


def page(lines: Sequence[Line], header: str, mode: str, budgets: dict[str, bool]) -> str:
    """The site's performance page: one header line (date, machine, pace), then the table."""
    rows = [
        f"| {_cell(line.label)} | {_cell(line.value)} | {_cell(line.detail)} | "
        f"{_cell(line.budget)} | {_cell(line.verdict)} |"
        for line in lines
    ]
    verdicts = [f"- {'PASS' if ok else 'FAIL'}: {name}" for name, ok in budgets.items()]
    return "\n".join(
        [
            PAGE_HEADER,
            "",
            "# Performance",
            "",
            f"{header} ({mode} run of `python benchmarks/run.py`).",
            "",
            "Each figure is a median over repeated runs, measured in that one run; a figure",
            "relative to a baseline (`import compat` over a bare interpreter) was measured",
            "next to it. The machine's pace is a fixed Python loop's time: figures of runs at",
            "different paces compare only as ratios. To measure again on your machine:",
            "`python benchmarks/run.py --write docs/performance.md`.",
            "",
            "| figure | median | detail | budget | verdict |",
            "|---|---|---|---|---|",
            *rows,
            "",
            "## Budgets",
            "",
            *verdicts,
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    parser.add_argument(
        "--no-budgets",
        action="store_true",
        help="report budgets but exit 0 when one fails (correctness failures still exit 1)",
    )
    parser.add_argument("--profile", action="store_true", help="print check()'s cProfile hotspots")
    parser.add_argument(
        "--write",
        metavar="PATH",
        type=Path,
        help="also write the figures as the site's page (docs/performance.md)",
    )
    args = parser.parse_args(argv)
    header = f"Measured on {datetime.date.today().isoformat()}, {machine()}, pace {pace():.3f} s"
    repeats = QUICK if args.quick else FULL
    env = python_env()
    start = time.perf_counter()

    startup_lines, import_fits, guard_fits, light = startup(repeats, env)
    guard_lines, check_fits, configs = guard(repeats)
    proof_lines, proof_fits, agree = proof(repeats)
    # A quick run builds the site with the tests' sample of finder releases (and their build
    # cache entry); a full run builds every release, as the site is published.
    docs_lines, docs_fits, docs_ok = docs(repeats, sample_env(env) if args.quick else env)
    lines = startup_lines + guard_lines + proof_lines + docs_lines

    mode = "quick" if args.quick else "full"
    print(f"attention-compat benchmark ({mode} run, Python {sys.version.split()[0]})")
    print()
    print(render(lines))
    print()
    budgets = {
        f"import adds <= {BUDGET_IMPORT_MS:g} ms": import_fits,
        f"the guard's load and first check add <= {BUDGET_GUARD_MS:g} ms": guard_fits,
        f"check() median <= {BUDGET_CHECK_US:g} µs": check_fits,
        f"compat docs --check < {BUDGET_DOCS_CHECK_S:g} s": docs_fits,
    }
    if repeats.proof_every == 1:  # a smoke run proves a part: its time meets no budget
        budgets[f"consistency proof < {BUDGET_PROOF_S:g} s"] = proof_fits
    failed = [name for name, ok in budgets.items() if not ok]
    correct = light and agree and docs_ok
    if args.profile or (not check_fits and not args.quick):
        print("check() hotspots (cProfile, sorted by own time):")
        print(hotspots(configs))
    print(f"budgets: {'all PASS' if not failed else 'FAIL: ' + '; '.join(failed)}")
    if not correct:
        print("correctness: FAIL (see the lines marked FAIL above)")
    print(f"benchmark time: {time.perf_counter() - start:.1f} s")
    if args.write is not None:
        # Written whole or not at all: a temporary file beside it, then a rename.
        partial = args.write.with_name(args.write.name + ".partial")
        partial.write_text(page(lines, header, mode, budgets), encoding="utf-8")
        os.replace(partial, args.write)
        print(f"wrote {args.write}")
    if not correct:
        return 1
    if failed and not args.no_budgets:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
