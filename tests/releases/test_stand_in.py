"""`stand_in`: the intake's question, "do the previous rules already hold for a new release?".

A release that changed nothing is a file holding `RELEASE = Release(X)`; `stand_in` makes the
guard answer for X exactly as that file would, for one process, without writing it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from compat import releases
from compat.releases import NEWEST, RELEASE_NAMES, stand_in


def test_it_refuses_once_the_guard_has_read_the_release_list() -> None:
    import compat.inputs.validation  # the guard's reading of the release list (binds NEWEST)

    assert compat.inputs.validation.NEWEST == NEWEST
    before = dict(releases.ENTRIES)
    with pytest.raises(RuntimeError, match=r"stand_in\(\) must come before importing compat\."):
        stand_in("9.9.9")
    assert dict(releases.ENTRIES) == before and releases.NEWEST == NEWEST


def _fresh(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_new_release_gets_the_newest_rules_and_page_under_its_own_name() -> None:
    code = """
import json
import re
from msgspec.structs import replace
from compat import releases
from compat.engine.parser import lookup
releases.stand_in("0.5.24")
flags = dict(lookup.release_flags("0.5.23"), **{"--brand-new": "switch"})
lookup.stand_in("0.5.24", flags, after="0.5.23")
from compat import AttentionConfig, check
rules = releases.RELEASES["0.5.24"]
report = check(AttentionConfig(attention_arch="mla", platform="cuda", compute_capability=(10, 0),
                               sglang_version="0.5.24", attention_backend="tokenspeed_mla"))
from compat.inputs.command import parse_launch_command
launch = parse_launch_command(["--brand-new", "--mem-fraction-static", "0.8"], "0.5.24")
print(json.dumps({
    "newest": releases.NEWEST,
    "last": list(releases.RELEASE_NAMES[-2:]),
    "same_rules": replace(rules, release="0.5.23") == releases.RELEASES["0.5.23"],
    "same_page": releases.release_matrix("0.5.24") == releases.release_matrix("0.5.23"),
    "reported": report.sglang_version,
    "resolved": [report.resolved.prefill_backend, report.resolved.decode_backend],
    "ignored": list(launch.ignored), "problems": list(launch.problems),
}))
"""
    result = _fresh(code)
    assert result["newest"] == "0.5.24" and result["last"] == [NEWEST, "0.5.24"]
    assert result["same_rules"] and result["same_page"]
    assert result["reported"] == "0.5.24"
    assert result["resolved"] == ["trtllm_mla", "cutedsl_mla"]  # 0.5.23's alias, kept
    assert (
        result["ignored"] == ["--brand-new", "--mem-fraction-static 0.8"] and not result["problems"]
    )


def test_an_earlier_release_can_stand_in_for_a_later_one() -> None:
    """0.5.22's rules labelled 0.5.23: the history after 0.5.22 is set aside."""
    code = """
import json
import re
from compat import releases
releases.stand_in("0.5.23", rules_of="0.5.22")
from compat import AttentionConfig, check
report = check(AttentionConfig(attention_arch="mla", platform="cuda", compute_capability=(10, 0),
                               sglang_version="0.5.23", attention_backend="tokenspeed_mla",
                               kv_cache_dtype="fp8_e4m3"))
print(json.dumps({"names": list(releases.RELEASE_NAMES[-2:]),
                  "resolved": [report.resolved.prefill_backend, report.resolved.decode_backend]}))
"""
    result = _fresh(code)
    assert result["names"] == ["0.5.22", "0.5.23"]
    assert result["resolved"] == ["tokenspeed_mla", "tokenspeed_mla"]  # no alias before 0.5.23


@pytest.mark.parametrize(
    ("name", "rules_of", "error"),
    [
        ("0.5.20", None, r"SGLang 0\.5\.20 is not a release after"),
        ("soon", None, r"SGLang soon is not a release after"),
        ("0.5.24", "0.5.99", r"SGLang 0\.5\.99 is not modelled"),
    ],
)
def test_it_takes_only_a_later_release_and_a_modelled_one(
    name: str, rules_of: str | None, error: str
) -> None:
    code = (
        "from compat import releases\n"
        f"try:\n    releases.stand_in({name!r}, rules_of={rules_of!r})\n"
        "except releases.UnknownReleaseError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert re.search(error, done.stdout), done.stdout
    assert RELEASE_NAMES[-1] == NEWEST
