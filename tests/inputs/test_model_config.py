"""Model facts derived from Hugging Face `config.json` files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import MODELS

from compat.engine.models.lookup import release_models
from compat.inputs.config import AttentionConfig
from compat.inputs.config_file import ModelConfigError
from compat.inputs.model_config import ModelFacts, load_model_facts
from compat.vocab.terms import Arch

# name: (attention_arch, sparse, sliding_window, multimodal, encoder_decoder, dual_chunk)
EXPECTED = {
    "qwen3-235b-a22b": (Arch.MHA, False, False, False, False, False),
    "deepseek-r1": (Arch.MLA, False, False, False, False, False),
    "deepseek-v3.2": (Arch.MLA, True, False, False, False, False),
    "gemma-3-27b-it": (Arch.MHA, False, True, True, False, False),
    "qwen2.5-vl-7b-instruct": (Arch.MHA, False, False, True, False, False),
    "llama-3.1-8b-instruct": (Arch.MHA, False, False, False, False, False),
}

# The config key each true fact of a fixture must name in its evidence.
EVIDENCE_KEYS = {
    "deepseek-r1": {"attention_arch": "kv_lora_rank"},
    "deepseek-v3.2": {"attention_arch": "q_lora_rank", "sparse_attention": "index_topk"},
    "gemma-3-27b-it": {
        "sliding_window": "text_config.sliding_window",
        "multimodal": "vision_config",
    },
    "qwen2.5-vl-7b-instruct": {
        "sliding_window": "use_sliding_window",
        "multimodal": "vision_config",
    },
}


def test_every_fixture_is_covered() -> None:
    assert {path.name for path in MODELS.iterdir() if path.is_dir()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_derived_facts(name: str) -> None:
    facts = load_model_facts(MODELS / name)
    arch, sparse, sliding, multimodal, encoder_decoder, dual_chunk = EXPECTED[name]
    assert facts.attention_arch is arch
    assert facts.sparse_attention is sparse
    assert facts.sliding_window is sliding
    assert facts.multimodal is multimodal
    assert facts.encoder_decoder is encoder_decoder
    assert facts.dual_chunk_attention is dual_chunk
    assert facts.path == MODELS / name / "config.json"
    assert facts.architectures


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_file_path_and_directory_agree(name: str) -> None:
    assert load_model_facts(MODELS / name) == load_model_facts(MODELS / name / "config.json")
    assert (
        load_model_facts(str(MODELS / name)).config_fields()
        == load_model_facts(MODELS / name).config_fields()
    )


@pytest.mark.parametrize("name", sorted(EVIDENCE_KEYS))
def test_evidence_names_the_key(name: str) -> None:
    facts = load_model_facts(MODELS / name)
    for field_name, key in EVIDENCE_KEYS[name].items():
        reasons = facts.why(field_name)
        assert any(key in reason for reason in reasons), (field_name, reasons)


def test_every_field_has_a_reason_for_arch() -> None:
    for name in EXPECTED:
        assert load_model_facts(MODELS / name).why("attention_arch")


def test_config_fields_build_an_attention_config() -> None:
    facts = load_model_facts(MODELS / "gemma-3-27b-it")
    fields = facts.config_fields()
    assert fields == {
        "model_architecture": "Gemma3ForConditionalGeneration",
        "kv_heads": 16,
        "q_heads": 32,
        "model_type": "gemma3",
        "attention_arch": "mha",
        "sliding_window": True,
        "multimodal": True,
        "encoder_decoder": False,
        "dual_chunk_attention": False,
        "sparse_attention": False,
        "qsa_profile": False,
    }
    config = AttentionConfig(**fields)  # type: ignore[arg-type]
    assert config.sliding_window and config.multimodal


def test_from_model_config_and_explicit_override() -> None:
    derived = AttentionConfig.from_model_config(MODELS / "deepseek-r1")
    assert derived.attention_arch == "mla"
    overridden = AttentionConfig.from_model_config(
        MODELS / "deepseek-r1", attention_arch="mha", attention_backend="fa3"
    )
    assert overridden.attention_arch == "mha"
    assert overridden.attention_backend == "fa3"
    sparse = AttentionConfig.from_model_config(MODELS / "deepseek-v3.2", sparse_attention=False)
    assert sparse.sparse_attention is False


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    return path


# A Qwen4-Exp config's compressed indexer (the keys SGLang's `parse_qsa_profile` reads).
_INDEXER = {"indexer_n_heads": 32, "indexer_kv_heads": 1, "indexer_head_dim": 128,
            "indexer_budget": 2048, "indexer_compress_ratio": 4}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "profile", "named"),
    [
        ({"text_config": _INDEXER}, True, "text_config.indexer_n_heads=32"),
        (_INDEXER, True, "indexer_n_heads=32"),
        # SGLang reads the text config alone where there is one, and a null key is none.
        ({**_INDEXER, "text_config": {}}, False, None),
        ({"text_config": {**_INDEXER, "indexer_n_heads": None}}, False, None),
        ({"language_config": _INDEXER}, False, None),
    ],
)
def test_a_qsa_profile_is_read_where_sglang_reads_it(
    tmp_path: Path, config: dict[str, object], profile: bool, named: str | None
) -> None:
    path = _write(tmp_path, json.dumps({"architectures": ["Qwen4ExpForConditionalGeneration"],
                                        **config}))  # fmt: skip
    facts = load_model_facts(path)
    assert facts.qsa_profile is profile
    assert facts.config_fields()["qsa_profile"] is profile
    said = [reason.split(" in ")[0] for reason in facts.why("qsa_profile")]
    assert said == ([named] if named else [])
    assert AttentionConfig.from_model_config(path).qsa_profile is profile


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "config.json"
    with pytest.raises(ModelConfigError, match="no such file") as info:
        load_model_facts(missing)
    assert str(missing) in str(info.value)


def test_directory_without_config(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match=r"has no config\.json") as info:
        load_model_facts(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_malformed_json(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"architectures": [LlamaForCausalLM]}')
    with pytest.raises(ModelConfigError, match=r"not valid JSON \(line 1, column") as info:
        load_model_facts(path)
    assert str(path) in str(info.value)


def test_not_an_object(tmp_path: Path) -> None:
    path = _write(tmp_path, '["LlamaForCausalLM"]')
    with pytest.raises(ModelConfigError, match=r"expected a JSON object .* got an array"):
        load_model_facts(path)


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"architectures": "LlamaForCausalLM"}, "'architectures'"),
        ({"model_type": 3}, "'model_type'"),
        ({"kv_lora_rank": "512"}, "'kv_lora_rank'"),
        ({"sliding_window": "1024"}, "'sliding_window'"),
        ({"text_config": {"sliding_window": True}}, "'text_config.sliding_window'"),
        ({"text_config": [1]}, "'text_config'"),
        ({"use_sliding_window": "no", "sliding_window": 4}, "'use_sliding_window'"),
        ({"layer_types": "sliding_attention"}, "'layer_types'"),
        ({"is_encoder_decoder": "true"}, "'is_encoder_decoder'"),
        ({"dual_chunk_attention_config": 1}, "'dual_chunk_attention_config'"),
    ],
)
def test_wrong_field_types(tmp_path: Path, config: dict[str, object], field: str) -> None:
    path = _write(tmp_path, json.dumps(config))
    with pytest.raises(ModelConfigError) as info:
        load_model_facts(path)
    message = str(info.value)
    assert str(path) in message and field in message and "must be" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"layer_types": ["sliding_attention", "full_attention"]}, {"sliding_window": True}),
        ({"sliding_window": 4096}, {"sliding_window": True}),
        ({"sliding_window": 4096, "use_sliding_window": False}, {"sliding_window": False}),
        ({"sliding_window": None}, {"sliding_window": False}),
        ({"is_encoder_decoder": True}, {"encoder_decoder": True}),
        ({"dual_chunk_attention_config": {"chunk_size": 262144}}, {"dual_chunk_attention": True}),
        # SGLang decides MLA by architecture (or the MLA fields), never by model type.
        ({"model_type": "deepseek_v2"}, {"attention_arch": "mha", "model_type": "deepseek_v2"}),
        ({"quantization_config": {"quant_method": "mxfp4"}}, {"checkpoint_quantization": "mxfp4"}),
        ({"auto_map": {"AutoConfig": "x.XConfig"}}, {"remote_code": True}),
        (
            {"num_key_value_heads": 32, "text_config": {"num_key_value_heads": 8}},
            {"kv_heads": 8},
        ),
        ({"language_config": {"kv_lora_rank": 512}}, {"attention_arch": "mla"}),
        ({"architectures": ["T5ForConditionalGeneration"]}, {"multimodal": False}),
        ({"audio_config": {}}, {"multimodal": True}),
    ],
)
def test_single_keys(
    tmp_path: Path, config: dict[str, object], expected: dict[str, object]
) -> None:
    facts: ModelFacts = load_model_facts(_write(tmp_path, json.dumps(config)))
    fields = facts.config_fields()
    for key, value in expected.items():
        assert fields[key] == value, (key, facts.evidence)


def test_reasons_join_every_reason_of_a_field() -> None:
    reasons = load_model_facts(MODELS / "deepseek-r1", release_models("0.5.23")).reasons()
    assert list(reasons) == [
        "attention_arch", "kv_heads", "q_heads", "qk_nope_head_dim", "qk_rope_head_dim",
        "model_architecture", "model_type",
    ]  # fmt: skip
    assert reasons["kv_heads"] == "num_key_value_heads=128 in config.json"
    assert "kv_lora_rank=512" in reasons["attention_arch"]
    assert "SGLang 0.5.23 runs DeepseekV3ForCausalLM as an MLA model" in reasons["attention_arch"]


@pytest.mark.parametrize(
    ("release", "arch", "encoder_decoder"),
    [("0.5.7", "mha", False), ("0.5.23", "mla", True)],
)
def test_the_release_decides_by_architecture(
    tmp_path: Path, release: str, arch: str, encoder_decoder: bool
) -> None:
    """MLA and encoder-decoder by name, as the release's own ModelConfig lists them: 0.5.7
    knows neither Glm5Next nor Whisper as such; 0.5.23 runs Glm5Next as MLA with no MLA
    field in the config, and Whisper as encoder-decoder without `is_encoder_decoder`."""
    models = release_models(release)
    glm = load_model_facts(
        _write(tmp_path, json.dumps({"architectures": ["Glm5NextForConditionalGeneration"]})),
        models,
    )
    assert glm.attention_arch.value == arch
    whisper = tmp_path / "whisper"
    whisper.mkdir()
    (whisper / "config.json").write_text(
        json.dumps({"architectures": ["WhisperForConditionalGeneration"]})
    )
    assert load_model_facts(whisper, models).encoder_decoder is encoder_decoder
