"""The sub-backend flags are modelled inputs: each release's own names, nothing else.

`--dsa-prefill-backend` / `--dsa-decode-backend` (`--nsa-*`), `--linear-attn-backend` and its
per-phase forms and `--mm-attention-backend` take the names the release's parser declares
(`ReleaseRules.sub_choices`, generated from the wheel; `tests/engine/test_parser.py` holds
the data to each parser). A name another release accepts is refused naming those releases,
as a backend name is.
"""

from __future__ import annotations

import pytest
from refusals import cli

from compat import InvalidConfigError, enforce
from compat.inputs.command import parse_launch_command
from compat.inputs.config import AttentionConfig
from compat.inputs.flags import SUB_BACKEND_FLAGS, Flag
from compat.inputs.sub_backend_checks import spelling
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES

LAUNCH = ("python3", "-m", "sglang.launch_server")
MLA = {"attention_arch": "mla", "platform": "cuda", "compute_capability": "9.0"}


def _accepting(flag: Flag, value: str) -> list[str]:
    return [r for r in RELEASE_NAMES if value in RELEASES[r].sub_choices.get(flag.field, ())]


@pytest.mark.parametrize("flag", SUB_BACKEND_FLAGS, ids=lambda flag: flag.option)
def test_every_release_takes_its_own_names_and_refuses_the_others(flag: Flag) -> None:
    every = {name for r in RELEASE_NAMES for name in RELEASES[r].sub_choices.get(flag.field, ())}
    assert every, "no release declares the flag"
    for release in RELEASE_NAMES:
        own = RELEASES[release].sub_choices.get(flag.field, ())
        for name in own:
            config = AttentionConfig(sglang_version=release, **MLA, **{flag.field: name})
            assert getattr(config.parsed.sub_backends, flag.field) == name
        for name in sorted(every - set(own)):
            with pytest.raises(InvalidConfigError) as raised:
                AttentionConfig(sglang_version=release, **MLA, **{flag.field: name})
            (problem,) = raised.value.problems
            assert problem.flag == spelling(flag, release)
            accepting = _accepting(flag, name)
            # It names a release that takes the name: the next one, or the last that did.
            later = [r for r in accepting if RELEASE_NAMES.index(r) > RELEASE_NAMES.index(release)]
            named = later[0] if later else accepting[-1]
            assert named in problem.reason or accepting[0] in problem.reason, problem.reason


def test_a_flag_a_release_lacks_names_the_releases_that_have_it() -> None:
    flag = next(
        f for f in SUB_BACKEND_FLAGS if f.field not in RELEASES[RELEASE_NAMES[0]].sub_choices
    )
    name = RELEASES[NEWEST].sub_choices[flag.field][0]
    accepting = _accepting(flag, name)
    with pytest.raises(InvalidConfigError) as raised:
        AttentionConfig(sglang_version=RELEASE_NAMES[0], **MLA, **{flag.field: name})
    (problem,) = raised.value.problems
    assert f"SGLang {RELEASE_NAMES[0]} has no {flag.option}" in problem.reason
    assert f"{accepting[0]} to {accepting[-1]}" in problem.reason
    with pytest.raises(InvalidConfigError, match="no release accepts 'no-such-kernel'"):
        AttentionConfig(sglang_version=RELEASE_NAMES[0], **MLA, **{flag.field: "no-such-kernel"})


def test_a_typo_is_refused_with_the_closest_name() -> None:
    flag = SUB_BACKEND_FLAGS[0]
    name = RELEASES[NEWEST].sub_choices[flag.field][0]
    with pytest.raises(InvalidConfigError) as raised:
        AttentionConfig(sglang_version=NEWEST, **MLA, **{flag.field: name + "x"})
    (problem,) = raised.value.problems
    assert problem.did_you_mean == name
    assert problem.choices == RELEASES[NEWEST].sub_choices[flag.field]


@pytest.mark.parametrize("release", ["0.5.12", "0.5.19"])
def test_the_older_dsa_spelling_sets_the_same_field(release: str) -> None:
    launch = parse_launch_command([*LAUNCH, "--nsa-decode-backend", "fa3"], release)
    assert launch.problems == () and launch.ignored == ()
    assert launch.values == {"dsa_decode_backend": "fa3"}


def test_the_older_dsa_spelling_is_refused_where_the_parser_dropped_it() -> None:
    launch = parse_launch_command([*LAUNCH, "--nsa-decode-backend", "fa3"], NEWEST)
    assert launch.problems == (
        f"SGLang {NEWEST} has no flag --nsa-decode-backend; did you mean --dsa-decode-backend?",
    )


def test_the_sub_backend_flags_are_read_not_ignored() -> None:
    words = [*LAUNCH, "--dsa-decode-backend", "flashmla_kv", "--mm-attention-backend", "fa4"]
    launch = parse_launch_command(words, NEWEST)
    assert launch.ignored == ()
    assert launch.values == {"dsa_decode_backend": "flashmla_kv", "mm_attention_backend": "fa4"}


def test_enforce_reads_the_older_field_names() -> None:
    # Up to 0.5.15 ServerArgs holds `nsa_decode_backend`: a name 0.5.12 lacks is refused.
    server_args = {"nsa_decode_backend": "flashmla_sparse_q8", "attention_backend": "fa3"}
    with pytest.raises(InvalidConfigError, match="--nsa-decode-backend"):
        enforce(server_args, sglang_version="0.5.12", **MLA)


def test_compat_check_refuses_a_name_of_another_release_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flag = next(f for f in SUB_BACKEND_FLAGS if f.field == "mm_attention_backend")
    old = RELEASE_NAMES[0]
    name = next(
        n
        for n in RELEASES[NEWEST].sub_choices[flag.field]
        if n not in RELEASES[old].sub_choices[flag.field]
    )
    args = ("check", "--sglang-version", old, "--attention-arch", "mha", "--gpu", "H200")
    code, out, err = cli([*args, "--", *LAUNCH, flag.option, name], capsys)
    assert code == 2, out
    assert flag.option in err and repr(name) in err and _accepting(flag, name)[0] in err
    code, out, _ = cli(
        [*args, "--", *LAUNCH, flag.option, RELEASES[old].sub_choices[flag.field][0]], capsys
    )
    assert code == 0, out
    assert "not modeled" not in out
