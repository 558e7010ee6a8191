"""The trtllm_mha and trtllm_mla backends' prefill: where SGLang calls FlashInfer's
trtllm-gen FMHA, and the GPUs FlashInfer's trtllm-gen runner accepts, read from the wheels.

SGLang's `forward_extend` calls `flashinfer.prefill.trtllm_batch_context_with_kv_cache`
(MHA) or `trtllm_ragged_attention_deepseek` (MLA). Neither chooses a kernel by GPU (unlike
the decode functions, whose `backend="auto"` sends GPUs other than SM 10.x to XQA): each
runs `get_trtllm_gen_fmha_module()`, JIT-built for the running GPU's own architecture,
whose launcher builds a `TllmGenFmhaRunner`. Its constructor checks the device's
`getSMVersion()` (major * 10 + minor) against `kSM_*` constants
(`FLASHINFER_CHECK(mSM == kSM_100 || mSM == kSM_103, "Unsupported architecture")`): that
C++ check ships as source in the flashinfer-python wheel, and is read here with the
constants' values from the wheel's `trtllm/common.h`. The kernels themselves (cubins) are
fetched at run time or from flashinfer-cubin and are not read.

From 0.5.19 SGLang's trtllm_mha sends the prefill of some GPUs to FlashInfer's fmha_v2
instead (`self.use_fmha_v2 = get_platform().is_sm90 or get_platform().is_sm120`): the
majors those predicates match are read from SGLang's `is_smNN_supported` definitions.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from kernels.calls import first_method_call

RUNNER = "flashinfer/data/include/flashinfer/trtllm/fmha/fmhaRunner.cuh"
COMMON = "flashinfer/data/include/flashinfer/trtllm/common.h"
PREFILL = "flashinfer/prefill.py"
RUNNER_FUNCTION = "TllmGenFmhaRunner::TllmGenFmhaRunner"
UTILS = "sglang/srt/utils/common.py"
ATTENTION = "sglang/srt/layers/attention"

# (backend module, FlashInfer function its forward_extend calls, the trtllm-gen module's
# entry that function runs)
PATHS = {
    "mha": ("trtllm_mha_backend", "trtllm_batch_context_with_kv_cache",
            "trtllm_paged_attention_context"),
    "mla": ("trtllm_mla_backend", "trtllm_ragged_attention_deepseek", "trtllm_ragged_attention"),
}  # fmt: skip
ROUTE = "use_fmha_v2"
"""The trtllm_mha attribute that sends the prefill to fmha_v2 instead (from 0.5.19)."""

_CONSTANT = re.compile(r"constexpr\s+int32_t\s+(kSM_\w+)\s*=\s*(\d+)\s*;")
_ACCEPT = re.compile(r"mSM\s*==\s*(kSM_\w+)")


def runner_check(runner: str, common: str) -> tuple[str, int, tuple[tuple[int, int], ...]]:
    """(function, line, the capabilities it accepts) of the runner's architecture check."""
    lines = runner.splitlines()
    end = next(n for n, text in enumerate(lines) if '"Unsupported architecture"' in text)
    start = next(n for n in range(end, -1, -1) if "FLASHINFER_CHECK(" in lines[n])
    names = _ACCEPT.findall(" ".join(lines[start : end + 1]))
    if not names:
        raise LookupError(f"no mSM comparison in {RUNNER}:{start + 1}")
    values = dict(_CONSTANT.findall(common))
    # getSMVersion() is major * 10 + minor (the `f` family constants are not compared).
    accepted = sorted({divmod(int(values[name]), 10) for name in names})
    return RUNNER_FUNCTION, start + 1, tuple(accepted)


def sm_version(common: str) -> tuple[str, int]:
    """Where the wheel's `getSMVersion` (major * 10 + minor) is defined."""
    for number, text in enumerate(common.splitlines(), 1):
        if re.search(r"\bint\s+getSMVersion\(\)", text):
            return "getSMVersion", number
    raise LookupError(f"no getSMVersion in {COMMON}")


def constants(common: str, accepted: tuple[tuple[int, int], ...]) -> tuple[str, int]:
    """Where the first accepted `kSM_*` constant is defined."""
    wanted = {major * 10 + minor for major, minor in accepted}
    for number, text in enumerate(common.splitlines(), 1):
        match = _CONSTANT.search(text)
        if match and int(match.group(2)) in wanted:
            return match.group(1), number
    raise LookupError(f"no kSM_* constant in {COMMON}")


def entry(prefill: str, function: str, module_entry: str) -> tuple[str, int]:
    """(function, line) where FlashInfer's prefill function takes the trtllm-gen module's
    entry; refuses a function whose default backend is not trtllm-gen (a GPU dispatch
    this reading does not model)."""
    tree = ast.parse(prefill)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    positional = node.args.args
    # Defaults align with the last positional arguments; keyword-only ones pair up.
    defaults = dict(zip([a.arg for a in positional][::-1], node.args.defaults[::-1], strict=False))
    kwonly = zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
    defaults.update({a.arg: d for a, d in kwonly})
    if any(a.arg == "backend" for a in positional + node.args.kwonlyargs):
        default = defaults.get("backend")
        if not (isinstance(default, ast.Constant) and default.value == "trtllm-gen"):
            raise LookupError(f"{function} chooses its backend by default")
    for statement in ast.walk(node):
        if isinstance(statement, ast.Attribute) and statement.attr == module_entry:
            return function, statement.lineno
    raise LookupError(f"{function} does not take {module_entry}")


def call_site(source: str, function: str) -> tuple[str, int] | None:
    """(class.function, line) of the backend's first call of FlashInfer's `function`,
    which must leave FlashInfer's backend at its default."""

    def matches(node: ast.Call) -> bool:
        return getattr(node.func, "attr", "") == function

    site = first_method_call(source, matches)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and matches(node)
            and any(k.arg == "backend" for k in node.keywords)
        ):
            raise LookupError(f"SGLang sets {function}'s backend at line {node.lineno}")
    return site


