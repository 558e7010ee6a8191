"""The flag table (`compat.inputs.flags`) is what every reader of SGLang's flags reads.

`compat check`'s options, the launch-command reader, `enforce()` and AttentionConfig's
validation each name the modelled flags; these tests hold each of them to the one table.
"""

from __future__ import annotations

import argparse

import pytest

from compat import InvalidConfigError, enforce
from compat.cli import build_parser
from compat.inputs.command import SWITCH_GIVEN, parse_launch_command
from compat.inputs.config import AttentionConfig
from compat.inputs.flags import FLAG_FIELDS, FLAGS, Flag, FlagGroup, FlagValue, flag_of
from compat.releases import NEWEST
from compat.vocab.spelling import closest, did_you_mean

BAD_VALUES = {FlagValue.NAME: "no-such-value", FlagValue.INTEGER: 0, FlagValue.SWITCH: "yes"}
FLAGS_BY_OPTION = {flag.option: flag for flag in FLAGS}


def _subcommand(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    subparser: argparse.ArgumentParser = commands.choices[name]
    return subparser


def test_every_flag_is_the_config_field_of_its_name() -> None:
    fields = AttentionConfig.__dataclass_fields__
    for flag in FLAGS:
        assert flag.field in fields
        assert flag.option == flag_of(flag.field) == "--" + flag.field.replace("_", "-")
    assert tuple(flag.field for flag in FLAGS) == FLAG_FIELDS


def test_compat_check_offers_the_table_in_its_order() -> None:
    groups = _subcommand("check")._action_groups
    sglang = [group for group in groups if group.title and group.title.startswith("SGLang")]
    assert [g.title for g in sglang] == [group.value for group in FlagGroup]
    offered = [action.option_strings for group in sglang for action in group._group_actions]
    assert offered == [[flag.option] for flag in sorted(FLAGS, key=_group_index)]
    assert all(action.help for group in sglang for action in group._group_actions)


def _group_index(flag: Flag) -> int:
    return list(FlagGroup).index(flag.group)


def test_an_invalid_value_of_every_flag_is_named_by_its_flag() -> None:
    config = {flag.field: BAD_VALUES[flag.value] for flag in FLAGS}
    with pytest.raises(InvalidConfigError) as raised:
        AttentionConfig(attention_arch="mha", platform="cpu", sglang_version=NEWEST, **config)
    assert {problem.flag for problem in raised.value.problems} == set(FLAGS_BY_OPTION)


def test_enforce_reads_every_flag_of_the_table() -> None:
    server_args = {flag.field: BAD_VALUES[flag.value] for flag in FLAGS}
    with pytest.raises(InvalidConfigError) as raised:
        enforce(server_args, attention_arch="mha", platform="cpu", sglang_version=NEWEST)
    assert {problem.flag for problem in raised.value.problems} == set(FLAGS_BY_OPTION)


def test_a_launch_command_sets_every_flag_of_the_table() -> None:
    command = ["python3", "-m", "sglang.launch_server"]
    for flag in FLAGS:
        command += [flag.option] if flag.switch else [flag.option, "1"]
    # 0.5.19: the newest release that declares every modelled flag (0.5.20 dropped
    # --prefill-round-robin-balance, 0.5.13 brought --dsa-*).
    launch = parse_launch_command(command, "0.5.19")
    assert launch.problems == ()
    assert tuple(launch.values) == FLAG_FIELDS
    assert {launch.values[flag.field] for flag in FLAGS if flag.switch} == {SWITCH_GIVEN}


def test_a_flag_alias_sets_its_flag() -> None:
    launch = parse_launch_command(
        ["python3", "-m", "sglang.launch_server", "--tensor-parallel-size", "4", "--tp", "2"]
    )
    assert launch.problems == ()
    assert launch.values == {"tp_size": "2"}  # `--tp` is the one flag it prefixes: the last wins


def test_one_did_you_mean() -> None:
    assert closest("flashinfr", ["flashinfer", "fa3"]) == "flashinfer"
    assert closest("flashinfr", ["flashinfer"], cutoff=0.99) is None
    assert did_you_mean(None) == ""
    assert did_you_mean("fa3") == "; did you mean fa3?"
    assert did_you_mean("fa3", quoted=True) == "; did you mean 'fa3'?"
