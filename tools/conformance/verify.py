"""Run a release's own verify path: the target's forward pass in `TARGET_VERIFY` mode.

After start-up and the backend build, speculative decoding verifies its draft tokens with a
forward pass of the target in `TARGET_VERIFY` mode. What runs here is the wheel's own code:
the backends' common `AttentionBackend.forward` (which picks the mode's method), the
torch_native backend's `forward_extend` and `_run_sdpa_forward_extend`, and the hybrid
backend's `_select_backend` (which of a hybrid's two backends runs the verify); its
`ForwardMode` and `AttentionType` are the wheel's own enums. Stand-ins: tensors, the KV and
request pools and the layer (`Anything`, `_layer`), and the batch, whose extend fields are
None as `ForwardBatch.init_new` leaves them for this mode (read from the wheel by
`tools/verify_gaps.py`, not run: it needs a scheduler's batch).

Flashinfer's sliding-window path (`window_frames`) runs the wheel's own prefill indices
updater, `__init__` (which picks the sliding-window method) and `update`, called as the
backend's branch for the mode calls it; only the updater's class and its dispatch enum are
compiled from the module (its imports need flashinfer's kernels), over stand-in tensors
that add and subtract as torch's do (`StandIn`: `None` is refused, as torch refuses it).

The Triton backend's draft-extend capture (`draft_window_frames`) runs the wheel's own
`TritonAttnBackend`: its capture metadata for a draft-extend batch, on a backend whose model
runner has a window, then `forward_extend` of a window layer over that metadata, into a
stand-in for the extend kernel that refuses a None pointer where its signature (the wheel's
own, `triton_ops/extend_attention.py`) takes the KV indices, as Triton's compiler does.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
import importlib
import inspect
import traceback
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conformance import stubs
from conformance.build import BUILD_PROFILES, BuildRuntime
from conformance.wheel import source_root

ATTENTION = "sglang.srt.layers.attention"
FLASHINFER_FILE = "sglang/srt/layers/attention/flashinfer_backend.py"
UPDATER = "FlashInferIndicesUpdaterPrefill"
TORCH_NATIVE = f"{ATTENTION}.torch_native_backend"
HYBRID = f"{ATTENTION}.hybrid_attn_backend"
TRITON_FILE = "sglang/srt/layers/attention/triton_backend.py"
EXTEND_KERNEL = "extend_attention_fwd"
TRITON_CLASSES = ["TritonAttnBackend", "ForwardMetadata"]
TRITON_HELPERS = ["update_sliding_window_buffer", "update_sliding_window_buffer_cuda_graph"]
"""The module's functions that fill the window rail (the wheel's own, where it has them)."""
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
            "torch.nn.functional", scaled_dot_product_attention=Anything()
        )
        torch.empty_like = lambda *args, **kwargs: Anything()
        if not hasattr(torch, "Tensor"):  # the hybrid's annotations are evaluated (0.5.7)
            torch.Tensor = Anything
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
        backend.token_to_kv_pool = backend.req_to_token_pool = Anything()
        backend.swa_out_cache_loc = None
        batch = _Batch()
        batch.forward_mode = self.forward_mode.TARGET_VERIFY
        batch.extend_prefix_lens = prefix_lens
        tensor = Anything()
        try:
            backend.forward(tensor, tensor, tensor, _layer(), batch, save_kv_cache=False)
        except Exception as exc:  # what SGLang's warm-up would raise
            return type(exc).__name__, frames_in(self.root, exc)
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

    def window_frames(self, prefix_lens: object = None) -> tuple[str, list[Frame]]:
        """Flashinfer's prefill updater, built by its own `__init__` for a model runner with
        a sliding window of 1,023 tokens, then `update` called with `prefix_lens` as the
        backend's branch for `TARGET_VERIFY` calls it: the exception's type and the frames
        in the wheel ("" and none: it reached the kernels' planning, left out)."""
        file = self.root / FLASHINFER_FILE
        namespace = _stand_ins(file, [UPDATER, "WrapperDispatch"])
        stubs.exec_definitions(file, [UPDATER, "WrapperDispatch"], namespace)
        dispatch = namespace["WrapperDispatch"]
        backend = StandIn()
        backend.dispatch_reason, backend.num_wrappers = dispatch.SLIDING_WINDOW, 2
        runner = StandIn()
        runner.sliding_window_size = 1023
        try:
            updater = namespace[UPDATER](runner, backend)
            updater.call_begin_forward = lambda *args, **kwargs: None
            tensor = StandIn()
            given = {"prefix_lens": prefix_lens, "prefill_wrappers": [tensor] * 2,
                     "use_ragged": False, "encoder_lens": None, "spec_info": tensor}  # fmt: skip
            # The keyword-only arguments later branches add (0.5.23's `plan`), as stand-ins.
            added = {
                name: StandIn()
                for name, parameter in inspect.signature(updater.update).parameters.items()
                if parameter.kind is parameter.KEYWORD_ONLY
                and parameter.default is parameter.empty
                and name not in given
            }
            updater.update(tensor, tensor, tensor, 64, **given, **added)
        except Exception as exc:  # what the target's capture would raise
            return type(exc).__name__, frames_in(self.root, exc)
        return "", []

    def draft_window_frames(
        self, mode: str = "DRAFT_EXTEND_V2", window: int = 4095
    ) -> tuple[str, list[Frame]]:
        """The Triton backend's capture metadata for a batch in `mode` (a draft-extend mode),
        built by the wheel's own method on a backend whose runner has a window of `window`
        tokens, then `forward_extend` of a layer with that window: the exception's type and
        the frames in the wheel ("" and none: the kernel got KV indices)."""
        file = self.root / TRITON_FILE
        namespace = _stand_ins(file, TRITON_CLASSES + TRITON_HELPERS)
        namespace["dataclass"], namespace["field"] = dataclasses.dataclass, dataclasses.field
        namespace["ForwardMode"] = self.forward_mode
        namespace["AttentionType"] = self._wheel_enum(RADIX_FILE, "AttentionType", enum.Enum)
        stubs.exec_definitions(file, TRITON_CLASSES, namespace, optional=TRITON_HELPERS)
        backend = _open(namespace["TritonAttnBackend"])
        backend.sliding_window_size = window
        backend.speculative_num_steps, backend.num_draft_tokens, backend.page_size = 3, 4, 1
        # The switches of other paths, off as SGLang's defaults leave them: deterministic
        # inference, decode context parallelism, a diffusion model's attention.
        backend.enable_deterministic, backend.dcp_size, backend.dllm_attention = False, 1, None
        backend.extend_attention_fwd = _kernel(self.root, file)
        batch = StandIn()
        batch.forward_mode = getattr(self.forward_mode, mode)
        batch.batch_size, batch.encoder_lens = 2, None
        batch.mha_one_shot = False  # MHA's one-shot prefill path, off for a draft extend
        tensor = StandIn()
        layer = StandIn()
        layer.sliding_window_size, layer.k_scale, layer.v_scale = window, None, None
        layer.is_cross_attention, layer.attn_type, layer.logit_cap = False, None, 0.0
        try:
            if "init_forward_metadata_capture_cuda_graph" in vars(namespace["TritonAttnBackend"]):
                # up to 0.5.12; then the capture's metadata is built out of the graph
                backend.init_forward_metadata_capture_cuda_graph(
                    2, 8, tensor, tensor, None, batch.forward_mode, tensor
                )
            else:
                backend.init_forward_metadata_out_graph(batch, in_capture=True)
            backend.forward_extend(tensor, tensor, tensor, layer, batch, save_kv_cache=False)
        except Exception as exc:  # what the draft's graph capture would raise
            return type(exc).__name__, frames_in(self.root, exc)
        return "", []


def frames_in(root: Path, exc: BaseException) -> list[Frame]:
    """The frames of `exc`'s traceback in the wheel under `root`, outermost first, each
    (file inside the wheel, function, line)."""
    prefix = str(root) + "/"
    return [
        (frame.filename.removeprefix(prefix), frame.name, frame.lineno or 0)
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename.startswith(prefix)
    ]


class Anything:
    """A tensor, a pool or a kernel: every attribute and call gives another."""

    shape = (1, 8, 128)

    def __getattr__(self, name: str) -> Anything:
        return self

    def __call__(self, *args: object, **kwargs: object) -> Anything:
        return self


class _Batch(Anything):
    """A `ForwardBatch` as `init_new` builds it for `TARGET_VERIFY`: no extend fields."""

    extend_seq_lens = None
    encoder_lens = None


class StandIn:
    """A tensor, a runner or a kernel of the updater's: every attribute, call, item and
    arithmetic gives another; an operand that is None is refused (TypeError), as torch's
    tensors refuse it. Its subclasses stand in for the module's other names
    (`_stand_ins`): types, so that `isinstance` and annotations read them."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __class_getitem__(cls, item: object) -> type[StandIn]:
        return cls

    def __getattr__(self, name: str) -> StandIn:
        return StandIn()

    def __call__(self, *args: object, **kwargs: object) -> StandIn:
        return StandIn()

    def __getitem__(self, item: object) -> StandIn:
        return StandIn()

    def __setitem__(self, item: object, value: object) -> None:
        pass

    def __int__(self) -> int:
        return 1

    def __bool__(self) -> bool:
        return True

    def _arithmetic(self, other: object) -> StandIn:
        return NotImplemented if other is None else StandIn()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arithmetic
    __floordiv__ = __rfloordiv__ = __truediv__ = __mod__ = _arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = _arithmetic


def _open(klass: type) -> Any:
    """An instance of the wheel's `klass`, not constructed: its attributes are those set on
    it, else stand-ins (a backend's buffers, pools and flags)."""
    opened = type(klass.__name__, (klass,), {"__getattr__": lambda self, name: StandIn()})
    return object.__new__(opened)


def _kernel(root: Path, backend_file: Path) -> Any:
    """A stand-in for the extend kernel with the wheel's own parameters (its definition,
    found through the backend module's import of it): it refuses KV indices that are None
    (Triton cannot compile a None pointer's arithmetic)."""
    module = next(
        node.module
        for node in ast.walk(ast.parse(backend_file.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module
        and any(alias.name == EXTEND_KERNEL for alias in node.names)
    )
    file = root / (module.replace(".", "/") + ".py")
    definition = next(
        node
        for node in ast.parse(file.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name == EXTEND_KERNEL
    )
    names = [argument.arg for argument in definition.args.args]

    def kernel(*args: object, **kwargs: object) -> StandIn:
        given = dict(zip(names, args, strict=False)) | kwargs
        if given.get("kv_indices", StandIn()) is None:
            raise TypeError("extend_attention_fwd: kv_indices is None")
        return StandIn()

    return kernel


def _stand_ins(file: Path, names: list[str]) -> dict[str, Any]:
    """A namespace for `names`' definitions of `file`: each other name they read from the
    module (its imports, its other definitions) as a `StandIn` type; `torch` as a module of
    functions that give `StandIn`s."""
    wanted = set(names)
    tree = ast.parse(file.read_text())
    read = {
        node.id
        for definition in tree.body
        if isinstance(definition, (ast.ClassDef, ast.FunctionDef)) and definition.name in wanted
        for node in ast.walk(definition)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    namespace: dict[str, Any] = {
        name: type(name, (StandIn,), {}) for name in read - wanted - set(dir(builtins))
    }
    namespace["torch"] = StandIn()
    # The enum the updater compares its backend's reason to: the wheel's own, with its base.
    namespace["Enum"], namespace["IntEnum"], namespace["auto"] = enum.Enum, enum.IntEnum, enum.auto
    return namespace


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
