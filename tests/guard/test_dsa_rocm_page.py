"""DeepSeek DSA's page size on ROCm (0.5.12+): aiter's preshuffle check, with the official
ROCm image's variables as defaults and Triton's version an explicit input."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from compat import AttentionConfig, check
from compat.engine.package_versions import at_least, is_version
from compat.engine.preshuffle import PAGE_LEGACY, PAGE_PRESHUFFLE, TRITON_MIN, USE_AITER
from compat.releases import RELEASE_NAMES, release_rules
from compat.releases.image import ROCM_IMAGE

DSA = dict(attention_arch="mla", model_architecture="DeepseekV32ForCausalLM",
           sparse_attention=True)  # fmt: skip
NEW = "3.5.0"
OLD = "3.4.0"


def _page(release: str = "0.5.23", platform: str = "rocm", **fields: object) -> int:
    config = AttentionConfig(platform=platform, sglang_version=release, **DSA, **fields)  # type: ignore[arg-type]
    page = check(config).resolved.page_size
    assert page is not None
    return page


def _reading() -> list[str]:
    return [r for r in RELEASE_NAMES if release_rules(r).preshuffle is not None]


def test_the_releases_that_read_it_are_those_whose_wheel_has_the_check() -> None:
    reading = _reading()
    assert reading[0] == "0.5.12" and reading[-1] == RELEASE_NAMES[-1]


def test_the_image_sets_sglang_use_aiter_and_no_triton() -> None:
    assert dict(ROCM_IMAGE.environment) == {USE_AITER: "1"}
    assert "triton" not in dict(ROCM_IMAGE.packages)  # not established: never guessed
    assert all(e.url and "rocm.Dockerfile" in e.url for e in ROCM_IMAGE.evidence)


@pytest.mark.parametrize("release", ["0.5.12", "0.5.13", "0.5.21", "0.5.23"])
def test_the_image_defaults_with_a_new_triton_run_page_64(release: str) -> None:
    assert _page(release, packages=(("triton", NEW),)) == PAGE_PRESHUFFLE


@pytest.mark.parametrize(
    ("environment", "packages"),
    [
        (((USE_AITER, "0"),), (("triton", NEW),)),
        ((("SGLANG_DSA_HIP_DISABLE_PRESHUFFLE", "1"),), (("triton", NEW),)),
        ((("SGLANG_DSA_HIP_DISABLE_PRESHUFFLE", "yes"),), (("triton", NEW),)),
        ((), (("triton", OLD),)),
        ((), ()),  # Triton unknown: SGLang's answer for a version it cannot read
    ],
)
def test_the_legacy_path_runs_page_1(
    environment: tuple[tuple[str, str], ...], packages: tuple[tuple[str, str], ...]
) -> None:
    assert _page(environment=environment, packages=packages) == PAGE_LEGACY


def test_aot_gluon_needs_no_triton() -> None:
    env = (("AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS", "1"),)
    assert _page(environment=env) == PAGE_PRESHUFFLE


def test_the_switch_spellings_follow_the_release() -> None:
    nsa = (("SGLANG_NSA_HIP_DISABLE_PRESHUFFLE", "1"),)
    new = (("triton", NEW),)
    # 0.5.12: get_bool_env_var of the NSA name; 0.5.13-0.5.20 its alias; 0.5.21 on: gone.
    assert _page("0.5.12", environment=nsa, packages=new) == PAGE_LEGACY
    assert _page("0.5.13", environment=nsa, packages=new) == PAGE_LEGACY
    assert _page("0.5.12", environment=(("SGLANG_NSA_HIP_DISABLE_PRESHUFFLE", "yes"),),
                 packages=new) == PAGE_PRESHUFFLE  # fmt: skip
    with pytest.raises(ValueError, match="SGLANG_NSA_HIP_DISABLE_PRESHUFFLE"):
        _page("0.5.21", environment=nsa, packages=new)


def test_before_0_5_12_rocm_runs_page_1_and_reads_no_triton() -> None:
    assert _page("0.5.11") == PAGE_LEGACY
    with pytest.raises(ValueError, match="reads none"):
        _page("0.5.11", packages=(("triton", NEW),))


def test_cuda_launches_are_unchanged() -> None:
    assert _page(platform="cuda", compute_capability="9.0") == 64
    report = check(AttentionConfig(platform="cuda", compute_capability="9.0", **DSA))  # type: ignore[arg-type]
    assert report.assumed_packages == {} and report.assumed_image == {}
    assert report.package_note is None


def test_the_report_says_what_it_assumed() -> None:
    report = check(AttentionConfig(platform="rocm", sglang_version="0.5.23", **DSA))  # type: ignore[arg-type]
    assert report.assumed_image == {USE_AITER: "1"}
    assert report.assumed_packages == {"triton": None}
    assert report.package_note is not None and "Triton >= 3.5.0" in report.package_note
    given = check(AttentionConfig(platform="rocm", sglang_version="0.5.23",  # type: ignore[arg-type]
                                  packages=(("triton", NEW),), **DSA))  # fmt: skip
    assert given.assumed_packages == {} and given.package_note is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "compat", "check", "--gpu", "MI300X", "--model",
               "deepseek-ai/DeepSeek-V3.2-Exp", "--sglang-version", "0.5.23", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("gpu", ["MI300X", "MI355X"])
def test_cli_pages_and_the_assumed_lines(gpu: str) -> None:
    base = ["--gpu", gpu]
    new = _cli(*base, "--package", f"triton=={NEW}")
    assert "page size 64" in new.stdout
    assert "assumed as the official ROCm image sets them: SGLANG_USE_AITER=1" in new.stdout
    off = _cli(*base, "--package", f"triton=={NEW}", "--env", "SGLANG_USE_AITER=0")
    assert "page size 1" in off.stdout and "set SGLANG_USE_AITER=0" in off.stdout
    unknown = _cli(*base, "--json")
    data = json.loads(unknown.stdout)
    assert data["resolved"]["page_size"] == 1
    assert data["packages"]["assumed"] == {"triton": None} and data["packages"]["note"]
    assert data["environment"]["assumed_image"] == {USE_AITER: "1"}


@pytest.mark.parametrize(
    ("bad", "named"),
    [("triton==abc", "abc"), ("triton", "'triton'"), ("tritonn==3.5.0", "tritonn")],
)
def test_cli_bad_package_is_exit_2(bad: str, named: str) -> None:
    result = _cli("--package", bad)
    assert result.returncode == 2
    assert named in result.stderr and "triton" in result.stderr


def test_versions_compare_as_packaging_does() -> None:
    assert at_least("3.5.0+rocm7.2", TRITON_MIN) and at_least("3.5.0rc1", TRITON_MIN)
    assert at_least("3.7.0+amd.rocm7.2.0.git89002410", TRITON_MIN)
    assert not at_least("3.4.99", TRITON_MIN) and at_least("3.5", TRITON_MIN)
    assert at_least("1!1.0", TRITON_MIN) and not at_least("nonsense", TRITON_MIN)
    assert is_version("3.8.0+git4cff872c") and not is_version("3.5.0 beta")


@pytest.mark.parametrize(
    ("platform", "release", "asked"),
    [("rocm", "0.5.23", ["triton"]), ("rocm", "0.5.11", []), ("cuda", "0.5.23", [])],
)
def test_enforce_reads_the_installed_triton_only_where_the_release_reads_it(
    monkeypatch: pytest.MonkeyPatch, platform: str, release: str, asked: list[str]
) -> None:
    """The plugin's cost: importlib.metadata is asked only for DSA's page size on ROCm."""
    import compat.guard.enforce as enforce_module

    calls: list[str] = []

    def installed(distribution: str) -> str:
        calls.append(distribution)
        return NEW

    monkeypatch.setattr(enforce_module, "installed_version", installed)
    monkeypatch.delenv("SGLANG_USE_AITER", raising=False)
    args = SimpleNamespace(attention_backend=None, page_size=None)
    machine = {"compute_capability": (9, 0)} if platform == "cuda" else {}
    report = enforce_module.enforce(
        args, attention_arch="mla", model_architecture="DeepseekV32ForCausalLM",
        platform=platform, sglang_version=release, log=False, **machine,
    )  # fmt: skip
    assert calls == asked
    assert dict(report.config.packages) == ({"triton": NEW} if asked else {})


def test_the_pages_fixed_size_is_disputed_where_sglang_chose_backend_and_page_itself() -> None:
    # On ROCm without the preshuffle path, DeepSeek DSA's own branch picks the dsa backend
    # and page size 1: SGLang runs it so by design, so the page's "64 only" is a warning
    # naming the code, not a refusal. Page 64 (Triton 3.5) has no conflict at all.
    def conflicts(**fields: object) -> list[tuple[str, str]]:
        config = AttentionConfig(platform="rocm", sglang_version="0.5.23", **DSA, **fields)  # type: ignore[arg-type]
        report = check(config)
        return [(f.severity.value, f.message) for f in report.findings
                if f.rule == "page-size-conflict"]  # fmt: skip

    [(severity, message)] = conflicts()
    assert severity == "warning" and "its own start-up chose both for this model" in message
    assert not conflicts(packages=(("triton", NEW),))
    # A page size the launch forces stays the page's error: SGLang did not choose it.
    forced = conflicts(page_size=16, attention_backend="dsa")
    assert forced and all(severity == "error" for severity, _ in forced)
