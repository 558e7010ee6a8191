"""The guard's words for what SGLang's start-up code did: one function per event type.

The replay (`compat.engine.startup`) records facts (`compat.engine.events`);
`compat.guard.startup_findings` turns one into the finding the report carries. `said()` is
registered once per event type, so a new start-up rule adds its words here and nowhere else.
"""

from __future__ import annotations

from functools import singledispatch

from compat.engine import events as e
from compat.engine import model_events as m
from compat.engine.startup.sub_backends import SubBackendRefused
from compat.guard.sub_startup_words import sub_refusal_said
from compat.inputs.checks import shown
from compat.vocab.terms import Severity


@singledispatch
def said(event: e.StartupEvent) -> str:
    """What SGLang did, in a few words (after "SGLang X.Y.Z refuses to start: ")."""
    raise TypeError(f"no words for {type(event).__name__}")


@said.register
def _(event: e.DeprecatedBackend) -> str:
    return f"{event.flag} {event.name} is deprecated; it runs as {event.target}"


@said.register
def _(event: e.AliasKvDtype) -> str:
    return f"{event.name} runs with --kv-cache-dtype {event.forced}"


@said.register
def _(event: e.ModelKvDtypes) -> str:
    return f"{event.model} runs only with --kv-cache-dtype {' or '.join(event.dtypes)}"


@said.register
def _(event: e.Nvfp4Prefill) -> str:
    return f"--kv-cache-dtype nvfp4 runs prefill only on {' or '.join(event.backends)}"


@said.register
def _(event: e.Nvfp4Decode) -> str:
    return f"--kv-cache-dtype nvfp4 decodes only on {event.decode}"


@said.register
def _(event: e.Nvfp4NativeGpu) -> str:
    return "native NVFP4 prefill needs SM100"


@said.register
def _(event: e.Nvfp4Disaggregation) -> str:
    return (
        "SM100's native NVFP4 cache on trtllm_mha does not run under --disaggregation-mode "
        f"{event.value} (its block scales do not transfer)"
    )


@said.register
def _(event: e.Nvfp4SpecAlgorithm) -> str:
    return (
        f"SM100's native NVFP4 cache on trtllm_mha runs speculative decoding with "
        f"{' or '.join(map(str, event.allowed))} only, not {event.algorithm}"
    )


@said.register
def _(event: e.Nvfp4NgramBreadth) -> str:
    return (
        f"SM100's native NVFP4 cache on trtllm_mha verifies a linear chain only: NGRAM needs "
        f"--speculative-ngram-max-bfs-breadth {event.required} (its default is {event.breadth})"
    )


@said.register
def _(event: e.Nvfp4DraftBackend) -> str:
    if event.value is None:
        return (
            f"SM100's native NVFP4 cache on trtllm_mha runs the draft model on "
            f"{event.required}: --speculative-draft-attention-backend is set to it"
        )
    return (
        f"SM100's native NVFP4 cache on trtllm_mha runs the draft model on {event.required} "
        f"only (the draft's cache has the same layout), not {event.value}"
    )


@said.register
def _(event: e.Nvfp4Backends) -> str:
    return f"--kv-cache-dtype nvfp4 runs prefill on {event.prefill} and decode on {event.decode}"


@said.register
def _(event: e.NoSpeculation) -> str:
    return f"{event.name} does not run speculative decoding"


@said.register
def _(event: e.GpuGateFailed) -> str:
    return f"{event.backend} needs {event.gate.label}"


@said.register
def _(event: e.DecodeOnly) -> str:
    return f"{event.name} serves only the decode phase"


@said.register
def _(event: e.MlaPrefillRefused) -> str:
    return f"{event.name} cannot run the prefill phase of an MLA model"


@said.register
def _(event: e.PageSnapped) -> str:
    return f"{event.backend} sets the page size to {event.size} (was {event.was})"


