"""Run a release's own verify path: the target's forward pass in `TARGET_VERIFY` mode.

After start-up and the backend build, speculative decoding verifies its draft tokens with a
forward pass of the target in `TARGET_VERIFY` mode. What runs here is the wheel's own code:
the backends' common `AttentionBackend.forward` (which picks the mode's method), the
torch_native backend's `forward_extend` and `_run_sdpa_forward_extend`, and the hybrid
backend's `_select_backend` (which of a hybrid's two backends runs the verify); its
`ForwardMode` and `AttentionType` are the wheel's own enums. Stand-ins: tensors, the KV and
request pools and the layer (`_Anything`, `_layer`), and the batch, whose extend fields are
None as `ForwardBatch.init_new` leaves them for this mode (read from the wheel by
`tools/verify_gaps.py`, not run: it needs a scheduler's batch).
"""

from __future__ import annotations

import enum
import importlib
import traceback
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from conformance import stubs
from conformance.build import BUILD_PROFILES, BuildRuntime
from conformance.wheel import source_root

ATTENTION = "sglang.srt.layers.attention"
TORCH_NATIVE = f"{ATTENTION}.torch_native_backend"
HYBRID = f"{ATTENTION}.hybrid_attn_backend"
FORWARD_BATCH_FILE = "sglang/srt/model_executor/forward_batch_info.py"
RADIX_FILE = "sglang/srt/layers/radix_attention.py"

Frame = tuple[str, str, int]
"""(file inside the wheel, function, line) of one frame of a traceback."""


class VerifyRuntime(BuildRuntime):
    """The release's attention backends' Python, loaded over the fake torch."""

    real_modules = (
        *BuildRuntime.real_modules,
        f"{ATTENTION}.base_attn_backend",
        TORCH_NATIVE,
        HYBRID,
        # `@debug_kernel_api` wraps the common forward (0.5.10+): the wheel's own decorator,
        # which returns the function itself while kernel logging is off.
        "sglang.kernel_api_logging",
        "sglang.kernels.kernel_api_logging",
    )

    def _load(self) -> None:
        super()._load()
        torch = importlib.import_module("torch")
        self._finder.fixed["torch.nn.functional"] = stubs.module_with(
            "torch.nn.functional", scaled_dot_product_attention=_Anything()
        )
        torch.empty_like = lambda *args, **kwargs: _Anything()
        if not hasattr(torch, "Tensor"):  # the hybrid's annotations are evaluated (0.5.7)
            torch.Tensor = _Anything
        self.forward_mode = self._wheel_enum(FORWARD_BATCH_FILE, "ForwardMode", enum.IntEnum)
        self.torch_native = importlib.import_module(TORCH_NATIVE)
        self.torch_native.AttentionType = self._wheel_enum(RADIX_FILE, "AttentionType", enum.Enum)
        self.hybrid = importlib.import_module(HYBRID)

    def _wheel_enum(self, file: str, name: str, base: type[enum.Enum]) -> Any:
        namespace = {base.__name__: base, "auto": enum.auto}
        return stubs.exec_definitions(self.root / file, [name], namespace)[name]

    def verify_frames(self, prefix_lens: object = None) -> tuple[str, list[Frame]]:
        """`AttentionBackend.forward` of a torch_native backend on a `TARGET_VERIFY` batch
        whose `extend_prefix_lens` is `prefix_lens`: the exception's type and the frames in
        the wheel, outermost first ("" and none: it returned)."""
        backend = object.__new__(self.torch_native.TorchNativeAttnBackend)
        backend.token_to_kv_pool = backend.req_to_token_pool = _Anything()
        backend.swa_out_cache_loc = None
        batch = _Batch()
        batch.forward_mode = self.forward_mode.TARGET_VERIFY
        batch.extend_prefix_lens = prefix_lens
        tensor = _Anything()
        try:
            backend.forward(tensor, tensor, tensor, _layer(), batch, save_kv_cache=False)
        except Exception as exc:  # what SGLang's warm-up would raise
            return type(exc).__name__, self._frames(exc)
        return "", []

    def verify_backend(self, mode: str) -> str:
        """Which of a hybrid backend's two runs a `TARGET_VERIFY` batch under
        `--speculative-attention-mode mode`: "prefill" or "decode"."""
        hybrid = object.__new__(self.hybrid.HybridAttnBackend)
        hybrid.prefill_backend, hybrid.decode_backend = "prefill", "decode"
        # Up to 0.5.15 it reads the runner's server args; later, flags set at construction.
        server_args = types.SimpleNamespace(speculative_attention_mode=mode)
        hybrid.model_runner = types.SimpleNamespace(server_args=server_args)
        hybrid.spec_attn_is_decode = mode == "decode"
        hybrid.spec_attn_is_prefill = mode == "prefill"
        chosen: str = hybrid._select_backend(self.forward_mode.TARGET_VERIFY)
        return chosen

    def _frames(self, exc: BaseException) -> list[Frame]:
        root = str(self.root) + "/"
        return [
            (frame.filename.removeprefix(root), frame.name, frame.lineno or 0)
            for frame in traceback.extract_tb(exc.__traceback__)
            if frame.filename.startswith(root)
        ]


class _Anything:
    """A tensor, a pool or a kernel: every attribute and call gives another."""

    shape = (1, 8, 128)

    def __getattr__(self, name: str) -> _Anything:
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Anything:
        return self


class _Batch(_Anything):
    """A `ForwardBatch` as `init_new` builds it for `TARGET_VERIFY`: no extend fields."""

    extend_seq_lens = None
    encoder_lens = None


def _layer() -> types.SimpleNamespace:
    """A decoder layer of an MHA model: 8 heads of 128, no sliding window."""
    return types.SimpleNamespace(
        qk_head_dim=128, v_head_dim=128, tp_q_head_num=8, tp_k_head_num=8, layer_id=0,
        is_cross_attention=False, attn_type=None, sliding_window_size=None, scaling=1.0,
        logit_cap=0.0,
    )  # fmt: skip


@contextmanager
def verify_runtime(version: str) -> Iterator[VerifyRuntime]:
    """The release's verify path on an SM 9.0 GPU (the path reads no GPU)."""
    with VerifyRuntime(source_root(version), BUILD_PROFILES["sm90"]) as runtime:
        yield runtime
