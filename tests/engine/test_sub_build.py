"""The checks SGLang makes of the sub-backend flags at start-up and as it builds the parts
that read them.

The vision encoder's and the DSA backend's checks (`compat.releases.sub_build`) are read,
not run (their modules import the kernels): each line is read back from every release's
wheel, a `raise` right after the condition the check models, in the function it names; and
every encoder class whose constructor refuses a machine is in the data. Then the engine's
replay of the build (`build_after_startup`) is held to what those lines say.
"""

from __future__ import annotations

import ast
import re

import pytest
from conformance import releases
from conformance.availability import require_source

from compat import check as guard_check
from compat.engine.build import BuildCheck, build_after_startup
from compat.engine.sub_backends import SubRefusal
from compat.engine.sub_build import DSA_BACKENDS, SubBuildCheck, SubCheck, SubPart
from compat.inputs.config import AttentionConfig
from compat.releases import RELEASE_NAMES, RELEASES
from compat.releases.sub_build import ENCODERS, Q8, TRITON_SPARSE
from compat.releases.sub_startup import EXTRA_BUFFER

# The condition each check models, as the line before its `raise` writes it.
_CONDITIONS = {
    SubCheck.BLACKWELL: re.compile(r'backend == "fa3" and .*is_blackwell'),
    SubCheck.PHASE: re.compile(r'decode_impl == "flashmla_sparse_q8"'),
}
_GPU = {Q8: "device_sm_major != 9", TRITON_SPARSE: "device_sm_major < 9"}
# An encoder's machine, as its constructor's `if not ...` names it.
_PLATFORM_TESTS = {"cuda": "_is_cuda", "rocm": "_is_hip", "npu": "_is_npu", "cpu": "_is_cpu",
                   "xpu": "_is_xpu"}  # fmt: skip


def _enclosing(tree: ast.Module, line: int) -> str:
    """`Class.method` or `function` around `line`."""
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        inside = node.lineno <= line <= (node.end_lineno or 0) if hasattr(node, "lineno") else False
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and inside:
            names.append((node.lineno, node.name))
    names.sort()
    return ".".join(name for _, name in names[-2:]) if len(names) > 1 else names[-1][1]


def _condition_holds(check: SubBuildCheck, before: str) -> bool:
    if check.check in _CONDITIONS:
        return bool(_CONDITIONS[check.check].search(before))
    if check.check is SubCheck.GPU:
        return _GPU[check.value] in before
    if check.part is SubPart.DSA:  # triton_sparse_mla's ROCm check
        return "if _is_hip:" in before
    (platform,) = check.platforms
    return f"if not {_PLATFORM_TESTS[platform.value]}" in before or (
        f"if not ({_PLATFORM_TESTS[platform.value]}" in before
    )


@pytest.mark.parametrize("version", RELEASE_NAMES)
def test_each_sub_backend_check_is_where_the_release_raises(version: str) -> None:
    root = require_source(version)
    checks = RELEASES[version].build.sub_checks
    assert checks
    for check in checks:
        text = (root / check.file).read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines[check.line - 1].strip().startswith("raise "), check
        assert _condition_holds(check, lines[check.line - 2]), (check, lines[check.line - 2])
        function = check.function
        if function.startswith("VisionAttention."):  # the method, read without its class
            function = function.removeprefix("VisionAttention.")
            assert _enclosing(ast.parse(text), check.line).endswith(function), check
        else:
            assert _enclosing(ast.parse(text), check.line) == function, check
    # Every encoder class whose constructor refuses a machine is modelled, and no other.
    vision = (root / "sglang/srt/layers/attention/vision.py").read_text(encoding="utf-8")
    table = re.search(r"QKV_BACKEND_IMPL = \{(.*?)\}", vision, re.S)
    assert table is not None
    refusing = {
        name
        for name, cls in re.findall(r'"(\w+)":\s*(\w+)', table.group(1))
        if re.search(rf"class {cls}\b(?:(?!\nclass ).)*only available", vision, re.S)
    }
    modelled = {
        c.value for c in checks if c.part is SubPart.VISION and c.check is SubCheck.PLATFORM
    }
    assert modelled == refusing
    assert all(ENCODERS[name][0] in vision for name in modelled)
    # Each value checked is one the release's parser accepts for the flag.
    for check in checks:
        if check.check is not SubCheck.PHASE:
            assert check.value in RELEASES[version].sub_choices[check.field], check


def _build(version: str, gpu: str, **flags: object) -> tuple[str, int] | None:
    config = AttentionConfig(sglang_version=version, **flags)  # type: ignore[arg-type]
    parsed = config.parsed
    backend = str(flags.get("attention_backend", "triton"))
    failure = build_after_startup(parsed.release.build, parsed, (backend, backend), None)
    del gpu
    return None if failure is None else (failure.where, failure.function)


