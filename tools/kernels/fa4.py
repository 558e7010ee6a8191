"""The multimodal encoder's FA4 path: which GPUs SGLang sends to flash-attn-4, and which of
them flash-attn-4's SM100 forward kernel accepts, both by running the wheels' own code.

SGLang's `VisionAttention._determine_attention_backend` (sglang/srt/layers/attention/
vision.py) picks the encoder's backend from `get_device_capability()` when
`--mm-attention-backend` is unset; its if/elif chain is evaluated here on each capability.
flash-attn-4's `FlashAttentionForwardSm100.__init__` asserts on the CuTe DSL's `Arch` of
the device; that assert is evaluated with the `Arch` enum of the CuTe DSL the release pins
(its `arch.py`, executed: from 4.5 its aliases of sm_101*/sm_110* depend on the CUDA major
of the DSL's libraries, 13 with the `cu13` extra, else 12).
"""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path
from typing import Any

from kernels.calls import first_method_call
from kernels.wheels import members, read_text

VISION_FILE = "sglang/srt/layers/attention/vision.py"
VISION_FUNCTION = "_determine_attention_backend"
FA4_FILE = "flash_attn/cute/flash_fwd_sm100.py"
FA4_CLASS = "FlashAttentionForwardSm100"
INTERFACE_FILE = "flash_attn/cute/interface.py"
BACKEND_FILE = "sglang/srt/layers/attention/flashattention_backend.py"
DSL_ARCH = "nvidia_cutlass_dsl/python_packages/cutlass/base_dsl/arch.py"
DSL_ENV = "nvidia_cutlass_dsl/python_packages/cutlass/base_dsl/env_manager.py"


def _function(tree: ast.AST, name: str) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise LookupError(name)


def _assigns_fa4(body: list[ast.stmt]) -> str | None:
    for statement in body:
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and any(isinstance(t, ast.Name) and t.id == "backend" for t in statement.targets)
        ):
            return str(statement.value.value)
    return None


def vision_default(
    source: str, capabilities: frozenset[tuple[int, int]]
) -> tuple[str, int, frozenset[tuple[int, int]], str | None] | None:
    """(function, line of the fa4 branch's test, those of `capabilities` the chain sends to
    fa4, the backend of its last `else`: SGLang's choice on the other GPUs) of a release's
    vision.py; None when no branch picks fa4."""
    function = _function(ast.parse(source), VISION_FUNCTION)
    chains = [
        node for node in ast.walk(function)
        if isinstance(node, ast.If) and _mentions(node.test, "major")
    ]  # fmt: skip
    # The first `if` on `major` heads the chain of the CUDA branch.
    if not chains:
        return None
    head = min(chains, key=lambda node: node.lineno)
    branches: list[tuple[ast.expr, str | None, int]] = []
    node: ast.stmt | None = head
    fallback: str | None = None
    while isinstance(node, ast.If):
        branches.append((node.test, _assigns_fa4(node.body), node.lineno))
        rest = node.orelse
        node = rest[0] if len(rest) == 1 and isinstance(rest[0], ast.If) else None
        if node is None:
            fallback = _assigns_fa4(rest)
    lines = [line for _, value, line in branches if value == "fa4"]
    if not lines:
        return None
    reached = set()
    for major, minor in capabilities:
        for test, value, _ in branches:
            scope = {"major": major, "minor": minor}
            if eval(compile(ast.Expression(test), VISION_FILE, "eval"), {}, scope):
                if value == "fa4":
                    reached.add((major, minor))
                break
    return f"VisionAttention.{VISION_FUNCTION}", lines[0], frozenset(reached), fallback


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def fa4_assert(source: str) -> tuple[str, int, ast.expr]:
    """(function, line, test) of the arch assert in the SM100 forward kernel's constructor."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == FA4_CLASS:
            init = _function(node, "__init__")
            for statement in ast.walk(init):
                if isinstance(statement, ast.Assert) and _mentions(statement.test, "Arch"):
                    return f"{FA4_CLASS}.__init__", statement.lineno, statement.test
    raise LookupError(f"no Arch assert in {FA4_CLASS}.__init__")


def dsl_arch(dsl_wheel: Path, cuda_major: int) -> Any:
    """The CuTe DSL's `Arch` enum, its own `arch.py` run with the given CUDA major."""
    package = f"_cute_dsl_arch_{dsl_wheel.stem.replace('.', '_').replace('-', '_')}_{cuda_major}"
    root = types.ModuleType(package)
    root.__path__ = []
    version = types.ModuleType(f"{package}.version_info")
    version.CUDA_VERSION = types.SimpleNamespace(major=cuda_major)  # type: ignore[attr-defined]
    module = types.ModuleType(f"{package}.arch")
    module.__package__ = package
    sys.modules.update({package: root, version.__name__: version, module.__name__: module})
    exec(compile(read_text(dsl_wheel, DSL_ARCH), DSL_ARCH, "exec"), module.__dict__)
    return module.Arch


