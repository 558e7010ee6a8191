"""The models of the grid, as the Hugging Face `config.json` fields SGLang's start-up reads.

Values are those of the published configs, trimmed to what `ModelConfig` derives shapes,
context length and the MHA/MLA architecture from. No quantization_config: SGLang's
quantization registry is not loaded (the attention start-up rules do not read it).
"""

from __future__ import annotations

from typing import Any

_DEEPSEEK_YARN = {
    "type": "yarn",
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32,
    "beta_slow": 1,
}

MODELS: dict[str, dict[str, Any]] = {
    "Llama-3.1-8B": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 32,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
        "torch_dtype": "bfloat16",
    },
    "Mistral-7B-v0.3": {
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 32,
        "vocab_size": 32768,
        "max_position_embeddings": 32768,
        "sliding_window": None,
        "torch_dtype": "bfloat16",
    },
    "Qwen3-30B-A3B": {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_hidden_layers": 48,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
    },
    "DeepSeek-V3": {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "num_hidden_layers": 61,
        "vocab_size": 129280,
        "max_position_embeddings": 163840,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "rope_scaling": _DEEPSEEK_YARN,
        "torch_dtype": "bfloat16",
    },
    "DeepSeek-V2": {
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "hidden_size": 5120,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "num_hidden_layers": 60,
        "vocab_size": 102400,
        "max_position_embeddings": 163840,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "rope_scaling": _DEEPSEEK_YARN,
        "torch_dtype": "bfloat16",
    },
}
