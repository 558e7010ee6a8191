"""The launch flags are SGLang's own: the committed data equals each release's parser."""

from __future__ import annotations

import ast

import pytest
from sglang_wheels import sglang_wheel

from compat.flag_source import ARITIES, flags_of_source, flags_of_wheel, render_data
from compat.launch import MODEL_PATH_FLAGS, MODELED_FLAGS, parse_launch_command
from compat.sglang_flag_data import FLAGS
from compat.sglang_flags import RELEASE, UnknownFlagError, canonical_flag, release_flags


@pytest.mark.parametrize("release", sorted(FLAGS))
def test_committed_flags_equal_the_wheels_parser(release: str) -> None:
    from_wheel = flags_of_wheel(sglang_wheel(release))
    assert release_flags(release) == from_wheel, (
        f"regenerate with `python -m compat.flag_source` on the sglang-{release} wheel"
    )


def test_the_data_module_is_what_the_generator_writes() -> None:
    from compat import flag_source

    releases = flag_source.committed_releases()
    assert render_data(releases) == flag_source.DATA_MODULE.read_text(encoding="utf-8")
    assert all(set(kinds) == set(ARITIES) for kinds in FLAGS.values())


def test_the_flags_the_guard_reads_exist_in_the_release() -> None:
    flags = release_flags(RELEASE)
    assert set(MODELED_FLAGS) | set(MODEL_PATH_FLAGS) <= set(flags)
    assert flags["--trust-remote-code"] == "switch" and flags["--tp-size"] == "value"


def test_reader_understands_arities_and_aliases() -> None:
    source = """
class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", "--model", type=str)
        parser.add_argument("--trust-remote-code", action="store_true")
        parser.add_argument("--ratio", nargs="?", const=0.5)
        parser.add_argument("--paths", nargs="*")
"""
    assert flags_of_source(source) == {
        "--model": "value",
        "--model-path": "value",
        "--paths": "list",
        "--ratio": "optional",
        "--trust-remote-code": "switch",
    }
    ast.parse(source)  # the fixture itself is valid Python


def test_a_typo_names_the_flag_it_meant() -> None:
    with pytest.raises(UnknownFlagError, match="did you mean --attention-backend"):
        canonical_flag("--atention-backend")
    # argparse accepts an unambiguous prefix, and so do we
    assert canonical_flag("--kv-cache-dt") == "--kv-cache-dtype"
    with pytest.raises(UnknownFlagError, match="ambiguous"):
        canonical_flag("--speculative-a")


def test_values_and_switches_are_read_by_arity() -> None:
    launch = parse_launch_command(
        [
            "python3",
            "-m",
            "sglang.launch_server",
            "--trust-remote-code",
            "--model-path",
            "org/name",
            "--lora-paths",
            "a",
            "b",
            "--attention-backend=triton",
            "--page-size",
            "16",
        ]
    )
    assert launch.values == {"attention_backend": "triton", "page_size": "16"}
    assert launch.model_path == "org/name"
    assert launch.ignored == ("--trust-remote-code", "--lora-paths a b")
    assert "--model-path org/name" in launch.used and not launch.problems