@said.register
def _(event: e.KvSpellings) -> str:
    return f"{event.backend} takes --kv-cache-dtype {', '.join(event.spelled)} only (spelled so)"


@said.register
def _(event: e.DtypeFallenBack) -> str:
    return f"--attention-backend {event.backend} becomes {event.replacement}"


@said.register
def _(event: e.PrefillOnly) -> str:
    return (
        f"{event.name} serves only the prefill phase; use --prefill-attention-backend {event.name}"
    )


@said.register
def _(event: e.DualChunkNeeded) -> str:
    return f"a model with a dual-chunk attention config needs --attention-backend {event.needed}"


@said.register
def _(event: e.KvDtypeGpu) -> str:
    return f"--kv-cache-dtype {event.kv_dtype} needs {event.gate.label}"


@said.register
def _(event: e.Kv4OffCuda) -> str:
    return f"--kv-cache-dtype {event.kv_dtype} runs only on CUDA"


@said.register
def _(event: e.Kv4HybridPair) -> str:
    return (
        f"--kv-cache-dtype {event.kv_dtype} with prefill on {event.prefill} "
        f"and decode on {event.decode} may hit rare edge cases"
    )


@said.register
def _(event: e.Kv4Partner) -> str:
    return (
        f"with --kv-cache-dtype {event.kv_dtype} and prefill on {event.prefill}, decode must "
        f"run on {', '.join(event.partners)}"
    )


@said.register
def _(event: e.Kv4Single) -> str:
    return (
        f"--kv-cache-dtype {event.kv_dtype} runs only on {', '.join(event.backends)} for "
        f"{event.arch.label} models"
    )


@said.register
def _(event: e.TopkPaged) -> str:
    return (
        f"speculative topk {event.topk} with page size {event.page_size} runs only on "
        f"{' or '.join(event.backends)} as --attention-backend"
    )


@said.register
def _(event: e.SpecParamsPartial) -> str:
    return (
        "--speculative-eagle-topk or --speculative-num-draft-tokens is set without "
        "--speculative-num-steps (give all three, or none and SGLang chooses them for the model)"
    )


@said.register
def _(event: e.SpecParamsChosen) -> str:
    return (
        f"speculative decoding runs {event.steps} steps, topk {event.topk}, "
        f"{event.draft_tokens} draft tokens, chosen for {event.model}"
    )


@said.register
def _(event: e.TopkOneOnly) -> str:
    return f"{event.name} runs speculative decoding only with topk 1"


@said.register
def _(event: e.NgramOffCuda) -> str:
    return "NGRAM speculative decoding runs only on CUDA"


@said.register
def _(event: e.SpecNotModelled) -> str:
    return (
        f"--speculative-algorithm {event.algorithm} is accepted; its own start-up handler and "
        "draft worker (draft parameters, draft model and draft backend checks) are not "
        "modelled here, so nothing they set or refuse is predicted"
    )


# -- the model -------------------------------------------------------------------------------


@said.register
def _(event: m.ModelTypeUnknown) -> str:
    return (
        f"its config loader cannot read model type {shown(event.model_type)} "
        f"({event.source}); a newer SGLang may know it"
    )


@said.register
def _(event: m.RemoteCodeUntrusted) -> str:
    return (
        f"model type {shown(event.model_type)} is the checkpoint's own code, which loads only "
        "with --trust-remote-code"
    )


@said.register
def _(event: m.ModelReloaded) -> str:
    return (
        f"its transformers cannot read model type {shown(event.model_type)}; it reloads the model "
        f"as {event.architecture} ({event.source})"
    )


@said.register
def _(event: m.QuantizationMismatch) -> str:
    return f"the checkpoint is quantized with {event.checkpoint}, not --quantization {event.given}"


@said.register
def _(event: m.QuantizationUnregistered) -> str:
    return f"quantization {event.method} is registered only on {' or '.join(event.machines)}"


