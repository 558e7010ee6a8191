"""The sub-backend flags of a launch: the kernels chosen inside a backend.

DeepSeek sparse attention (`--dsa-prefill-backend`, `--dsa-decode-backend`; `--nsa-*` up to
0.5.12), the linear-attention layers of hybrid models (`--linear-attn-backend` and its
per-phase forms) and the vision encoder (`--mm-attention-backend`) each choose their own
kernels. A launch holds them as given; the names each release accepts are its parser's
(`compat.engine.parser.sub_choices`).
"""

from __future__ import annotations

import msgspec


class SubBackends(msgspec.Struct, frozen=True):
    """The sub-backend flags as given (None: unset, SGLang chooses), named as ServerArgs
    names them from 0.5.13."""

    dsa_prefill_backend: str | None = None
    dsa_decode_backend: str | None = None
    linear_attn_backend: str | None = None
    linear_attn_prefill_backend: str | None = None
    linear_attn_decode_backend: str | None = None
    mm_attention_backend: str | None = None


NO_SUB_BACKENDS = SubBackends()
"""A launch that sets none of them."""
