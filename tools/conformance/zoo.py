"""The zoo grid: every zoo model on the four machines, under the flags the main grid never
varies.

For each (machine, model) the launches are:

- the model's plain launch (its card's flags only: SGLang's defaults decide everything);
- one launch per value of each axis below, the others left at their default (so each
  rule shows up on its own);
- a fixed-seed sample of launches that vary several axes at once (so rules meet:
  deterministic inference with a backend, DP attention with a page size, ...).

Axes: attention backend selection (the backends every architecture meets plus the edges
of the model family's whitelist, and two phase pairs), `--enable-deterministic-inference`,
parallelism (`--tp-size 4/8`, `--dp-size 2 --enable-dp-attention` with TP 1 and 4),
`--device` (cpu everywhere, cuda on the GPUs), `--quantization` (fp8, modelopt_fp4, and
mxfp4 for gpt-oss), `--disaggregation-mode prefill/decode`, KV dtype (fp8_e4m3 and the
release's FP4 spelling: fp4_e2m1 up to 0.5.15, nvfp4 from 0.5.16), page size (1, 64) and
speculation (EAGLE topk 1; NEXTN for the models whose cards use it), the sub-backend
flags of the parts a model has (every `--dsa-prefill-backend` and `--dsa-decode-backend`
choice for DeepSeek sparse attention, every `--linear-attn-*` choice for the gated DeltaNet
models, every `--mm-attention-backend` choice for the models with a vision tower), as the
release's own parser lists them and spells them, and for hybrid models the Mamba cache
strategy (`--mamba-scheduler-strategy`, from 0.5.14 spelled `--mamba-radix-cache-strategy`:
extra_buffer and no_buffer). Values a release's
parser does not list are left out of that release's zoo. Models with remote code also get
one launch without `--trust-remote-code`.

The sample is seeded by machine and model only, so releases with the same choices draw
the same launches; each release's zoo is about 130 launches per checkpoint (2,800 in all).
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Iterator

from compat.inputs.zoo import ZOO, ZooModel
from compat.releases import NEWEST, RELEASES
from conformance.grid import backends, kv_dtypes
from conformance.harness import Launch, open_runtime

MACHINES = ("H200", "B200", "MI300X", "CPU-AMX")
MIXED_PER_MODEL = 6  # multi-axis launches per (machine, model)

_EAGLE_TOPK1 = (
    *("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3"),
    *("--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
)
SPECULATION = {"eagle-topk1": _EAGLE_TOPK1, "nextn": ("--speculative-algorithm", "NEXTN")}

# Backends every MHA / MLA model is tried with, then each family's whitelist edges.
_MHA_BACKENDS = ("flashinfer", "fa3", "triton", "trtllm_mha", "aiter", "fa4")
_MLA_BACKENDS = ("flashinfer", "fa3", "triton", "trtllm_mla", "flashmla", "aiter")
FAMILY_BACKENDS: dict[str, tuple[str, ...]] = {
    "gpt-oss": ("intel_amx", "torch_native"),
    "llama4": ("intel_xpu", "flex_attention"),
    "deepseek-v3.2": ("nsa", "dsa", "cutlass_mla"),
    "kimi-k2": ("cutlass_mla",),
    "mllama": ("torch_native",),
    "olmo2": ("torch_native",),
    "exaone4": ("torch_native",),
    "whisper": ("torch_native",),
    "nemotron-h": ("torch_native",),
    "lfm2": ("torch_native",),
}
# Prefill/decode pairs: whitelists that read the resolved phases vs the AB field differ.
PHASE_PAIRS = (("fa3", "flashinfer"), ("flashinfer", "triton"))
_MLA_FAMILIES = frozenset({"deepseek-v3.2", "kimi-k2"})

PARALLEL = {
    "tp4": ("--tp-size", "4"),
    "tp8": ("--tp-size", "8"),
    "dp2-attn": ("--dp-size", "2", "--enable-dp-attention"),
    "tp4-dp2-attn": ("--tp-size", "4", "--dp-size", "2", "--enable-dp-attention"),
}
DISAGGREGATION = ("prefill", "decode")
PAGES = (1, 64)
# The sub-backend flags (their ServerArgs fields) each family's model has a part for.
_DSA = ("dsa_prefill_backend", "dsa_decode_backend")
_LINEAR = ("linear_attn_backend", "linear_attn_prefill_backend", "linear_attn_decode_backend")
_VISION = ("mm_attention_backend",)
_SSM_BF16 = ("--mamba-ssm-dtype", "bfloat16")
SUB_BACKEND_FAMILIES: dict[str, tuple[str, ...]] = {
    "deepseek-v3.2": _DSA,
    "qwen3-next": _LINEAR,
    "qwen2.5-vl": _VISION,
    "gemma3": _VISION,
    "llama4": _VISION,
}


@functools.cache
def _choices(version: str) -> tuple[frozenset[str], tuple[str, ...]]:
    return frozenset(backends(version)), kv_dtypes(version)


@functools.cache
def sub_backend_choices(version: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """field -> (the flag as `version` spells it, its choices), read from its own parser,
    for each sub-backend flag it has."""
    from compat.inputs.flags import SUB_BACKEND_FLAGS
    from conformance.harness import open_runtime

    found = {}
    with open_runtime(version, "CPU-AMX") as runtime:
        for flag in SUB_BACKEND_FLAGS:
            for option in flag.options:
                try:
                    found[flag.field] = (option, runtime.choices(option))
                    break
                except KeyError:
                    continue
    return found


# The Mamba cache strategies tried on hybrid models, under the release's own spelling.
MAMBA_STRATEGIES = ("extra_buffer", "no_buffer")
_STRATEGY_FLAGS = ("--mamba-radix-cache-strategy", "--mamba-scheduler-strategy")


@functools.cache
def strategy_flag(version: str) -> tuple[str, tuple[str, ...]]:
    """The flag that names the Mamba cache strategy in `version`, and what its parser takes."""
    with open_runtime(version, "CPU-AMX") as runtime:
        for flag in _STRATEGY_FLAGS:
            try:
                return flag, runtime.choices(flag)
            except KeyError:
                continue
    raise LookupError(f"sglang {version} has no Mamba cache strategy flag")


def _hybrid(model: ZooModel) -> bool:
    """Whether the newest release's start-up treats the model's Mamba cache."""
    rule = RELEASES[NEWEST].model_rule(model.config["architectures"][0], False, "cuda")
    return rule is not None and rule.mamba is not None


def kv_values(version: str) -> tuple[str, ...]:
    """The KV dtypes the zoo tries on `version`: FP8 and the release's FP4 spelling."""
    accepted = _choices(version)[1]
    fp4 = "nvfp4" if "nvfp4" in accepted else "fp4_e2m1"
    return tuple(kv for kv in ("fp8_e4m3", fp4) if kv in accepted)


