"""`compat audit`'s rows: every disputed cell of every release, proved again by `check()`,
and every documented cell it does not list shown to agree with the release's code."""

from __future__ import annotations

import re

import msgspec
import pytest

from compat.claim.baseline import MATRIX
from compat.claim.cells import CellKind
from compat.claim.columns import ColumnId
from compat.claim.matrix import Matrix
from compat.engine.sites import raised_at
from compat.guard.audit import AUDIT_MACHINES, audit, column_values, engine_errors
from compat.guard.audit_facts import CodeVerdict, Dispute, Launch
from compat.guard.check import check
from compat.guard.report import Enforcement, Report
from compat.inputs.config import AttentionConfig
from compat.inputs.gpus import gpu_named
from compat.inputs.validation import FEATURE_FIELDS
from compat.releases import RELEASE_NAMES, release_matrix
from compat.vocab.terms import Arch, Platform, Severity

SITE = re.compile(r"^sglang/[\w/]+\.py:\d+ \(\w+\)$")


def _fields(dispute: Dispute, machine: str, values: dict[str, object]) -> dict[str, object]:
    gpu = gpu_named(machine)
    return {
        "sglang_version": dispute.release,
        "attention_arch": dispute.arch.value,
        "attention_backend": dispute.backend,
        "platform": gpu.platform.value,
        "compute_capability": gpu.capability,
        **values,
    }


def _recheck(dispute: Dispute, launch: Launch) -> Report:
    fields = _fields(dispute, launch.machine, dict(launch.values))
    return check(AttentionConfig(**fields))  # type: ignore[arg-type]


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_row_is_proved_again_by_check_on_its_isolating_launch(release: str) -> None:
    matrix = release_matrix(release)
    for dispute in audit(release):
        cell = matrix.row(dispute.arch, dispute.backend).cells[dispute.column]  # type: ignore[union-attr]
        assert cell.symbol == dispute.documented  # the claim layer's word, not a typed one
        for launch in dispute.launches:
            plain = check(AttentionConfig(**_fields(dispute, launch.machine, {})))  # type: ignore[arg-type]
            assert not engine_errors(plain), "the backend alone must start: the cell is isolated"
            assert launch.values, "a launch sets its column's value"
            report = _recheck(dispute, launch)
            if dispute.verdict is CodeVerdict.RUNS:
                assert cell.kind is CellKind.UNSUPPORTED
                assert not engine_errors(report)
                assert any(
                    f.rule == dispute.column.rule_id and f.backend == dispute.backend
                    for f in report.findings
                )
            else:
                assert cell.kind is CellKind.SUPPORTED
                errors = engine_errors(report)
                assert errors
                wanted = (
                    Enforcement.STARTUP
                    if dispute.verdict is CodeVerdict.REFUSES
                    else Enforcement.BACKEND_BUILD
                )
                assert any(f.enforced is wanted for f in errors)


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_row_names_the_line_of_code_that_shows_it(release: str) -> None:
    for dispute in audit(release):
        for launch, site in dispute.sites:
            assert site is not None, f"{release} {launch.command}: run tools/audit_sites.py"
            assert SITE.match(site), site
            # A backend build's line is the engine's (proved against each wheel by the build
            # conformance tests); a start-up line is recorded from the release's own code.
            built = next((f.raised_at for f in launch.findings if f.raised_at), None)
            recorded = raised_at(release, launch.machine, dispute.arch, launch.argv)
            assert site == (built or recorded)
        if dispute.verdict is CodeVerdict.RUNS:
            # The check that accepts this backend refuses another, naming this one.
            assert dispute.accepted_by
            assert all(dispute.backend in f.allowed for f in dispute.accepted_by)


def _served(matrix: Matrix, backend: str) -> dict[str, bool]:
    """The model features `backend` serves only, stated (a QSA model for qsa): its cells
    speak of the models it serves."""
    needed = matrix.backend(matrix.judged_as(backend)).requires_features
    return {FEATURE_FIELDS[feature]: True for feature in needed}


