"""The heads and head dims a model's config.json gives: SGLang divides the KV heads among the
ranks, and a kernel's ranges read the attention heads and an MLA model's head dims."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compat.inputs.model_config import ConfigReader

KV_HEADS_KEY = "num_key_value_heads"
MAX_KV_HEADS = 1 << 20
"""More heads, or a longer head, than this is no model's (the largest have a few hundred)."""
HEAD_SHAPE_KEYS = {
    "q_heads": "num_attention_heads",
    "qk_nope_head_dim": "qk_nope_head_dim",
    "qk_rope_head_dim": "qk_rope_head_dim",
}
"""AttentionConfig field -> the config key of the shapes a kernel's ranges read."""


def read_kv_heads(reader: ConfigReader, evidence: list[tuple[str, str]]) -> int | None:
    """`num_key_value_heads`, the text config's first."""
    kv_heads = None
    for scope, heads in reversed(reader.present(KV_HEADS_KEY)):
        # Refused as the other fields are: a head count SGLang would divide by is whole
        # and positive (`"8"`, 8.0 and 0 were dropped, and the model judged without it).
        if type(heads) is not int or not 0 < heads <= MAX_KV_HEADS:
            reader.bad(scope.name(KV_HEADS_KEY), heads, f"an integer from 1 to {MAX_KV_HEADS}")
        if kv_heads is None:
            kv_heads = heads
            evidence.append(("kv_heads", reader.where(scope, KV_HEADS_KEY, heads)))
    return kv_heads


def read_head_shapes(
    reader: ConfigReader, evidence: list[tuple[str, str]]
) -> tuple[tuple[str, int], ...]:
    """The heads and head dims the config gives (the text config's first), each a whole
    number from 1 up; another value is left out, not refused: only a kernel's prediction
    reads them, and it predicts nothing without them."""
    found: list[tuple[str, int]] = []
    for field_name, key in HEAD_SHAPE_KEYS.items():
        for scope, value in reversed(reader.present(key)):
            if type(value) is int and 0 < value <= MAX_KV_HEADS:
                found.append((field_name, value))
                evidence.append((field_name, reader.where(scope, key, value)))
                break
    return tuple(found)