def device_arch(major: int, minor: int) -> str:
    """The DSL's name for the device (`detect_gpu_arch`: an `a` suffix from SM 9.0 on)."""
    return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


def alias_line(dsl_wheel: Path, cuda_major: int) -> tuple[str, int]:
    """Where the DSL's `Arch` takes its aliases for this CUDA major (or its `__le__`,
    where it has no aliases)."""
    lines = read_text(dsl_wheel, DSL_ARCH).splitlines()
    wanted = '"sm_101": "sm_110"' if cuda_major >= 13 else '"sm_110": "sm_101"'
    for number, line in enumerate(lines, 1):
        if wanted in line:
            return "ArchMeta.__new__", number
    for number, line in enumerate(lines, 1):
        if "def __le__" in line:
            return "Arch.__le__", number
    raise LookupError(DSL_ARCH)


def accepted(fa4_source: str, dsl_wheel: Path, cuda_major: int) -> frozenset[tuple[int, int]]:
    """The capabilities (of the DSL's `Arch` list) on which the FA4 assert holds."""
    arch = dsl_arch(dsl_wheel, cuda_major)
    _, _, test = fa4_assert(fa4_source)
    code = compile(ast.Expression(test), FA4_FILE, "eval")
    passing = set()
    for member in list(arch):
        major, minor = member.major, member.minor
        device = arch[device_arch(major, minor)]
        scope = {"self": types.SimpleNamespace(arch=device), "Arch": arch}
        if eval(code, {}, scope):
            passing.add((major, minor))
    return frozenset(passing)


def capabilities(dsl_wheel: Path) -> frozenset[tuple[int, int]]:
    """The capabilities the DSL's `Arch` names (the GPUs the verdicts are computed on)."""
    return frozenset((member.major, member.minor) for member in dsl_arch(dsl_wheel, 12))


def has_dsl(dsl_wheel: Path) -> bool:
    return DSL_ARCH in members(dsl_wheel)


def sm100_dispatch(
    source: str, capabilities: frozenset[tuple[int, int]]
) -> tuple[str, int, frozenset[tuple[int, int]]]:
    """(function, line, those of `capabilities` it sends) of the branch of flash-attn-4's
    forward that builds the SM100 kernel: the innermost `if` on `arch` around the call."""
    tree = ast.parse(source)
    best: tuple[int, str, ast.expr] | None = None
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.If) or not _mentions(node.test, "arch"):
                continue
            # The kernel's class is named there: called, or chosen by an expression.
            builds = any(
                (isinstance(n, ast.Name) and n.id == FA4_CLASS)
                or (isinstance(n, ast.Attribute) and n.attr == FA4_CLASS)
                for statement in node.body
                for n in ast.walk(statement)
            )
            if builds and (best is None or node.lineno > best[0]):
                best = (node.lineno, function.name, node.test)
    if best is None:
        raise LookupError(f"no branch of {INTERFACE_FILE} builds {FA4_CLASS}")
    line, name, test = best
    code = compile(ast.Expression(test), INTERFACE_FILE, "eval")
    sent = frozenset(
        (major, minor)
        for major, minor in capabilities
        if eval(code, {}, {"arch": major * 10 + minor})
    )
    return name, line, sent


def backend_call(source: str) -> tuple[str, int] | None:
    """(class.function, line) of the FlashAttention backend's first kernel call that passes
    its implementation version (`ver=self.fa_impl_ver`): where fa4 reaches flash-attn-4."""
    return first_method_call(source, _passes_impl_version)


def _passes_impl_version(node: ast.Call) -> bool:
    return any(k.arg == "ver" and "fa_impl_ver" in ast.unparse(k.value) for k in node.keywords)


def v4_backends(registry: str) -> tuple[str, ...]:
    """The backend names whose factory builds the FlashAttention backend as version 4."""
    names = []
    for block in registry.split("@register_attention_backend(")[1:]:
        name = block.split('"')[1]
        if "fa_impl_ver=4" in block.split("@register_attention_backend(")[0]:
            names.append(name)
    return tuple(names)