_MACHINES = {
    "B200": {"platform": "cuda", "compute_capability": "10.0"},
    "H200": {"platform": "cuda", "compute_capability": "9.0"},
    "MI300X": {"platform": "rocm"},
}


@pytest.mark.parametrize("version", ["0.5.7", "0.5.16", "0.5.23"])
def test_the_vision_encoder_refuses_fa3_on_blackwell_and_off_cuda(version: str) -> None:
    checks = {(c.value, c.check): c for c in RELEASES[version].build.sub_checks}
    blackwell = checks["fa3", SubCheck.BLACKWELL]
    vision = {"attention_arch": "mha", "multimodal": True, "mm_attention_backend": "fa3"}
    assert _build(version, "B200", **_MACHINES["B200"], **vision) == (
        f"sglang/srt/layers/attention/vision.py:{blackwell.line}",
        "VisionAttention._determine_attention_backend",
    )
    assert _build(version, "H200", **_MACHINES["H200"], **vision) is None
    on_rocm = _build(version, "MI300X", **_MACHINES["MI300X"], **vision)
    assert on_rocm is not None and on_rocm[1] == "VisionFlash3Attention.__init__"
    # A model without a vision encoder builds none; an unset flag is SGLang's own choice.
    assert _build(version, "B200", **_MACHINES["B200"], **{**vision, "multimodal": False}) is None
    assert (
        _build(version, "B200", **_MACHINES["B200"], **{**vision, "mm_attention_backend": None})
        is None
    )
    aiter = {**vision, "mm_attention_backend": "aiter_attn"}
    assert _build(version, "MI300X", **_MACHINES["MI300X"], **aiter) is None
    assert _build(version, "H200", **_MACHINES["H200"], **aiter) is not None


# The releases whose parser takes the SM90 prefill kernel: each has its check.
_Q8_RELEASES = [v for v in RELEASE_NAMES if Q8 in RELEASES[v].sub_choices["dsa_prefill_backend"]]


def test_every_release_with_the_sm90_prefill_kernel_checks_it() -> None:
    assert _Q8_RELEASES
    checked = [v for v in RELEASE_NAMES if any(c.value == Q8 for c in RELEASES[v].build.sub_checks)]
    assert checked == _Q8_RELEASES


@pytest.mark.parametrize("version", _Q8_RELEASES)
def test_the_dsa_backend_refuses_its_sm90_prefill_kernel_elsewhere(version: str) -> None:
    dsa = next(b for b in sorted(DSA_BACKENDS) if b in RELEASES[version].backend_set)
    model = {"attention_arch": "mla", "sparse_attention": True, "attention_backend": dsa}
    q8 = {**model, "dsa_prefill_backend": Q8}
    failure = _build(version, "B200", **_MACHINES["B200"], **q8)
    assert failure is not None and failure[0].startswith("sglang/srt/layers/attention/dsa_backend")
    assert _build(version, "H200", **_MACHINES["H200"], **q8) is None
    # Only where the DSA backend is built: another attention backend never reads the flag.
    assert (
        _build(version, "B200", **_MACHINES["B200"], **{**q8, "attention_backend": "triton"})
        is None
    )


def test_the_rule_of_a_sub_backend_failure_is_its_own() -> None:
    assert BuildCheck.SUB_BACKEND.rule == "build-sub-backend"
    checked = {c.part for v in RELEASE_NAMES for c in RELEASES[v].build.sub_checks}
    # The linear-attention flags are checked by start-up code (`compat.releases.sub_startup`),
    # not while the backends are built.
    assert checked == set(SubPart) - {SubPart.LINEAR}
    assert releases.selected()  # the conformance selection is read the same way


# -- start-up ---------------------------------------------------------------------------------

# The condition of each start-up check, as the lines before its `raise` write it.
_STARTUP_CONDITIONS = {
    SubRefusal.LINEAR_DECODE_FLASHINFER: (
        'decode == "flashinfer"',
        "get_device_capability()[0] >= 10",
    ),
    SubRefusal.LINEAR_PREFILL_FLASHINFER: ('prefill == "flashinfer"', "cuda_major < 13"),
    SubRefusal.LINEAR_DECODE_FLASHKDA: ('linear_attn_decode_backend == "flashkda"',),
    SubRefusal.LINEAR_DECODE_FLASHINFER_NO_BUFFER: (
        'linear_attn_decode_backend == "flashinfer"',
        'mamba_scheduler_strategy == "no_buffer"',
    ),
    SubRefusal.DSA_TRITON_ROCM_ONLY: ("not hip and rocm_only",),
    SubRefusal.DSA_TILELANG_FP8: ('kv_cache_dtype == "fp8_e4m3"', "not hip"),
    SubRefusal.DSA_TILELANG_FP8_MIXED: (
        'prefill_backend != "tilelang" or decode_backend != "tilelang"',
    ),
}


