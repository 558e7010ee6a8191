"""A fake `torch` that describes one machine, as SGLang's start-up code queries it.

Only what `server_args.py`, `utils/common.py` and `configs/model_config.py` touch is
modelled: device availability and capability, the CUDA/HIP version strings, memory, the
AMX probe, a few dtypes. Submodules they import for other purposes (`torch.nn`,
`torch.distributed`, ...) are placeholders (see stubs.placeholder_module).
"""

from __future__ import annotations

import types
from dataclasses import dataclass

from conformance.stubs import placeholder_module


@dataclass(frozen=True)
class GpuProfile:
    """One machine SGLang may start on."""

    name: str
    platform: str  # "cuda" | "rocm" | "cpu", as the product names platforms
    device_name: str
    capability: tuple[int, int] | None  # CUDA compute capability; None off CUDA
    cuda_version: str | None  # torch.version.cuda
    hip_version: str | None  # torch.version.hip
    memory_mib: int
    amx: bool = False  # CPU: AMX tiles present (torch._C._cpu._is_amx_tile_supported)

    @property
    def cuda_version_tuple(self) -> tuple[int, int] | None:
        if self.cuda_version is None:
            return None
        major, minor = self.cuda_version.split(".")[:2]
        return int(major), int(minor)


GPU_PROFILES: dict[str, GpuProfile] = {
    profile.name: profile
    for profile in (
        GpuProfile("H200", "cuda", "NVIDIA H200", (9, 0), "12.8", None, 143_771),
        GpuProfile("B200", "cuda", "NVIDIA B200", (10, 0), "12.8", None, 183_359),
        # torch's ROCm builds report capability 9.4 for gfx942 and no CUDA version.
        GpuProfile("MI300X", "rocm", "AMD Instinct MI300X", (9, 4), None, "6.3.42131", 196_592),
        GpuProfile("CPU-AMX", "cpu", "Intel Xeon (AMX)", None, None, None, 515_000, amx=True),
    )
}


class _Dtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _Finfo:
    # The one value common.py reads at import: float8_e4m3fn's max (448 on CUDA).
    def __init__(self, dtype: _Dtype) -> None:
        self.max = {"float8_e4m3fn": 448.0, "float16": 65504.0}.get(dtype.name, 3.4e38)


def build(profile: GpuProfile) -> dict[str, types.ModuleType]:
    """The modules `torch`, `torch.cuda`, ... for `profile`, keyed by their import name."""
    gpu = profile.platform in ("cuda", "rocm")  # ROCm torch answers through torch.cuda too
    torch = types.ModuleType("torch")
    torch.__version__ = "2.9.1"  # the torch sglang 0.5.7 pins
    torch.__path__ = []  # a package, so `import torch.nn` looks for submodules

    version = types.ModuleType("torch.version")
    version.cuda = profile.cuda_version
    version.hip = profile.hip_version
    torch.version = version

    cuda = types.ModuleType("torch.cuda")
    properties = types.SimpleNamespace(
        name=profile.device_name,
        total_memory=profile.memory_mib * 1024 * 1024,
        multi_processor_count=132 if gpu else 0,
        major=(profile.capability or (0, 0))[0],
        minor=(profile.capability or (0, 0))[1],
        gcnArchName="gfx942:sramecc+:xnack-" if profile.platform == "rocm" else "",
    )

    def capability(device: object = None) -> tuple[int, int]:
        if profile.capability is None:
            raise RuntimeError("Found no NVIDIA driver on your system.")
        return profile.capability

    cuda.is_available = lambda: gpu
    cuda.device_count = lambda: 1 if gpu else 0
    cuda.get_device_capability = capability
    cuda.get_device_name = lambda device=None: profile.device_name
    cuda.get_device_properties = lambda device=None: properties
    cuda.mem_get_info = lambda device=None: (properties.total_memory, properties.total_memory)
    cuda.current_device = lambda: 0
    cuda.is_initialized = lambda: True  # 0.5.21+ asks before probing NVML instead
    torch.cuda = cuda

    xpu = types.ModuleType("torch.xpu")
    xpu.is_available = lambda: False
    torch.xpu = xpu
    cpu = types.ModuleType("torch.cpu")
    cpu.is_available = lambda: True
    torch.cpu = cpu
    # No torch.hpu / torch.npu attributes: SGLang probes them with hasattr.
    backends = types.ModuleType("torch.backends")
    backends.mps = types.SimpleNamespace(is_available=lambda: False)  # 0.5.10+ probes MPS
    torch.backends = backends

    cpu_probe = types.SimpleNamespace(_is_amx_tile_supported=lambda: profile.amx)
    torch._C = types.SimpleNamespace(_cpu=cpu_probe)
    cpu._is_amx_tile_supported = cpu_probe._is_amx_tile_supported  # the probe 0.5.13+ calls
    # sgl_kernel's CPU build registers this op; common.cpu_has_amx_support looks for it.
    sgl_kernel_ops = types.SimpleNamespace()
    if profile.amx:
        sgl_kernel_ops.convert_weight_packed = object()
    torch.ops = types.SimpleNamespace(sgl_kernel=sgl_kernel_ops)

    torch.dtype = _Dtype
    for name in ("float16", "float32", "bfloat16", "float8_e4m3fn", "float8_e5m2", "uint8"):
        setattr(torch, name, _Dtype(name))
    torch.float4_e2m1fn_x2 = _Dtype("float4_e2m1fn_x2")  # present since torch 2.8
    torch.half, torch.float = torch.float16, torch.float32
    torch.finfo = _Finfo

    modules = {"torch": torch, "torch.version": version, "torch.cuda": cuda}
    modules["torch.xpu"], modules["torch.cpu"] = xpu, cpu
    modules["torch.backends"] = backends
    for sub in ("nn", "distributed", "library", "profiler", "utils", "utils._contextlib"):
        module = placeholder_module(f"torch.{sub}")
        modules[f"torch.{sub}"] = module
        if "." not in sub:
            setattr(torch, sub, module)
    return modules
