import os
from pathlib import Path

import pytest

# Most tests are about the PR #14467 baseline, which SGLang 0.5.7 shipped: pin it (subprocesses
# inherit it) unless a run names another release. Tests of later releases say theirs.
os.environ.setdefault("COMPAT_SGLANG_VERSION", "0.5.7")

_TESTS = Path(__file__).resolve().parent
SLOW_MODULES = frozenset(
    {
        # SGLang's own start-up code on the conformance grid, and the harness that runs it.
        "engine/test_conformance.py",
        "engine/test_conformance_releases.py",
        "engine/test_conformance_spec_algorithms.py",
        "engine/test_conformance_zoo.py",
        "engine/test_model_data.py",
        "guard/test_conformance_enforce.py",
        "tools/test_conformance_harness.py",
        "tools/test_conformance_zoo_harness.py",
        "sglang_plugin/test_plugin.py",
        # Whole spaces: the consistency proof, the fuzzers, the built site and its browser.
        "guard/test_consistency.py",
        "cli/test_hostile_fuzz.py",
        "guard/test_fuzz.py",
        "publish/test_site.py",
        "publish/test_page_cache.py",
        "publish/test_browser.py",
        "publish/test_browser_guard.py",
        "test_benchmark_smoke.py",
        # Every cell of the matrix flipped, one at a time, and release by release.
        "claim/test_mutation.py",
        "publish/test_release_mutation.py",
    }
)
"""Test modules of the slow tier (each takes tens of seconds or more); a test elsewhere can
say `@pytest.mark.slow` itself. The fast tier for the edit loop is
`python -m pytest -m "not slow"`; the README's `python -m pytest` runs both."""
SLOW_TESTS = frozenset(
    {
        "claim/test_columns.py::test_a_cold_matrix_words_every_report_as_a_warm_one",
        "cli/test_check.py::test_platform_is_detected_when_not_given",
        "cli/test_docs.py::test_check_fails_on_a_hand_edit_then_docs_repairs_it",
        "cli/test_hostile_files.py::test_concurrent_writers_leave_a_fresh_page_and_no_temporary_file",
        "cli/test_launch.py::test_json_errors_go_to_stdout",
        "cli/test_launch.py::test_the_deepseek_command_gets_multi_flag_fixes_that_pass",
        "engine/test_parser.py::test_committed_flags_equal_the_releases_parser",
        "engine/test_parser.py::test_a_pasted_command_is_read_with_the_predicted_release",
        "engine/test_spec_algorithms.py::test_the_algorithm_choices_are_what_the_wheel_accepts",
        # The intake against SGLang's outcomes on a whole release's grid and zoo (cached).
        "tools/test_intake.py::test_a_modelled_release_against_its_own_rules_has_nothing_to_do",
        "tools/test_intake.py::test_when_the_previous_rules_hold_it_records_the_release",
        "tools/test_intake.py::test_a_doctored_release_names_the_change_and_its_line",
    }
)
"""Single tests of the slow tier, by module and name (every parameter of the test)."""


LONGEST_FIRST = (
    "publish/test_browser_guard.py",
    "guard/test_fuzz.py",
    "publish/test_finder.py",
    "publish/test_browser.py",
    "cli/test_hostile_fuzz.py",
    "guard/test_conformance_enforce.py",
    "engine/test_conformance.py",
    "engine/test_conformance_releases.py",
    "tools/test_intake.py",
    "claim/test_mutation.py",
    "guard/test_consistency.py",
    "test_docs_examples.py",
)
"""The modules that take longest (each 15 to 75 s on this project's 2-core machine), longest
first; the others follow in path order. Each module runs on one worker (`--dist loadfile`),
handed out in collection order as workers free up (`--no-loadscope-reorder`: xdist's own
order, by number of tests, started the longest module, nine tests, two thirds of the way
through and left one worker idle at the end). The first browser module builds the site, and
on a fresh machine computes the finder's sample for every later module that needs it. The
documents' examples (about 60 commands, each in a fresh interpreter) are the fast tier's
longest module: last in path order, they kept one worker busy 11 s after the other ended."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than this process may use CPUs. Many tests wait (on a
    subprocess's start, on Chromium, on the lock of the finder's build cache while another
    worker fills it), and the extra worker keeps every CPU busy meanwhile (on 2 cores, a
    tenth off the suite's time: `python benchmarks/loop.py --tests` measures it)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.relative_to(_TESTS).as_posix()
        name = item.name.split("[", 1)[0]
        if module in SLOW_MODULES or f"{module}::{name}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    # A stable sort: every worker collects the same order, and a module keeps its own.
    first = {module: place for place, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(item.path.relative_to(_TESTS).as_posix(), len(first)))
