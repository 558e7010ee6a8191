"""The DSA backend's path into DeepGEMM: where SGLang asks for the paged MQA logits'
schedule, and the architectures the pinned DeepGEMM wheel carries those kernels for.

DeepGEMM dispatches on the GPU's major (`arch_major`) in compiled code (`deep_gemm/_C.so`);
its JIT kernels ship as headers named by architecture (`sm90_*`, `sm100_*`, `sm120_*`):
the paged MQA logits' kernels and schedulers present in the wheel are the architectures
it can run them on.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernels.calls import first_method_call
from kernels.wheels import members

CALL = "get_paged_mqa_logits_metadata"
DSA_FILES = (
    "sglang/srt/layers/attention/nsa_backend.py",
    "sglang/srt/layers/attention/dsa_backend.py",
)
REGISTRY = "sglang/srt/layers/attention/attention_registry.py"
COMPILED = "deep_gemm/_C.so"
_KERNEL = re.compile(
    r"^deep_gemm/include/deep_gemm/(?:impls|scheduler)/sm(\d+)_\w*paged_mqa_logits\.cuh$"
)


def call_site(source: str) -> tuple[str, int] | None:
    """(class.function, line) of the DSA backend's first call of DeepGEMM's schedule."""
    return first_method_call(source, lambda node: getattr(node.func, "attr", "") == CALL)


def backends(registry: str, module: str) -> tuple[str, ...]:
    """The backend names whose factory in the registry builds the DSA backend's module,
    directly or through another such factory (a deprecated alias)."""
    blocks = []
    for block in re.split(r"(?=@register_attention_backend\()", registry)[1:]:
        name = re.match(r'@register_attention_backend\("([^"]+)"\)', block)
        function = re.search(r"def (\w+)\(", block)
        if name and function:
            blocks.append((name.group(1), function.group(1), block))
    direct = {function for _, function, block in blocks if f"{module} import" in block}
    return tuple(
        name
        for name, function, block in blocks
        if function in direct or any(f"{factory}(" in block for factory in direct)
    )


def built(wheel: Path) -> tuple[tuple[int, str], ...]:
    """(architecture, header) of every paged MQA logits kernel the wheel carries."""
    found = []
    for name in members(wheel):
        match = _KERNEL.match(name)
        if match:
            found.append((int(match.group(1)), name))
    return tuple(sorted(found))
