"""Run a release's own MLA key concatenation on ROCm with aiter, over stand-in tensors.

The DeepSeek MLA attention's MHA path concatenates the keys' two halves
(`_concat_and_cast_mha_k`, from 0.5.18 `_concat_and_cast_mha_k_rocm`); what runs here is the
wheel's own method (compiled alone from its class, at its own lines), its own Triton launcher
and its own kernels' bodies (`concat_and_cast_mha_k_kernel`, and from 0.5.18 the padding
kernel), run once as Python. Stand-ins: the tensors (shapes, strides, arithmetic), the
machine (`_is_hip`), and Triton's language (`FakeTriton`): its `tl.arange` refuses a range
that is not a power of two, as Triton's compiler does ("arange's range must be a power of
2"); `triton.next_power_of_2` is Triton's rule.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shape_gaps import KERNEL, LAUNCHER, PAD_KERNEL, aiter_branch, kernel_ranges
from verify_gaps import functions_of

from conformance import stubs
from conformance.verify import Anything, Frame, frames_in
from conformance.wheel import source_root


class CompilationError(Exception):
    """What Triton's compiler raises for a kernel it cannot compile."""


class Tensor:
    """A tensor of a shape: strides, dtypes, slicing and arithmetic give tensors."""

    def __init__(self, *shape: int) -> None:
        self.shape = tuple(shape)

    def stride(self, dim: int) -> int:
        return 1

    def new_empty(self, *shape: int, **kwargs: object) -> Tensor:
        return Tensor(*shape)

    def __getattr__(self, name: str) -> Any:  # dtype, element_ty, to, ...
        return _any

    def __getitem__(self, item: object) -> Tensor:
        return self

    def __setitem__(self, item: object, value: object) -> None:
        pass

    def _arithmetic(self, other: object) -> Tensor:
        return self

    __add__ = __radd__ = __sub__ = __mul__ = __rmul__ = __lt__ = __and__ = _arithmetic


def _any(*args: object, **kwargs: object) -> Tensor:
    return Tensor()


class _Language:
    """`triton.language`: `arange` as Triton's compiler checks it, the rest stand-ins."""

    constexpr = int

    @staticmethod
    def arange(start: int, end: int) -> Tensor:
        size = end - start
        if size <= 0 or size & (size - 1):
            raise CompilationError("arange's range must be a power of 2")
        return Tensor(size)

    @staticmethod
    def program_id(axis: int) -> int:
        return 0

    def __getattr__(self, name: str) -> Any:  # load, store, ...
        return _any


class _Kernel:
    """A `@triton.jit` kernel: `kernel[grid](*args)` runs its body once, as Python."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __getitem__(self, grid: object) -> Callable[..., Any]:
        return self.function


def fake_triton() -> types.SimpleNamespace:
    """Triton as the launcher and the kernels read it."""

    def next_power_of_2(n: int) -> int:
        return 1 if n <= 1 else 1 << (n - 1).bit_length()

    return types.SimpleNamespace(jit=_Kernel, next_power_of_2=next_power_of_2)


def concat_frames(release: str, heads: int, nope: int, rope: int) -> tuple[str, list[Frame]]:
    """The wheel's key concatenation on ROCm with aiter, for `heads` per rank and the two
    head dims: the exception's type and its frames in the wheel ("" and none: it ran)."""
    root = source_root(release)
    branch, ranges = aiter_branch(root), kernel_ranges(root)
    assert branch is not None and ranges is not None, release
    caller_file, where, _ = branch[0]
    kernel_file = next(iter(ranges[0].values()))[0]
    triton = fake_triton()
    namespace: dict[str, Any] = {"triton": triton, "tl": _Language(), "torch": Anything()}
    stubs.exec_definitions(root / kernel_file, [LAUNCHER, KERNEL], namespace, [PAD_KERNEL])
    # The method alone, found by its `Class.method` (the concatenation's, one per module).
    method = functions_of(ast.parse((root / caller_file).read_text(encoding="utf-8-sig")))[where]
    globals_ = {
        **{name: Anything() for name in _read_names(method)},
        "_is_hip": True, "_is_cuda": False, "_is_musa": False, "_is_npu": False,
        LAUNCHER: namespace[LAUNCHER], "next_power_of_2": triton.next_power_of_2,
    }  # fmt: skip
    function = _compiled(root / caller_file, method, globals_)
    attention = types.SimpleNamespace(
        num_local_heads=heads, qk_nope_head_dim=nope, qk_rope_head_dim=rope,
        qk_head_dim=nope + rope, current_attention_backend="aiter", kv_cache_dtype="auto",
    )  # fmt: skip
    given = {"k_nope": Tensor(16, heads, nope), "k_pe": Tensor(16, 1, rope)}
    parameters = list(inspect.signature(function).parameters)[1:]
    arguments = [given.get(name, Anything()) for name in parameters]
    try:
        function(attention, *arguments)
    except Exception as exc:  # what the first prefill would raise
        return type(exc).__name__, frames_in(root, exc)
    return "", []


def _read_names(function: ast.FunctionDef) -> set[str]:
    return {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    } - set(dir(builtins))


def _compiled(file: Path, method: ast.FunctionDef, globals_: dict[str, Any]) -> Any:
    """The method compiled alone as a function, at its own lines, its annotations dropped."""
    method.returns = None
    for argument in (*method.args.args, *method.args.kwonlyargs):
        argument.annotation = None
    method.decorator_list = []
    exec(compile(ast.Module(body=[method], type_ignores=[]), str(file), "exec"), globals_)
    return globals_[method.name]
