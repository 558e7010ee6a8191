"""The flashmla backend's path into FlashMLA: where SGLang asks for FlashMLA's decoding
schedule, and the GPUs the pinned FlashMLA carries kernels for.

The backend has no branch on the GPU: on every CUDA GPU start-up lets through, its
metadata calls `get_mla_metadata` and its decode `flash_mla_with_kvcache`. Both run
compiled kernels of one extension: sgl-kernel's `flashmla_ops` (imported as
`sgl_kernel.flash_mla`), or from 0.5.23 the `sgl-flash-mla` wheel's legacy extension
(SGLang's `flash_mla_interface` wraps `flash_mla` and takes its legacy kernels, where dense
decode lives). That extension's fatbin (`kernels.fatbin`) lists the GPUs with a kernel
image: on any other GPU the first call finds none.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kernels.calls import first_method_call

BACKEND_FILE = "sglang/srt/layers/attention/flashmla_backend.py"
BACKEND_MODULE = "flashmla_backend"
CALL = "get_mla_metadata"
EXTENSIONS = {
    "sgl_kernel": "sgl_kernel/flashmla_ops.abi3.so",
    "flash_mla": "flash_mla/_C_legacy.abi3.so",
}
"""The top-level module SGLang imports FlashMLA from -> the extension holding its dense
MLA kernels in that package's wheel."""


def call_site(source: str) -> tuple[str, int] | None:
    """(class.function, line) of the backend's first call of FlashMLA's schedule."""

    def matches(node: ast.Call) -> bool:
        func = node.func
        return getattr(func, "attr", getattr(func, "id", "")) == CALL

    return first_method_call(source, matches)


def imported_from(source: str) -> str:
    """The module a file imports `get_mla_metadata` from."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and any(a.name == CALL for a in node.names):
            return node.module or ""
    raise LookupError(f"no import of {CALL}")


def top_module(module: str, read: Callable[[str], str]) -> str:
    """The kernel package's top-level module behind `module`: itself when it is one of
    `EXTENSIONS`, else the one SGLang's wrapper (its file, given by `read`) imports."""
    top = module.split(".")[0]
    if top in EXTENSIONS:
        return top
    wrapper = read(module.replace(".", "/") + ".py")
    for node in ast.walk(ast.parse(wrapper)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in EXTENSIONS:
                    return alias.name
    raise LookupError(f"{module} imports none of {sorted(EXTENSIONS)}")