def axes(version: str, gpu: str, name: str) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """Each axis of the zoo as (label, flags) values, for one machine and model."""
    model = ZOO[name]
    accepted = _choices(version)[0]
    family_mla = model.family in _MLA_FAMILIES
    names = [*(_MLA_BACKENDS if family_mla else _MHA_BACKENDS)]
    names += [b for b in FAMILY_BACKENDS.get(model.family, ()) if b not in names]
    backend: list[tuple[str, tuple[str, ...]]] = [
        (f"backend={b}", ("--attention-backend", b)) for b in names if b in accepted
    ]
    backend += [
        (
            f"phases={prefill}/{decode}",
            ("--prefill-attention-backend", prefill, "--decode-attention-backend", decode),
        )
        for prefill, decode in PHASE_PAIRS
    ]
    quantization = ["fp8", "modelopt_fp4"] + (["mxfp4"] if model.family == "gpt-oss" else [])
    device = [("device=cpu", ("--device", "cpu"))]
    if gpu != "CPU-AMX":
        device.append(("device=cuda", ("--device", "cuda")))
    # Only hybrid models have the axis: the others' seeded sample stays as it was.
    mamba = {"mamba": _strategies(version)} if _hybrid(model) else {}
    return {
        "backend": backend,
        "deterministic": [("deterministic", ("--enable-deterministic-inference",))],
        "parallel": [(label, flags) for label, flags in PARALLEL.items()],
        "device": device,
        "quantization": [(f"quant={q}", ("--quantization", q)) for q in quantization],
        "disaggregation": [
            (f"disagg={mode}", ("--disaggregation-mode", mode)) for mode in DISAGGREGATION
        ],
        "kv": [(f"kv={kv}", ("--kv-cache-dtype", kv)) for kv in kv_values(version)],
        "page": [(f"page={page}", ("--page-size", str(page))) for page in PAGES],
        "speculation": [(f"spec={s}", SPECULATION[s]) for s in model.speculative],
        "sub": _sub_values(version, model),
        **mamba,
    }