def routed(source: str, utils: str) -> tuple[str, int, tuple[int, ...]] | None:
    """(class.function, line, majors) of trtllm_mha's `self.use_fmha_v2 = ...`: the GPUs
    whose prefill SGLang sends to fmha_v2, by the majors of the `is_smNN` predicates it
    names."""
    for where, node in _method_nodes(source):
        if not isinstance(node, ast.Assign):
            continue
        if not any(isinstance(t, ast.Attribute) and t.attr == ROUTE for t in node.targets):
            continue
        if not isinstance(node.value, ast.BoolOp) or not isinstance(node.value.op, ast.Or):
            raise LookupError(f"{ROUTE} is not an `or` of predicates: {ast.unparse(node)}")
        majors: set[int] = set()
        for operand in node.value.values:
            name = re.fullmatch(r".*\b(is_sm\d+)(?:_supported)?(?:\(\))?", ast.unparse(operand))
            if name is None:
                raise LookupError(f"{ROUTE} names {ast.unparse(operand)}")
            majors |= _majors(utils, f"{name.group(1)}_supported")
        return where, node.lineno, tuple(sorted(majors))
    return None


def _method_nodes(source: str) -> list[tuple[str, ast.AST]]:
    return [
        (f"{klass.name}.{function.name}", node)
        for klass in ast.walk(ast.parse(source))
        if isinstance(klass, ast.ClassDef)
        for function in klass.body
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
    ]


def _majors(utils: str, predicate: str) -> set[int]:
    match = re.search(
        rf"^{predicate} = .*?device_capability_majors=\[([\d, ]+)\]", utils, re.M | re.S
    )
    if match is None:
        raise LookupError(f"no {predicate} in {UTILS}")
    return {int(major) for major in match.group(1).split(",")}


def path_data(kind: str, backend: str, utils: str, kernel: dict[str, Any]) -> dict[str, Any] | None:
    """One backend's path into the trtllm-gen runner: SGLang's call, the majors it sends
    elsewhere, FlashInfer's entry and runner check (`kernel`)."""
    module, function, _ = PATHS[kind]
    site = call_site(backend, function)
    if site is None:
        return None
    route = routed(backend, utils) if kind == "mha" else None
    return {
        "caller": (f"{ATTENTION}/{module}.py", site[0], site[1]),
        "elsewhere": (f"{ATTENTION}/{module}.py", *route) if route else None,
        "entry": (PREFILL, *kernel["entries"][kind]),
        **{key: kernel[key] for key in ("kernel", "sm_version", "accepted")},
    }


# -- the DSA backend's decode on its trtllm sub-backend ------------------------------------
DSA_MODULES = ("nsa_backend", "dsa_backend")
"""The DSA backend's module (`nsa_backend` up to 0.5.12)."""
DSA_DECODE = "trtllm_batch_decode_with_kv_cache_mla"
"""FlashInfer's MLA decode, which the DSA backend's trtllm sub-backend calls sparse."""
DECODE_ENTRY = "trtllm_paged_attention_decode"
"""The trtllm-gen module's entry FlashInfer's trtllm-gen MLA decode takes."""
DECODE_FILES = ("flashinfer/decode.py", "flashinfer/mla.py", "flashinfer/mla/_core.py")
"""Where FlashInfer's releases define its MLA decode."""
TRTLLM_GEN = "trtllm-gen"


def dsa_call_site(source: str) -> tuple[str, int] | None:
    """(Class.method, line) of the DSA backend's call of FlashInfer's MLA decode, which
    must name the trtllm-gen backend itself (a keyword of the call, or of the keywords it
    unpacks): with `backend="auto"` FlashInfer would choose a kernel by GPU."""
    site = first_method_call(source, lambda node: getattr(node.func, "attr", "") == DSA_DECODE)
    if site is None:
        return None
    klass, method = site[0].split(".")
    function = next(
        node
        for owner in ast.walk(ast.parse(source))
        if isinstance(owner, ast.ClassDef) and owner.name == klass
        for node in owner.body
        if isinstance(node, ast.FunctionDef) and node.name == method
    )
    if not _names_trtllm_gen(function):
        raise LookupError(f"{site[0]} leaves {DSA_DECODE}'s backend to FlashInfer")
    return site


def _names_trtllm_gen(function: ast.FunctionDef) -> bool:
    """Whether `function` sets a `backend` keyword (or dict key) to "trtllm-gen"."""
    pairs = [(node.arg, node.value) for node in ast.walk(function) if isinstance(node, ast.keyword)]
    for node in ast.walk(function):
        if isinstance(node, ast.Dict):
            pairs += [
                (key.value, value)
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)
            ]
    return any(
        name == "backend" and isinstance(value, ast.Constant) and value.value == TRTLLM_GEN
        for name, value in pairs
    )


def decode_entry(sources: dict[str, str]) -> tuple[str, str, int]:
    """(file, function, line) where FlashInfer's MLA decode (or the implementation it hands
    its arguments to) takes the trtllm-gen module's paged decode, whose launcher builds the
    runner that checks the GPU; `sources`: FlashInfer's files by path."""
    for file, text in sources.items():
        if f"def {DSA_DECODE}(" not in text:
            continue
        tree = ast.parse(text)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        for name in (DSA_DECODE, f"_{DSA_DECODE}_impl"):
            function = functions.get(name)
            if function is None:
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Attribute) and node.attr == DECODE_ENTRY:
                    return file, name, node.lineno
    raise LookupError(f"no {DSA_DECODE} taking {DECODE_ENTRY}")
