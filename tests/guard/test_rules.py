"""One test per rule the guard enforces, with the cases of SGLang PR #14467.

Two kinds of test live here. The PR #14467 baseline section (first) checks the PR's own
literal lists: an independent oracle for the guard, which derives them from the FP4
column and the pairing rule instead. Those tests pin the baseline: a deliberate change of
an FP4 cell makes them fail, saying the PR's lists no longer hold, and the reviewer then
records the new baseline in them. Every other test checks a mechanism and must pass after
any single-cell change of the matrix: it pins the cells it relies on in an in-memory copy
of the matrix (`with_cell`), or picks its example from the live matrix.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from cells import NO, YES, fp4_refused_on_b200, with_cell, with_cells

from compat import MATRIX, AttentionConfig, InvalidConfigError, Report, Severity, check
from compat.claim.cells import Cell, CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix
from compat.guard.report import Enforcement, Suggestion
from compat.vocab.terms import Arch

ALL_BACKENDS = MATRIX.backend_names
B200: dict[str, Any] = {"platform": "cuda", "compute_capability": (10, 0)}
H100: dict[str, Any] = {"platform": "cuda", "compute_capability": (9, 0)}
FP4 = "fp4_e2m1"


def run(matrix: Matrix = MATRIX, **fields: Any) -> Report:
    return check(AttentionConfig(**fields), matrix)


def rules(report: Report, severity: Severity | None = None) -> set[str]:
    return {f.rule for f in report.findings if severity is None or f.severity is severity}


# == The PR #14467 baseline ======================================================================
#
# The tests of this section pin SGLang PR #14467's literal lists and cases. They are meant to
# fail when an FP4 cell of `compat/matrix.py` changes, even on purpose: if the matrix changed
# on purpose, update PR_FA4_PARTNERS / PR_SINGLE_BACKEND below to the new baseline (and
# tests/fixtures/baseline_tables.md, which test_page.py compares the page with).

BASELINE_HINT = (
    "if the matrix changed on purpose, update {lists} in tests/guard/test_rules.py "
    "to the new baseline"
)

# Rule 4: prefill on fa4 needs one of the PR's decode partners.
PR_FA4_PARTNERS = {
    "mla": {"cutlass_mla", "flashinfer", "trtllm_mla"},
    "mha": {"triton", "torch_native", "flex_attention"},
}

# Rule 5: one backend for both phases must be in the PR's list.
PR_SINGLE_BACKEND = {
    "mla": {"cutlass_mla", "flashinfer", "trtllm_mla"},
    "mha": {"triton", "torch_native", "flex_attention", "trtllm_mha"},
}


@pytest.mark.parametrize("arch", ["mha", "mla"])
@pytest.mark.parametrize("decode", ALL_BACKENDS)
def test_kv4_fa4_prefill_decode_partner(arch: str, decode: str) -> None:
    report = run(
        attention_arch=arch,
        prefill_attention_backend="fa4",
        decode_attention_backend=decode,
        kv_cache_dtype=FP4,
        **B200,
    )
    assert report.ok == (decode in PR_FA4_PARTNERS[arch]), (
        f"PR #14467 baseline: fa4 prefill + {decode} decode should be "
        f"{'accepted' if decode in PR_FA4_PARTNERS[arch] else 'refused'}; {report.errors}; "
        + BASELINE_HINT.format(lists="PR_FA4_PARTNERS")
    )
    assert "kv4-hybrid-pair" not in rules(report)


def test_kv4_fa4_with_trtllm_mha_names_the_pairing_rule() -> None:
    report = run(
        attention_arch="mha",
        prefill_attention_backend="fa4",
        decode_attention_backend="trtllm_mha",
        kv_cache_dtype=FP4,
        **B200,
    )
    hint = BASELINE_HINT.format(lists="PR_FA4_PARTNERS")
    pairing = [e for e in report.errors if e.rule == "kv4-fa4-decode-partner"]
    assert len(pairing) == 1, f"PR #14467 baseline: one pairing error; {report.errors}; {hint}"
    (error,) = pairing
    assert error.enforced is Enforcement.STARTUP, "SGLang's own KV4 check refuses this pair"
    # fa4 forces page size 128 for an MHA model, which trtllm_mha's kernels cannot run.
    # One finding per fact: the page's rule, enforced at start-up, in SGLang's words.
    assert {e.rule for e in report.errors} == {"kv4-fa4-decode-partner", "page-size-conflict"}
    assert error.value == "trtllm_mha"
    assert set(error.allowed) == PR_FA4_PARTNERS["mha"], (
        f"PR #14467 baseline: the MHA partners of fa4 are {sorted(PR_FA4_PARTNERS['mha'])}, "
        f"the guard allows {sorted(error.allowed)}; {hint}"
    )
    assert "--decode-attention-backend" in error.flags


@pytest.mark.parametrize("arch", ["mha", "mla"])
@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_kv4_single_backend(arch: str, backend: str) -> None:
    report = run(attention_arch=arch, attention_backend=backend, kv_cache_dtype=FP4, **B200)
    assert report.ok == (backend in PR_SINGLE_BACKEND[arch]), (
        f"PR #14467 baseline: {backend} with an FP4 cache should be "
        f"{'accepted' if backend in PR_SINGLE_BACKEND[arch] else 'refused'}; {report.errors}; "
        + BASELINE_HINT.format(lists="PR_SINGLE_BACKEND")
    )


def test_kv4_flashmla_mla_names_fp4_column_and_suggests_fp4_backends() -> None:
    report = run(attention_arch="mla", attention_backend="flashmla", kv_cache_dtype=FP4, **B200)
    hint = BASELINE_HINT.format(lists="this test and PR_SINGLE_BACKEND")
    assert rules(report, Severity.ERROR) == {"fp4-kv"}, (
        f"PR #14467 baseline: flashmla (MLA) does not read an FP4 cache; {report.errors}; {hint}"
    )
    suggested = {s.args for s in report.suggestions}
    assert {f"--attention-backend {b}" for b in PR_SINGLE_BACKEND["mla"]} <= suggested, (
        f"PR #14467 baseline: suggestions {sorted(suggested)}; {hint}"
    )


# == Mechanisms: pass after any single-cell change ==============================================


# -- PR #14467 rule 1: nothing is checked without an FP4 KV cache -----------------------


@pytest.mark.parametrize("dtype", ["auto", "bf16", "bfloat16", "fp8_e4m3"])
def test_kv4_rules_silent_without_fp4(dtype: str) -> None:
    report = run(
        attention_arch="mha",
        prefill_attention_backend="fa4",
        decode_attention_backend="trtllm_mha",
        kv_cache_dtype=dtype,
        **B200,
    )
    assert not {r for r in rules(report) if r.startswith("kv4") or r == "fp4-kv"}


# -- rule 2: FP4 off CUDA refuses to start ----------------------------------------------


@pytest.mark.parametrize(
    ("platform", "backend"),
    [
        ("rocm", "aiter"),
        ("rocm", "triton"),
        ("npu", "ascend"),
        ("xpu", "intel_xpu"),
        ("cpu", "torch_native"),
    ],
)
def test_kv4_off_cuda_is_an_error(platform: str, backend: str) -> None:
    report = run(
        attention_arch="mha", platform=platform, attention_backend=backend, kv_cache_dtype=FP4
    )
    assert "kv4-requires-cuda" in rules(report, Severity.ERROR)
    assert not report.ok


def test_kv4_on_cuda_passes_the_platform_rule() -> None:
    assert "kv4-requires-cuda" not in rules(
        run(attention_arch="mha", attention_backend="triton", kv_cache_dtype=FP4, **B200)
    )


# -- rule 3: a hybrid pair without fa4 only warns -----------------------------------------


@pytest.mark.parametrize(
    ("arch", "prefill", "decode"),
    [
        ("mha", "triton", "trtllm_mha"),
        ("mha", "torch_native", "triton"),
        ("mla", "flashinfer", "trtllm_mla"),
        ("mla", "cutlass_mla", "trtllm_mla"),
    ],
)
def test_kv4_hybrid_pair_warns(arch: str, prefill: str, decode: str) -> None:
    report = run(
        attention_arch=arch,
        prefill_attention_backend=prefill,
        decode_attention_backend=decode,
        kv_cache_dtype=FP4,
        **B200,
    )
    assert "kv4-hybrid-pair" in rules(report, Severity.WARNING)


def test_kv4_hybrid_pair_is_not_warned_for_one_backend() -> None:
    report = run(attention_arch="mha", attention_backend="triton", kv_cache_dtype=FP4, **B200)
    assert "kv4-hybrid-pair" not in rules(report)


# -- rule 4: prefill on fa4 needs a decode partner (the PR's lists: see the baseline) --------


def test_kv4_fa4_for_both_phases_is_refused_as_prefill_only() -> None:
    report = run(attention_arch="mha", attention_backend="fa4", kv_cache_dtype=FP4, **B200)
    assert "fa4-prefill-only" in rules(report, Severity.ERROR)


# -- phases, architectures, hardware ------------------------------------------------------------


def test_fa4_as_decode_backend_is_an_error() -> None:
    report = run(
        attention_arch="mla",
        prefill_attention_backend="flashinfer",
        decode_attention_backend="fa4",
        **B200,
    )
    assert "fa4-prefill-only" in rules(report, Severity.ERROR)


@pytest.mark.parametrize(
    ("arch", "backend"),
    [("mla", "trtllm_mha"), ("mha", "trtllm_mla"), ("mha", "flashmla"), ("mha", "cutlass_mla")],
)
def test_backend_known_not_to_work_with_arch(arch: str, backend: str) -> None:
    assert "arch-refused" in rules(
        run(attention_arch=arch, attention_backend=backend, **B200), Severity.ERROR
    )


@pytest.mark.parametrize(
    ("backend", "platform"),
    [("aiter", "rocm"), ("torch_native", "cuda"), ("intel_amx", "cpu")],
)
def test_backend_undocumented_for_mla_warns(backend: str, platform: str) -> None:
    report = run(attention_arch="mla", attention_backend=backend, platform=platform)
    assert "arch-undocumented" in rules(report, Severity.WARNING)
    assert "arch-refused" not in rules(report)


@pytest.mark.parametrize(
    ("backend", "platform", "severity"),
    [
        ("aiter", "cuda", Severity.ERROR),
        ("fa3", "rocm", Severity.ERROR),
        ("ascend", "cpu", Severity.ERROR),
        ("intel_xpu", "cuda", Severity.ERROR),
    ],
)
def test_platform_mismatch(backend: str, platform: str, severity: Severity) -> None:
    report = run(attention_arch="mha", attention_backend=backend, platform=platform)
    assert "platform-unsupported" in rules(report, severity)


def test_untested_platform_cell_warns() -> None:
    report = run(
        attention_arch="mla", attention_backend="nsa", platform="rocm", sparse_attention=True
    )
    assert "platform-untested" in rules(report, Severity.WARNING)


@pytest.mark.parametrize(
    ("arch", "backend", "capability", "ok"),
    [
        ("mha", "fa3", (10, 0), False),
        ("mha", "fa3", (8, 6), True),
        ("mla", "fa3", (8, 6), False),
        ("mla", "fa3", (9, 0), True),
        ("mla", "trtllm_mla", (9, 0), False),
        ("mha", "flashinfer", (7, 5), False),
        ("mha", "flashinfer", (12, 0), True),
        ("mla", "flashmla", (9, 0), True),
        ("mha", "trtllm_mha", (9, 0), False),
    ],
)
def test_compute_capability(arch: str, backend: str, capability: tuple[int, int], ok: bool) -> None:
    report = run(
        attention_arch=arch,
        attention_backend=backend,
        platform="cuda",
        compute_capability=capability,
    )
    assert ("compute-capability" in rules(report, Severity.ERROR)) != ok


def test_unknown_compute_capability_is_said() -> None:
    report = run(attention_arch="mha", attention_backend="fa3", platform="cuda")
    assert "compute-capability-unknown" in rules(report, Severity.INFO)


@pytest.mark.parametrize(
    ("dtype", "ok"),
    [
        ("fp8_e5m2", False),
        ("fp8_e4m3", True),
        ("bf16", True),
        ("bfloat16", True),
        ("auto", True),
        (FP4, True),
    ],
)
def test_trtllm_mla_kv_dtype_limit(dtype: str, ok: bool) -> None:
    report = run(attention_arch="mla", attention_backend="trtllm_mla", kv_cache_dtype=dtype, **B200)
    assert ("backend-kv-dtype" in rules(report, Severity.ERROR)) != ok


def test_bf16_and_bfloat16_are_one_dtype_on_the_page_but_not_in_sglangs_string_check() -> None:
    a = run(attention_arch="mla", attention_backend="trtllm_mla", kv_cache_dtype="bf16", **B200)
    b = run(attention_arch="mla", attention_backend="trtllm_mla", kv_cache_dtype="bfloat16", **B200)
    assert a.resolved == b.resolved
    documented = [f for f in b.findings if f.enforced is not Enforcement.STARTUP]
    assert documented == [f for f in a.findings if f.enforced is not Enforcement.STARTUP]
    assert not a.refused_at_startup
    assert [f.rule for f in b.startup_reasons] == ["startup-backend-kv-dtype"]
    assert b.startup_reasons[0].value == "bfloat16"


# -- speculative decoding --------------------------------------------------------------------

ONLY_PAGE_1 = Cell(CellKind.CONDITIONAL, page_sizes=(1,))


def spec_column(topk: int | None) -> ColumnId:
    return ColumnId.SPEC_TOPK_GT1 if topk is not None and topk > 1 else ColumnId.SPEC_TOPK_1


def spec_report(
    arch: str, backend: str, topk: int | None, page: int | None, matrix: Matrix = MATRIX
) -> Report:
    capability = (9, 0) if backend == "fa3" else (10, 0)
    # SGLang takes topk only together with the number of steps (else it chooses all three).
    steps = {} if topk is None else {"speculative_num_steps": 3, "speculative_num_draft_tokens": 8}
    return run(
        matrix,
        attention_arch=arch,
        attention_backend=backend,
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=topk,
        page_size=page,
        **steps,
        platform="cuda",
        compute_capability=capability,
    )


# `cell`: what the backend's speculative cell is pinned to (None: the rule is cross-field).
@pytest.mark.parametrize(
    ("arch", "backend", "topk", "page", "cell", "rule"),
    [
        ("mha", "flex_attention", 1, None, NO, "spec-topk-1"),
        ("mha", "torch_native", 1, None, NO, "spec-topk-1"),
        ("mha", "trtllm_mha", 2, None, NO, "spec-topk-gt1"),
        ("mla", "flashinfer", 4, None, NO, "spec-topk-gt1"),
        ("mla", "fa3", 2, 16, ONLY_PAGE_1, "spec-topk-gt1"),
        ("mla", "triton", 2, 64, ONLY_PAGE_1, "spec-topk-gt1"),
        ("mha", "fa3", 2, 16, None, "spec-topk-gt1-paged"),
        ("mha", "triton", 3, 32, None, "spec-topk-gt1-paged"),
    ],
)
def test_speculative_errors(
    arch: str, backend: str, topk: int | None, page: int | None, cell: Cell | None, rule: str
) -> None:
    matrix = MATRIX
    if cell is not None:
        matrix = with_cell(MATRIX, Arch(arch), backend, spec_column(topk), cell)
    assert rule in rules(spec_report(arch, backend, topk, page, matrix), Severity.ERROR)
    if cell is not None:
        # The cell decides: the same configuration with a ✅ cell loses the finding.
        supported = with_cell(MATRIX, Arch(arch), backend, spec_column(topk), YES)
        assert rule not in rules(spec_report(arch, backend, topk, page, supported))


@pytest.mark.parametrize(
    ("arch", "backend", "topk", "page", "cell"),
    [
        ("mla", "fa3", 2, 1, ONLY_PAGE_1),
        ("mla", "triton", 3, None, ONLY_PAGE_1),
        ("mha", "flashinfer", 4, 16, YES),
        ("mha", "fa3", 2, 1, YES),
        ("mha", "trtllm_mha", 1, 64, YES),
    ],
)
def test_speculative_passes(
    arch: str, backend: str, topk: int, page: int | None, cell: Cell
) -> None:
    matrix = with_cell(MATRIX, Arch(arch), backend, spec_column(topk), cell)
    report = spec_report(arch, backend, topk, page, matrix)
    assert report.ok, report.errors


def test_the_decode_backend_is_checked_for_spec_topk_gt1() -> None:
    matrix = with_cells(
        MATRIX,
        (Arch.MHA, "flashinfer", ColumnId.SPEC_TOPK_GT1, YES),
        (Arch.MHA, "trtllm_mha", ColumnId.SPEC_TOPK_GT1, NO),
    )
    report = run(
        matrix,
        attention_arch="mha",
        prefill_attention_backend="flashinfer",
        decode_attention_backend="trtllm_mha",
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=2,
        speculative_num_steps=3,
        speculative_num_draft_tokens=8,
        **B200,
    )
    assert [f.backend for f in report.errors if f.rule == "spec-topk-gt1"] == ["trtllm_mha"]


# -- columns with a softer action -------------------------------------------------------------


# `cell`: the (arch, backend, column) pinned to ❌; pinned to ✅ the finding goes away.
@pytest.mark.parametrize(
    ("fields", "cell", "rule", "severity"),
    [
        (
            {"attention_arch": "mha", "attention_backend": "triton", "kv_cache_dtype": "fp8_e4m3"},
            (Arch.MHA, "triton", ColumnId.FP8_KV),
            "fp8-kv",
            Severity.WARNING,
        ),
        (
            {
                "attention_arch": "mha",
                "prefill_attention_backend": "fa4",
                "sliding_window": True,
                "decode_attention_backend": "triton",
            },
            (Arch.MHA, "fa4", ColumnId.SLIDING_WINDOW),
            "sliding-window",
            Severity.WARNING,
        ),
        (
            {"attention_arch": "mha", "attention_backend": "flashinfer", "multimodal": True},
            (Arch.MHA, "flashinfer", ColumnId.MULTIMODAL),
            "multimodal",
            Severity.WARNING,
        ),
        (
            {"attention_arch": "mla", "attention_backend": "triton"},
            (Arch.MLA, "triton", ColumnId.CHUNKED_PREFIX_CACHE),
            "chunked-prefix-cache",
            Severity.INFO,
        ),
        (
            {"attention_arch": "mha", "attention_backend": "triton", "page_size": 16},
            (Arch.MHA, "triton", ColumnId.NATIVE_PAGE_SIZES),
            "native-page-sizes",
            Severity.INFO,
        ),
    ],
)
def test_soft_columns(
    fields: dict[str, Any], cell: tuple[Arch, str, ColumnId], rule: str, severity: Severity
) -> None:
    arch, backend, column = cell
    report = run(with_cell(MATRIX, arch, backend, column, NO), **fields, **B200)
    assert (rule, severity) in {
        (f.rule, f.severity) for f in report.findings if f.backend == backend
    }
    assert report.ok
    supported = run(with_cell(MATRIX, arch, backend, column, YES), **fields, **B200)
    assert rule not in {f.rule for f in supported.findings if f.backend == backend}


def test_chunked_prefix_cache_is_judged_on_the_prefill_backend_only() -> None:
    matrix = with_cells(
        MATRIX,
        (Arch.MLA, "flashinfer", ColumnId.CHUNKED_PREFIX_CACHE, YES),
        (Arch.MLA, "triton", ColumnId.CHUNKED_PREFIX_CACHE, NO),
    )
    report = run(
        matrix,
        attention_arch="mla",
        prefill_attention_backend="flashinfer",
        decode_attention_backend="triton",
        **B200,
    )
    assert "chunked-prefix-cache" not in rules(report)
    swapped = run(
        matrix,
        attention_arch="mla",
        prefill_attention_backend="triton",
        decode_attention_backend="flashinfer",
        **B200,
    )
    assert "chunked-prefix-cache" in rules(swapped, Severity.INFO)


# -- resolution: defaults, page sizes, dtype fallbacks --------------------------------------


@pytest.mark.parametrize(
    ("arch", "platform", "capability", "cuda", "expected"),
    [
        ("mha", "cuda", (9, 0), (12, 4), "fa3"),
        ("mha", "cuda", (9, 0), (12, 1), "flashinfer"),
        ("mha", "cuda", (10, 0), None, "trtllm_mha"),
        ("mha", "cuda", (8, 0), None, "flashinfer"),
        # SGLang 0.5.7 does not look at the GPU generation here: flashinfer is installed.
        ("mha", "cuda", (7, 5), None, "flashinfer"),
        ("mla", "cuda", (9, 0), None, "fa3"),
        # The assumed MLA model is DeepSeek-V3, whose own rule picks trtllm_mla on sm100.
        ("mla", "cuda", (10, 0), None, "trtllm_mla"),
        ("mla", "cuda", (8, 9), None, "triton"),
        ("mha", "rocm", None, None, "aiter"),
        ("mla", "npu", None, None, "ascend"),
        ("mha", "cpu", None, None, "intel_amx"),
    ],
)
def test_default_backend(
    arch: str,
    platform: str,
    capability: tuple[int, int] | None,
    cuda: tuple[int, int] | None,
    expected: str,
) -> None:
    report = run(
        attention_arch=arch, platform=platform, compute_capability=capability, cuda_version=cuda
    )
    assert report.resolved.prefill_backend == report.resolved.decode_backend == expected
    assert "default-backend" in rules(report, Severity.INFO)


@pytest.mark.parametrize(
    ("architecture", "capability", "topk", "expected"),
    [
        ("LlamaForCausalLM", (9, 0), None, "fa3"),
        ("MistralForCausalLM", (9, 0), None, "flashinfer"),  # not an FA3-default architecture
        ("LlamaForCausalLM", (10, 0), 4, "flashinfer"),
        ("LlamaForCausalLM", (10, 0), 1, "trtllm_mha"),
    ],
)
def test_the_default_reads_the_model_and_speculation(
    architecture: str, capability: tuple[int, int], topk: int | None, expected: str
) -> None:
    spec = (
        {}
        if topk is None
        else {
            "speculative_algorithm": "EAGLE",
            "speculative_eagle_topk": topk,
            "speculative_num_steps": 3,
            "speculative_num_draft_tokens": 8,
        }
    )
    report = run(
        attention_arch="mha",
        platform="cuda",
        compute_capability=capability,
        model_architecture=architecture,
        **spec,
    )
    assert report.resolved.prefill_backend == expected


def test_phase_left_unset_inherits_attention_backend() -> None:
    report = run(
        attention_arch="mla",
        attention_backend="flashinfer",
        decode_attention_backend="trtllm_mla",
        **B200,
    )
    assert (report.resolved.prefill_backend, report.resolved.decode_backend) == (
        "flashinfer",
        "trtllm_mla",
    )


def page_sizes(*sizes: int, fixed: bool = True) -> Cell:
    return Cell(CellKind.PAGE_SIZES, page_sizes=sizes, fixed=fixed)


# The page-size cells the cases below rely on, pinned to their PR #14467 values.
PAGES_PINNED = with_cells(
    MATRIX,
    (Arch.MLA, "flashmla", ColumnId.NATIVE_PAGE_SIZES, page_sizes(64)),
    (Arch.MLA, "cutlass_mla", ColumnId.NATIVE_PAGE_SIZES, page_sizes(128)),
    (Arch.MLA, "trtllm_mla", ColumnId.NATIVE_PAGE_SIZES, page_sizes(32, 64)),
    (Arch.MHA, "trtllm_mha", ColumnId.NATIVE_PAGE_SIZES, page_sizes(16, 32, 64)),
    (Arch.MHA, "flashinfer", ColumnId.NATIVE_PAGE_SIZES, YES),
)


@pytest.mark.parametrize(
    ("arch", "backend", "page", "resolved", "rule"),
    [
        ("mla", "flashmla", 16, 64, "startup-page-size-snapped"),
        ("mla", "cutlass_mla", None, 128, "startup-page-size-default"),
        ("mha", "trtllm_mha", None, 64, "startup-page-size-default"),
        ("mla", "trtllm_mla", 16, 64, "startup-page-size-snapped"),
        ("mla", "trtllm_mla", 32, 32, None),
        ("mha", "trtllm_mha", 128, 64, "startup-page-size-snapped"),
        ("mha", "trtllm_mha", 16, 16, None),
        ("mha", "flashinfer", 16, 16, None),
    ],
)
def test_fixed_page_sizes_are_snapped(
    arch: str, backend: str, page: int | None, resolved: int, rule: str | None
) -> None:
    capability = (9, 0) if backend == "flashmla" else (10, 0)
    report = run(
        PAGES_PINNED,
        attention_arch=arch,
        attention_backend=backend,
        page_size=page,
        platform="cuda",
        compute_capability=capability,
    )
    assert report.resolved.page_size == resolved
    assert report.ok
    snaps = rules(report) & {"startup-page-size-snapped", "startup-page-size-default"}
    assert snaps == ({rule} if rule else set())


def test_conflicting_fixed_page_sizes_are_an_error() -> None:
    report = run(
        PAGES_PINNED,
        attention_arch="mla",
        prefill_attention_backend="flashmla",
        decode_attention_backend="cutlass_mla",
        **B200,
    )
    assert "page-size-conflict" in rules(report, Severity.ERROR)


def test_fa3_with_fp8_e5m2_runs_triton() -> None:
    report = run(attention_arch="mha", attention_backend="fa3", kv_cache_dtype="fp8_e5m2", **H100)
    assert report.resolved.prefill_backend == report.resolved.decode_backend == "triton"
    assert "startup-fa3-fp8-e5m2-fallback" in rules(report, Severity.WARNING)


def test_old_cuda_refuses_fp4() -> None:
    report = run(
        attention_arch="mha",
        attention_backend="triton",
        kv_cache_dtype=FP4,
        cuda_version=(12, 4),
        **B200,
    )
    assert "kv4-requires-cuda" in rules(report, Severity.ERROR)


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        ({"attention_backend": "dual_chunk_flash_attn"}, "model-feature-required"),
        ({"attention_backend": "triton", "encoder_decoder": True}, "model-feature-refused"),
    ],
)
def test_model_features(fields: dict[str, Any], rule: str) -> None:
    assert rule in rules(run(attention_arch="mha", **fields, **B200), Severity.ERROR)


def test_nsa_needs_a_dsa_model() -> None:
    assert "model-feature-required" in rules(
        run(attention_arch="mla", attention_backend="nsa", **B200), Severity.ERROR
    )
    assert run(attention_arch="mla", attention_backend="nsa", sparse_attention=True, **B200).ok


# -- the report as a whole -------------------------------------------------------------------


def test_every_reason_is_reported_at_once() -> None:
    report = run(
        attention_arch="mla",
        attention_backend="trtllm_mha",
        kv_cache_dtype=FP4,
        platform="rocm",
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=3,
    )
    assert {"arch-refused", "platform-unsupported", "kv4-requires-cuda"} <= rules(
        report, Severity.ERROR
    )


def apply(config: AttentionConfig, suggestion: Suggestion) -> AttentionConfig:
    changes: dict[str, Any] = {flag[2:].replace("-", "_"): None for flag in suggestion.removes}
    for flag, value in suggestion.flags:
        field = flag[2:].replace("-", "_")
        changes[field] = int(value) if field in {"page_size", "speculative_eagle_topk"} else value
    return replace(config, **changes)


SUGGESTION_CASES = [
    {
        "attention_arch": "mha",
        "prefill_attention_backend": "fa4",
        "decode_attention_backend": "trtllm_mha",
        "kv_cache_dtype": FP4,
        **B200,
    },
    # An MLA backend refused on a B200 for its ❌ FP4 cell alone, picked from the live matrix.
    {
        "attention_arch": "mla",
        "attention_backend": fp4_refused_on_b200(Arch.MLA),
        "kv_cache_dtype": FP4,
        **B200,
    },
    {
        "attention_arch": "mha",
        "attention_backend": "aiter",
        "kv_cache_dtype": FP4,
        "platform": "rocm",
    },
    {
        "attention_arch": "mha",
        "attention_backend": "fa3",
        "speculative_algorithm": "EAGLE",
        "speculative_eagle_topk": 4,
        "page_size": 16,
        **H100,
    },
    {"attention_arch": "mla", "attention_backend": "fa4", **B200},
]


@pytest.mark.parametrize("fields", SUGGESTION_CASES)
def test_every_suggestion_passes_when_applied(fields: dict[str, Any]) -> None:
    config = AttentionConfig(**fields)
    report = check(config)
    assert not report.ok
    assert report.suggestions
    for suggestion in report.suggestions:
        assert check(apply(config, suggestion)).ok, suggestion


def test_no_suggestions_for_a_passing_configuration() -> None:
    assert run(attention_arch="mla", attention_backend="trtllm_mla", **B200).suggestions == ()


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "flag", "needle"),
    [
        ({"attention_backend": "flashinferr"}, "--attention-backend", "did you mean flashinfer"),
        (
            {"decode_attention_backend": "trtlm_mla"},
            "--decode-attention-backend",
            "did you mean trtllm_mla",
        ),
        ({"kv_cache_dtype": "fp4"}, "--kv-cache-dtype", "fp4_e2m1"),
        ({"kv_cache_dtype": "fp8"}, "--kv-cache-dtype", "valid choices"),
        ({"page_size": 0}, "--page-size", "positive"),
        ({"page_size": -16}, "--page-size", "-16"),
        ({"page_size": "16"}, "--page-size", "'16'"),
        ({"page_size": True}, "--page-size", "True"),
        ({"speculative_eagle_topk": 0}, "--speculative-eagle-topk", "positive"),
        ({"speculative_algorithm": "eagel"}, "--speculative-algorithm", "did you mean EAGLE"),
        ({"speculative_attention_mode": "verify"}, "--speculative-attention-mode", "prefill"),
        ({"attention_arch": "gqa"}, "--attention-arch", "mha"),
        ({"platform": "cdua"}, "--platform", "did you mean cuda"),
        ({"compute_capability": "hopper"}, "--compute-capability", "hopper"),
        ({"compute_capability": (10,)}, "--compute-capability", "(10,)"),
        ({"sliding_window": "yes"}, "--sliding-window", "'yes'"),
        ({"attention_backend": 3}, "--attention-backend", "int"),
    ],
)
def test_bad_input_names_value_and_choices(fields: dict[str, Any], flag: str, needle: str) -> None:
    with pytest.raises(InvalidConfigError) as caught:
        AttentionConfig(**fields)
    message = str(caught.value)
    assert flag in message and needle in message


def test_all_bad_fields_are_reported_together() -> None:
    with pytest.raises(InvalidConfigError) as caught:
        AttentionConfig(attention_backend="nope", page_size=0, platform="tpu")
    assert {p.flag for p in caught.value.problems} == {
        "--attention-backend",
        "--page-size",
        "--platform",
    }