def _sub_values(version: str, model: ZooModel) -> list[tuple[str, tuple[str, ...]]]:
    """One launch per choice of each sub-backend flag the model has a part for."""
    declared = sub_backend_choices(version)
    values = []
    for field in SUB_BACKEND_FAMILIES.get(model.family, ()):
        if field in declared:
            option, choices = declared[field]
            values += [(f"{field}={name}", (option, name)) for name in choices]
            if field in _LINEAR:
                # FlashInfer's linear-attention kernels on SM100+ read the SSM states' dtype.
                values += [
                    (f"{field}={name}+ssm=bfloat16", (option, name, *_SSM_BF16)) for name in choices
                ]
    return values


def _strategies(version: str) -> list[tuple[str, tuple[str, ...]]]:
    flag, accepted = strategy_flag(version)
    chosen = [(f"mamba={s}", (flag, s)) for s in MAMBA_STRATEGIES if s in accepted]
    # What each strategy drops or keeps: paging, and speculation with the radix cache.
    return chosen + [
        (f"{label}+{extra}", (*values, *more))
        for label, values in chosen
        for extra, more in (
            ("page=64", ("--page-size", "64")),
            ("spec", _EAGLE_TOPK1),
            # From 0.5.14 a model's extra_buffer support also reads the linear-attention kernel.
            ("linear=flashinfer", ("--linear-attn-backend", "flashinfer")),
        )
    ]


def _launch_flags(model: ZooModel, chosen: list[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    flags: tuple[str, ...] = model.launch
    for _, values in chosen:
        flags += values
    return flags


def labelled(version: str) -> Iterator[tuple[Launch, str]]:
    """(launch, label) for the whole zoo of `version`, in a fixed order; the label names
    the axis values the launch sets ("plain" for none)."""
    for gpu, name in itertools.product(MACHINES, ZOO):
        yield from _model_launches(version, gpu, name)


def _model_launches(version: str, gpu: str, name: str) -> Iterator[tuple[Launch, str]]:
    model = ZOO[name]
    by_axis = axes(version, gpu, name)
    seen: set[tuple[str, ...]] = set()

    def emit(chosen: list[tuple[str, tuple[str, ...]]]) -> Iterator[tuple[Launch, str]]:
        flags = _launch_flags(model, chosen)
        if flags not in seen:
            seen.add(flags)
            yield Launch(gpu, name, flags), " ".join(label for label, _ in chosen) or "plain"

    yield from emit([])
    for values in by_axis.values():
        for value in values:
            yield from emit([value])
    if model.launch and () not in seen:
        seen.add(())
        yield Launch(gpu, name, ()), "no-trust-remote-code"
    # Several axes at once: 2 to 4 axes, one value each. Seeded without the release.
    rng = random.Random(f"zoo|{gpu}|{name}")
    names = sorted(by_axis)
    drawn = 0
    for _ in range(MIXED_PER_MODEL * 20):
        if drawn == MIXED_PER_MODEL:
            break
        picked = rng.sample(names, rng.randint(2, 4))
        chosen = [rng.choice(by_axis[a]) for a in picked if by_axis[a]]
        before = len(seen)
        yield from emit(chosen)
        drawn += len(seen) > before


def zoo(version: str) -> list[Launch]:
    """The zoo grid of `version`, in a fixed order."""
    return [launch for launch, _ in labelled(version)]