@pytest.mark.parametrize("version", RELEASE_NAMES)
def test_each_sub_backend_startup_check_is_where_the_release_raises(version: str) -> None:
    root = require_source(version)
    checks = RELEASES[version].sub_refusals
    for at in checks:
        text = (root / at.file).read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines[at.line - 1].strip().startswith("raise ValueError("), at
        before = " ".join(line.strip() for line in lines[at.line - 8 : at.line - 1])
        assert all(part in before for part in _STARTUP_CONDITIONS[at.check]), (at, before)
        assert _enclosing(ast.parse(text), at.line).endswith(at.function.split(".")[-1]), at
    # Every release whose start-up code has the linear-attention hook's FlashInfer check
    # is modelled with it (and none before).
    hook = "--linear-attn-decode-backend flashinfer on SM100+ requires"
    sources = [root / "sglang/srt/server_args.py", root / "sglang/srt/arg_groups/attention_hook.py"]
    has = any(p.exists() and hook in p.read_text(encoding="utf-8") for p in sources)
    assert has == any(at.check is SubRefusal.LINEAR_DECODE_FLASHINFER for at in checks)
    extra = EXTRA_BUFFER.get(version)
    assert (extra is not None) == (
        RELEASES[version].hybrid_cache.extra_buffer_linear_attn == "triton"
    )
    if extra is not None:
        file, function, line = extra
        text = (root / file).read_text(encoding="utf-8")
        assert 'linear_attn_backend == "triton"' in text.splitlines()[line - 1]
        assert _enclosing(ast.parse(text), line).endswith(function.split(".")[-1])


def _startup(version: str, **flags: object) -> list[str]:
    config = AttentionConfig(sglang_version=version, **flags)  # type: ignore[arg-type]
    return [
        f.rule
        for f in guard_check(config).findings
        if f.enforced.value == "startup" and f.severity.value == "error"
    ]


def test_the_linear_attention_checks_refuse_on_blackwell_only() -> None:
    b200 = {"attention_arch": "mha", "platform": "cuda", "compute_capability": "10.0"}
    h200 = {**b200, "compute_capability": "9.0"}
    rule = f"startup-{SubRefusal.LINEAR_DECODE_FLASHINFER.value}"
    assert rule in _startup("0.5.23", linear_attn_backend="flashinfer", **b200)
    assert rule not in _startup("0.5.23", linear_attn_backend="flashinfer", **h200)
    kda = f"startup-{SubRefusal.LINEAR_DECODE_FLASHKDA.value}"
    assert kda in _startup("0.5.23", linear_attn_decode_backend="flashkda", **h200)
    # Inherited from --linear-attn-backend, FlashKDA's decode falls back to triton.
    assert kda not in _startup("0.5.23", linear_attn_backend="flashkda", **h200)
    cuda13 = f"startup-{SubRefusal.LINEAR_PREFILL_FLASHINFER.value}"
    older = {**b200, "cuda_version": (12, 9)}
    assert cuda13 in _startup("0.5.23", linear_attn_prefill_backend="flashinfer", **older)
    newer = {**b200, "cuda_version": (13, 0)}
    assert cuda13 not in _startup("0.5.23", linear_attn_prefill_backend="flashinfer", **newer)
    # Not given, the CUDA is the official image's: 0.5.23's is 13.0.
    assert RELEASES["0.5.23"].image_cuda.version >= (13, 0)
    assert cuda13 not in _startup("0.5.23", linear_attn_prefill_backend="flashinfer", **b200)


def test_the_dsa_checks_read_the_machine_and_the_kv_cache() -> None:
    dsa = {"attention_arch": "mla", "sparse_attention": True, "platform": "cuda",
           "compute_capability": "9.0", "model_architecture": "DeepseekV32ForCausalLM"}  # fmt: skip
    triton = f"startup-{SubRefusal.DSA_TRITON_ROCM_ONLY.value}"
    assert triton in _startup("0.5.23", dsa_decode_backend="triton", **dsa)
    assert triton not in _startup("0.5.19", dsa_decode_backend="tilelang", **dsa)
    mixed = f"startup-{SubRefusal.DSA_TILELANG_FP8_MIXED.value}"
    fp8 = {**dsa, "kv_cache_dtype": "fp8_e4m3"}
    assert mixed in _startup("0.5.23", dsa_prefill_backend="tilelang", **fp8)
    assert mixed not in _startup(
        "0.5.23", dsa_prefill_backend="tilelang", dsa_decode_backend="tilelang", **fp8
    )
    assert mixed not in _startup("0.5.23", dsa_prefill_backend="tilelang", **dsa)