@said.register
def _(event: m.QuantizationOffRocm) -> str:
    return f"quantization {event.method} does not run on ROCm"


@said.register
def _(event: m.GpuRuntimeMissing) -> str:
    return (
        f"its {event.model} branch asks torch.cuda for the GPU, and this machine has none "
        f"({event.source})"
    )


@said.register
def _(event: m.ModelBackendList) -> str:
    return (
        f"it allows only {', '.join(event.backends)} for {event.model}, in {event.where}; "
        f"got {event.value} ({event.source})"
    )


@said.register
def _(event: m.ModelBackendRefused) -> str:
    return f"it refuses {event.backend} for {event.model} ({event.source})"


@said.register
def _(event: m.ModelSpeculation) -> str:
    return (
        f"{event.model} runs speculative decoding only as --speculative-algorithm "
        f"{event.algorithm} with --speculative-eagle-topk 1"
        f"{''.join(f' or as {other}' for other in event.also)} ({event.source})"
    )


@said.register
def _(event: m.ModelPage) -> str:
    was = "unset" if event.was is None else str(event.was)
    return f"{event.model} runs page size {event.size} (was {was}; {event.source})"


@said.register
def _(event: m.AmxFallback) -> str:
    return "intel_amx needs a CPU with AMX; it runs torch_native"


@said.register
def _(event: m.DeterministicBackends) -> str:
    whose = f" with {event.model}" if event.model else ""
    where = f" ({event.source})" if event.source else ""
    return (
        f"deterministic inference{whose} runs only on {', '.join(event.backends)}, "
        f"not {event.value}{where}"
    )


@said.register
def _(event: m.DeterministicDefault) -> str:
    return f"deterministic inference picks --attention-backend {event.chosen}"


@said.register
def _(event: m.DecodeRoundRobin) -> str:
    return (
        "a decode server with --dp-size above 1 needs --prefill-round-robin-balance (and the "
        "prefill server's --load-balance-method round_robin)"
    )


@said.register
def _(event: m.DpAttentionSplit) -> str:
    return (
        f"DP attention needs --tp-size ({event.tp_size}) to be a multiple of --dp-size "
        f"({event.dp_size})"
    )


@said.register
def _(event: m.HybridCachePlatform) -> str:
    return f"the Mamba cache of {event.model} runs only on {' or '.join(event.machines)}"


@said.register
def _(event: m.HybridCacheStrategy) -> str:
    if event.value == "no_buffer":
        return (
            f"the no_buffer Mamba cache of {event.model} needs --disable-overlap-schedule "
            "(or --mamba-radix-cache-strategy auto)"
        )
    return f"{event.model} has no {event.value} Mamba cache strategy (use no_buffer or auto)"


@said.register
def _(event: m.HybridCacheExtraBuffer) -> str:
    if event.flags[0] == "--page-size":
        return (
            f"the extra_buffer Mamba cache of {event.model} needs a page size that divides "
            f"its track interval ({event.interval}), not {event.value}"
        )
    return (
        f"the extra_buffer Mamba cache of {event.model} tracks every {event.interval} tokens: "
        f"at most {event.interval} speculative draft tokens, not {event.value}"
    )


@said.register
def _(event: m.HybridCacheSpeculation) -> str:
    return (
        f"speculative decoding with {event.model} needs --disable-radix-cache "
        "(its Mamba cache strategy keeps no speculative states)"
    )


@said.register
def _(event: m.HybridCachePageOne) -> str:
    if event.severity is Severity.ERROR:
        return f"the no_buffer Mamba cache of {event.model} runs only page size 1"
    return f"the no_buffer Mamba cache of {event.model} sets the page size to 1 (was {event.value})"


@said.register
def _(event: m.HybridCacheBackend) -> str:
    return f"the no_buffer Mamba cache of {event.model} cannot run {event.backend}"


@said.register
def _(event: SubBackendRefused) -> str:
    return sub_refusal_said(event)