def _isolating_machines(matrix: Matrix, release: str, arch: Arch, backend: str) -> list[str]:
    judged = matrix.backend(matrix.judged_as(backend))
    found = []
    for name in AUDIT_MACHINES:
        gpu = gpu_named(name)
        needed = judged.capability.get(arch)
        if gpu.platform not in judged.platforms or (
            gpu.platform is Platform.CUDA and needed is not None and gpu.capability not in needed
        ):
            continue
        plain = check(
            AttentionConfig(
                sglang_version=release, attention_arch=arch.value, attention_backend=backend,
                platform=gpu.platform.value, compute_capability=gpu.capability,
                **_served(matrix, backend),
            )
        )  # fmt: skip
        if not engine_errors(plain):
            found.append(name)
    return found


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_documented_cell_not_listed_agrees_with_the_code(release: str) -> None:
    """A ✅ not listed runs somewhere on some value of its column (or only the page's own
    cross-field rule refuses it, or nothing isolates it); a ❌ not listed is accepted by no
    check of the release's code that refuses another backend for the same column."""
    matrix = release_matrix(release)
    listed = {(d.arch, d.backend, d.column) for d in audit(release)}
    page_rules = {f"startup-{r.id}" for r in matrix.cross_field_rules} | {
        f"startup-{r.rule_id}" for r in matrix.dtype_requirements
    }
    checked = 0
    for table in matrix.tables:
        for row in table.rows:
            machines = _isolating_machines(matrix, release, table.arch, row.backend)
            for column_id in table.columns:
                cell = row.cells[column_id]
                values = column_values(matrix.column(column_id))
                if cell.kind not in (CellKind.SUPPORTED, CellKind.UNSUPPORTED) or not values:
                    continue
                if column_id is ColumnId.NATIVE_PAGE_SIZES or not machines:
                    continue
                if (table.arch, row.backend, column_id) in listed:
                    continue
                checked += 1
                reports = [
                    check(
                        AttentionConfig(
                            sglang_version=release, attention_arch=table.arch.value,
                            attention_backend=row.backend,
                            platform=gpu_named(m).platform.value,
                            compute_capability=gpu_named(m).capability,
                            **_served(matrix, row.backend), **v,  # type: ignore[arg-type]
                        )
                    )
                    for v in values
                    for m in machines
                ]  # fmt: skip
                if cell.kind is CellKind.SUPPORTED:
                    assert any(
                        all(f.rule in page_rules for f in engine_errors(r)) for r in reports
                    ), f"{release} {table.arch.label} {row.backend} {column_id.value}"
                else:
                    for r in reports:
                        if not engine_errors(r):
                            # It runs: then no disputed ❌ may turn its finding into a warning.
                            assert not any(
                                f.rule == column_id.rule_id
                                and f.severity is Severity.WARNING
                                and "Disputed" in f.message
                                for f in r.findings
                            )
    assert checked > 50


def test_flashmla_and_trtllm_mla_fp4_cells_of_0_5_23_are_listed_with_the_refusing_line() -> None:
    rows = {(d.arch, d.backend, d.column): d for d in audit("0.5.23")}
    for backend in ("flashmla", "trtllm_mla"):
        dispute = rows[Arch.MLA, backend, ColumnId.FP4_KV]
        assert dispute.documented == "✅"
        assert dispute.verdict is CodeVerdict.REFUSES
        nvfp4 = [site for launch, site in dispute.sites if launch.setting.endswith(" nvfp4")]
        assert nvfp4 and nvfp4[0] is not None and SITE.match(nvfp4[0])


def test_a_disputed_no_is_a_warning_naming_the_evidence_and_others_still_refuse() -> None:
    """Policy shared with the backend-build work: the code decides a disputed cell."""
    ran = [d for d in audit("0.5.7") if d.verdict is CodeVerdict.RUNS]
    assert ran, "0.5.7's own KV4 check accepts a backend its page marks ❌"
    dispute = ran[0]
    launch = dispute.launch
    fields = _fields(dispute, launch.machine, dict(launch.values))
    report = check(AttentionConfig(**fields))  # type: ignore[arg-type]
    assert report.ok
    warned = [f for f in report.warnings if f.rule == dispute.column.rule_id]
    assert warned and dispute.site is not None and dispute.site in warned[0].message
    # A copy of the page is the page: the same warning.
    copy = msgspec.structs.replace(release_matrix("0.5.7"))
    assert check(AttentionConfig(**fields), copy).ok  # type: ignore[arg-type]
    # Another page (the baseline restated, which is not 0.5.7's folded page) judges on its
    # word alone: the same ❌ is a refusal there.
    assert release_matrix("0.5.7") != MATRIX
    strict = check(AttentionConfig(**fields), MATRIX)  # type: ignore[arg-type]
    assert not strict.ok
    assert any(f.rule == dispute.column.rule_id for f in strict.errors)
    # A documented ❌ that no check of the code accepts keeps refusing.
    spec = AttentionConfig(
        sglang_version="0.5.7", attention_arch="mha", attention_backend="torch_native",
        compute_capability="9.0", speculative_algorithm="EAGLE", speculative_eagle_topk=2,
        speculative_num_steps=3, speculative_num_draft_tokens=7,
    )  # fmt: skip
    assert any(f.rule == ColumnId.SPEC_TOPK_GT1.rule_id for f in check(spec).errors)
