"""What reading a launch now takes from it: the start-up flags beyond attention, the machine
`--device` names, and the attention architecture `--model-architecture` implies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.inputs.assemble import InputError, LaunchRequest, assemble
from compat.inputs.command import parse_launch_command

LAUNCH = ("python3", "-m", "sglang.launch_server", "--model-path", "org/model")


def _assemble(*flags: str, **request: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    assembled = assemble(LaunchRequest(command=(*LAUNCH, *flags), detect=False, **request))
    return vars(assembled.config), assembled.context


def test_the_start_up_flags_are_read_not_ignored() -> None:
    config, context = _assemble(
        *("--tp", "4", "--dp-size", "2", "--enable-dp-attention"),
        *("--enable-deterministic-inference", "--trust-remote-code", "--quantization", "fp8"),
        *("--disaggregation-mode", "decode", "--mem-fraction-static", "0.8"),
        gpu="H200",
        model={"attention_arch": "mha"},
    )
    assert (config["tp_size"], config["dp_size"]) == (4, 2)
    assert config["enable_dp_attention"] is config["enable_deterministic_inference"] is True
    assert config["trust_remote_code"] is True
    assert (config["quantization"], config["disaggregation_mode"]) == ("fp8", "decode")
    assert context["ignored_flags"] == ["--mem-fraction-static 0.8"]


def test_a_switch_given_twice_agrees_and_a_value_may_come_once() -> None:
    config, _ = _assemble(
        "--trust-remote-code",
        gpu="H200",
        model={"attention_arch": "mha"},
        flags={"trust_remote_code": True},
    )
    assert config["trust_remote_code"] is True
    with pytest.raises(InputError, match=r"--tp-size is '2' here but '4'"):
        _assemble("--tp-size", "4", gpu="H200", model={"attention_arch": "mha"},
                  flags={"tp_size": "2"})  # fmt: skip


@pytest.mark.parametrize("device", ["cpu", "npu", "xpu"])
def test_device_names_the_machine_when_nothing_else_does(device: str) -> None:
    config, context = _assemble("--device", device, model={"attention_arch": "mha"})
    assert config["platform"] == device
    assert context["hardware_from"] == "--device"
    assert "detected" not in context


def test_device_on_a_named_gpu_keeps_the_gpu() -> None:
    config, _ = _assemble("--device", "cpu", gpu="B200", model={"attention_arch": "mha"})
    assert (config["platform"], config["device"]) == ("cuda", "cpu")


@pytest.mark.parametrize(
    ("architecture", "release", "arch"),
    [
        ("DeepseekV3ForCausalLM", "0.5.7", "mla"),
        ("LlamaForCausalLM", "0.5.7", "mha"),
        ("Glm5NextForConditionalGeneration", "0.5.23", "mla"),
        ("GptOssForCausalLM", "0.5.23", "mha"),
    ],
)
def test_model_architecture_implies_the_attention_architecture(
    architecture: str, release: str, arch: str
) -> None:
    config, context = _assemble(
        gpu="B200", model={"model_architecture": architecture}, sglang_version=release
    )
    assert config["attention_arch"] == arch
    assert (
        f"SGLang {release} runs {architecture}"
        in context["from_model_config"]["attention_arch"]["why"]
    )


def test_an_architecture_the_release_does_not_serve_is_invalid_input() -> None:
    with pytest.raises(InputError, match=r"serves no architecture 'DeepseekV3ForCausalLLM'.*"
                       r"did you mean DeepseekV3ForCausalLM\?"):  # fmt: skip
        _assemble(gpu="B200", model={"model_architecture": "DeepseekV3ForCausalLLM"})
    with pytest.raises(InputError, match=r"SGLang 0\.5\.7 serves no architecture 'Glm5Next"):
        _assemble(
            gpu="B200",
            model={"model_architecture": "Glm5NextForConditionalGeneration"},
            sglang_version="0.5.7",
        )


def test_a_flag_a_release_removed_is_refused_by_its_parser() -> None:
    launch = parse_launch_command([*LAUNCH, "--prefill-round-robin-balance"], "0.5.23")
    assert launch.problems and "--prefill-round-robin-balance" in launch.problems[0]
    assert parse_launch_command([*LAUNCH, "--prefill-round-robin-balance"], "0.5.7").values == {
        "prefill_round_robin_balance": "true"
    }


EAGLE3_DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 7168,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "num_hidden_layers": 1,
}


def test_the_draft_model_path_gives_the_draft_its_own_architecture(tmp_path: Path) -> None:
    # An EAGLE3 draft is a Llama-architecture (MHA) model whatever the target: its config
    # says so, and the draft's backends are built for it.
    (tmp_path / "config.json").write_text(json.dumps(EAGLE3_DRAFT), encoding="utf-8")
    draft = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(tmp_path))
    config, context = _assemble(*draft, gpu="B200", model={"attention_arch": "mla"})
    assert config["draft_attention_arch"] == "mha"
    assert context["draft_model_config"] == {
        "flag": "--speculative-draft-model-path",
        "source": str(tmp_path / "config.json"),
        "architecture": "LlamaForCausalLMEagle3",
        "draft_attention_arch": "mha",
        "why": "no MLA fields (kv_lora_rank, q_lora_rank) in config.json and "
        "LlamaForCausalLMEagle3 is not an MLA architecture",
    }
    assert "ignored_flags" not in context or not any(
        "--speculative-draft-model-path" in flag for flag in context["ignored_flags"]
    )
    # The stated architecture wins over the config's.
    stated = {"attention_arch": "mla", "draft_attention_arch": "mla"}
    config, _ = _assemble(*draft, gpu="B200", model=stated)
    assert config["draft_attention_arch"] == "mla"


def test_a_draft_model_the_package_cannot_read_is_the_target_architecture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # an empty cache: nothing local
    draft = ("--speculative-draft-model-path", "org/not-a-local-draft")
    config, context = _assemble(*draft, gpu="B200", model={"attention_arch": "mla"})
    assert config["draft_attention_arch"] is None
    assert "draft_model_config" not in context
    (note,) = [n for n in context["launch_notes"] if "org/not-a-local-draft" in n]
    assert "assumed to be the target's" in note
    assert "--draft-model-config PATH" in note and "--draft-attention-arch" in note


def test_a_draft_checkpoint_of_the_zoo_is_judged_from_its_published_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compat.inputs.zoo import ZOO

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    # A plain Llama checkpoint as the draft (STANDALONE) of an MLA target: MHA, from the
    # package's copy of its published config, and the report says which one.
    source = ZOO["Llama-3.1-8B-Instruct"].source
    draft = ("--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", source)
    config, context = _assemble(*draft, gpu="B200", model={"attention_arch": "mla"})
    assert config["draft_attention_arch"] == "mha"
    draft_config = context["draft_model_config"]
    assert draft_config["source"] == f"{source}'s published config.json (the package's copy)"
    assert draft_config["architecture"] == "LlamaForCausalLM"


def test_the_draft_model_config_flag_gives_the_draft_its_config(tmp_path: Path) -> None:
    # The launch names the draft by a Hugging Face id that is not local; its config.json is
    # given beside the command, as --model-config gives the target's.
    (tmp_path / "config.json").write_text(json.dumps(EAGLE3_DRAFT), encoding="utf-8")
    draft = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "org/draft")
    config, context = _assemble(
        *draft, gpu="B200", model={"attention_arch": "mla"}, draft_model_config=str(tmp_path)
    )
    assert config["draft_attention_arch"] == "mha"
    draft_config = context["draft_model_config"]
    assert draft_config["flag"] == "--draft-model-config"
    assert draft_config["source"] == str(tmp_path / "config.json")
    assert "no MLA fields" in draft_config["why"] and "overridden" not in draft_config
    # A stated architecture wins, and the note says the config disagrees.
    config, context = _assemble(
        *draft,
        gpu="B200",
        model={"attention_arch": "mla", "draft_attention_arch": "mla"},
        draft_model_config=str(tmp_path),
    )
    assert config["draft_attention_arch"] == "mla"
    assert context["draft_model_config"]["overridden"] == "--draft-attention-arch mla"
    assert any("--draft-attention-arch mla is used" in n for n in context["launch_notes"])


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ('["a", "list"]', "object"),
        ('{"architectures": "LlamaForCausalLMEagle3"}', "architectures"),
    ],
)
def test_a_draft_config_that_cannot_be_read_is_invalid_input(
    tmp_path: Path, content: str, words: str
) -> None:
    (tmp_path / "config.json").write_text(content, encoding="utf-8")
    draft = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(tmp_path))
    with pytest.raises(InputError, match=f"--speculative-draft-model-path: {tmp_path}.*{words}"):
        _assemble(*draft, gpu="B200", model={"attention_arch": "mla"})
    with pytest.raises(InputError, match=f"--draft-model-config: {tmp_path}.*{words}"):
        _assemble(gpu="B200", model={"attention_arch": "mla"}, draft_model_config=str(tmp_path))


def test_a_draft_model_config_that_is_missing_or_oversized_is_invalid_input(
    tmp_path: Path,
) -> None:
    from compat.inputs.bounded_json import MAX_BYTES

    missing = tmp_path / "missing"
    with pytest.raises(InputError, match=f"--draft-model-config: {missing}: no such file"):
        _assemble(gpu="B200", model={"attention_arch": "mla"}, draft_model_config=str(missing))
    large = tmp_path / "large.json"
    large.write_bytes(b" " * (MAX_BYTES + 1))
    with pytest.raises(InputError, match=f"--draft-model-config: {large}"):
        _assemble(gpu="B200", model={"attention_arch": "mla"}, draft_model_config=str(large))


@pytest.mark.parametrize(
    ("release", "flag"),
    [
        ("0.5.13", "--mamba-scheduler-strategy"),
        ("0.5.19", "--mamba-scheduler-strategy"),  # a deprecated alias in 0.5.14-0.5.22
        ("0.5.23", "--mamba-radix-cache-strategy"),
    ],
)
def test_the_mamba_cache_strategy_is_read_under_each_spelling(release: str, flag: str) -> None:
    launch = parse_launch_command([*LAUNCH, flag, "extra_buffer"], release)
    assert launch.values == {"mamba_scheduler_strategy": "extra_buffer"}


def test_the_new_spelling_is_unknown_before_0_5_14() -> None:
    launch = parse_launch_command([*LAUNCH, "--mamba-radix-cache-strategy", "no_buffer"], "0.5.13")
    assert launch.problems and "--mamba-radix-cache-strategy" in launch.problems[0]


def test_a_launch_without_a_draft_model_reads_none(tmp_path: Path) -> None:
    # Nothing is added to the report of a launch that names no draft model.
    _, context = _assemble(gpu="B200", model={"attention_arch": "mla"})
    assert "draft_model_config" not in context and "launch_notes" not in context
    with pytest.raises(InputError, match="--draft-model-config: an empty path"):
        _assemble(gpu="B200", model={"attention_arch": "mla"}, draft_model_config="")


# GLM-4.7-Flash: MLA by name; its MTP draft is the target's own checkpoint, renamed.
_GLM_FLASH = "Glm4MoeLiteForCausalLM"


@pytest.mark.parametrize("release", ["0.5.10", "0.5.13"])
@pytest.mark.parametrize("draft_path", [None, "org/model"])
def test_a_draft_of_the_target_checkpoint_runs_as_its_renamed_architecture(
    release: str, draft_path: str | None
) -> None:
    # No draft path, or the target's own: SGLang's draft ModelConfig renames the
    # architecture and decides MLA or MHA by the new name, as the release's data says.
    from compat.engine.models.draft_renames import draft_rename

    row = draft_rename(release, _GLM_FLASH)
    assert row is not None
    path = () if draft_path is None else ("--speculative-draft-model-path", draft_path)
    config, context = _assemble(
        *("--speculative-algorithm", "NEXTN", *path),
        gpu="B200",
        sglang_version=release,
        model={"model_architecture": _GLM_FLASH},
    )
    assert config["attention_arch"] == "mla"
    assert config["draft_attention_arch"] == row.with_mla_fields.lower()
    draft = context["draft_model_config"]
    assert draft["architecture"] == row.draft
    assert f"configs/model_config.py:{row.line}" in draft["source"]
    assert f"configs/model_config.py:{row.with_mla_fields_line} " in draft["why"]


def test_the_renamed_draft_differs_from_its_target_where_the_release_says() -> None:
    # 0.5.10 renames GLM-4.7-Flash's draft to Glm4MoeForCausalLMNextN, an MHA name; 0.5.13
    # to a name of its own, which it runs as MLA.
    found = {}
    for release in ("0.5.10", "0.5.13"):
        config, _ = _assemble(
            "--speculative-algorithm",
            "NEXTN",
            gpu="B200",
            sglang_version=release,
            model={"model_architecture": _GLM_FLASH},
        )
        found[release] = config["draft_attention_arch"]
    assert found == {"0.5.10": "mha", "0.5.13": "mla"}


def test_a_stated_or_read_draft_architecture_wins_over_the_rename(tmp_path: Path) -> None:
    flags = ("--speculative-algorithm", "NEXTN")
    stated = {"model_architecture": _GLM_FLASH, "draft_attention_arch": "mla"}
    config, context = _assemble(*flags, gpu="B200", sglang_version="0.5.10", model=stated)
    assert config["draft_attention_arch"] == "mla"
    assert context["draft_model_config"]["overridden"] == "--draft-attention-arch mla"
    assert any("runs the draft of Glm4MoeLiteForCausalLM" in n for n in context["launch_notes"])
    # A draft config of its own is read, not renamed here.
    (tmp_path / "config.json").write_text(json.dumps(EAGLE3_DRAFT), encoding="utf-8")
    config, context = _assemble(
        *flags,
        gpu="B200",
        sglang_version="0.5.13",
        model={"model_architecture": _GLM_FLASH},
        draft_model_config=str(tmp_path),
    )
    assert config["draft_attention_arch"] == "mha"
    assert context["draft_model_config"]["flag"] == "--draft-model-config"


def test_no_speculation_or_another_draft_path_is_not_renamed(tmp_path: Path) -> None:
    model = {"model_architecture": _GLM_FLASH}
    config, context = _assemble(gpu="B200", sglang_version="0.5.10", model=model)
    assert config["draft_attention_arch"] is None and "draft_model_config" not in context
    (tmp_path / "config.json").write_text(json.dumps(EAGLE3_DRAFT), encoding="utf-8")
    other = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(tmp_path))
    _, context = _assemble(*other, gpu="B200", sglang_version="0.5.10", model=model)
    assert context["draft_model_config"]["architecture"] == "LlamaForCausalLMEagle3"


def test_flags_without_a_command_say_nothing_of_the_draft_path() -> None:
    # `enforce()` hands over flags, not the launch's paths: the draft may be a checkpoint of
    # its own, so the rename is not assumed.
    request = LaunchRequest(
        flags={"speculative_algorithm": "NEXTN"},
        model={"model_architecture": _GLM_FLASH},
        gpu="B200",
        sglang_version="0.5.10",
        detect=False,
    )
    assembled = assemble(request)
    assert assembled.config.speculative_algorithm == "NEXTN"
    assert assembled.config.draft_attention_arch is None
    assert "draft_model_config" not in assembled.context
