"""The model families SGLang special-cases at start-up, as the release files build them.

0.5.7 states each branch in full (`v0_5_7.py` builds its rules from here); later releases
change them with the update helpers below, each change with where it was read. The
machines are SGLang's own tests (`is_sm100_supported()`, `is_hip()`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from compat.engine.model_rules import MachineChoice, MachinePage, MambaCache, ModelRule
from compat.engine.rules import AB, ANY_FLAG, DB, PB, RUNS_PREFILL, Machine
from compat.releases.shared import BLACKWELL, HOPPER, SM100, dsa_auto_kv
from compat.vocab.terms import Platform

if TYPE_CHECKING:
    from compat.engine.launch import Launch

SERVER_ARGS = "server_args.py"
ADJUSTMENTS = "ServerArgs._handle_model_specific_adjustments"
IN_SERVER_ARGS = f"{SERVER_ARGS}, {ADJUSTMENTS}"

# SGLang's machine tests, as its model branches make them.
ON_SM100 = Machine("SM100", gate=SM100)
ON_SM90 = Machine("SM90", gate=HOPPER)
ON_ROCM = Machine("ROCm", platform=Platform.ROCM)
ON_XPU = Machine("XPU", platform=Platform.XPU)
ON_XPU_DEVICE = Machine("--device xpu", device="xpu")
ON_AMX_CPU = Machine("a CPU with AMX", platform=Platform.CPU)
ON_CUDA_SM80 = Machine("CUDA sm80+", min_major=8)
ON_NPU = Machine("NPU", platform=Platform.NPU)
ON_BLACKWELL = Machine("Blackwell", gate=BLACKWELL)
ON_CUDA = Machine("CUDA", platform=Platform.CUDA)
ON_CPU = Machine("CPU", platform=Platform.CPU)
ON_ROCM_MXFP = Machine("ROCm gfx95x", platform=Platform.ROCM, min_capability=(9, 5))

DEEPSEEK_FAMILY = frozenset(
    {"DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"}
)
LLAMA4 = frozenset({"Llama4ForConditionalGeneration", "Llama4ForCausalLM"})
EXAONE4 = frozenset({"Exaone4ForCausalLM", "ExaoneMoEForCausalLM"})


def choices(*pairs: tuple[str, Machine | None]) -> tuple[MachineChoice, ...]:
    return tuple(MachineChoice(backend, on) for backend, on in pairs)


def dsa(backend: str) -> ModelRule:
    """DeepSeek sparse attention (DSA) models of the DeepSeek family (0.5.7's form)."""
    return ModelRule(
        "dsa-backend", "DeepSeek DSA", DEEPSEEK_FAMILY, IN_SERVER_ARGS, sparse=True,
        gpu_runtime=True, defaults=choices((backend, None)),
        pages=(MachinePage(None, ON_NPU), MachinePage(64)),
        kv_dtypes=frozenset({"bfloat16", "fp8_e4m3"}), kv_aliases={"bf16": "bfloat16"},
        auto_kv_dtype=dsa_auto_kv, forces_dp_attention=True,
    )  # fmt: skip


DEEPSEEK = ModelRule(
    "deepseek-backend", "DeepseekV3ForCausalLM", DEEPSEEK_FAMILY, IN_SERVER_ARGS, sparse=False,
    defaults=choices(("trtllm_mla", ON_SM100)),
)  # fmt: skip
GPT_OSS = ModelRule(
    "gpt-oss-backends", "GptOssForCausalLM", frozenset({"GptOssForCausalLM"}), IN_SERVER_ARGS,
    defaults=choices(("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("triton", None)),
    allowed=("triton", "trtllm_mha", "fa3", "fa4"),
)  # fmt: skip
LLAMA4_RULE = ModelRule(
    "llama4-backends", "Llama4", LLAMA4, IN_SERVER_ARGS, substring="Llama4",
    skip_devices=frozenset({"cpu"}),
    defaults=choices(("trtllm_mha", ON_SM100), ("fa3", ON_SM90), ("aiter", ON_ROCM),
                     ("intel_xpu", ON_XPU_DEVICE), ("triton", None)),
    default_unless=frozenset({AB}), allowed=("fa3", "aiter", "triton", "trtllm_mha", "intel_xpu"),
    checks=frozenset({AB}),
)  # fmt: skip
OLMO2 = ModelRule(
    "olmo2-backend", "Olmo2ForCausalLM", frozenset({"Olmo2ForCausalLM"}), IN_SERVER_ARGS,
    defaults=choices(("trtllm_mha", ON_SM100), ("fa3", ON_CUDA_SM80), ("triton", None)),
    default_unless=frozenset({AB}), refused=("flashinfer",),
)  # fmt: skip
EXAONE4_RULE = ModelRule(
    "exaone4-backends", "Exaone4ForCausalLM", EXAONE4, IN_SERVER_ARGS,
    allowed=("fa3", "triton", "trtllm_mha"), checks=frozenset({AB}),
)  # fmt: skip
LFM2 = ModelRule(
    "lfm2-backend", "Lfm2ForCausalLM", frozenset({"Lfm2ForCausalLM"}), IN_SERVER_ARGS,
    defaults=choices(("flashinfer", ON_SM100)), default_unless=frozenset({AB}),
    refused=("triton",), mamba=MambaCache.NO_BUFFER,
)  # fmt: skip


QWEN3_NEXT = ModelRule(
    "qwen3-next-backend", "Qwen3NextForCausalLM", frozenset({"Qwen3NextForCausalLM"}),
    IN_SERVER_ARGS, defaults=choices(("triton", ON_SM100)), default_unless=frozenset({AB}),
    mamba=MambaCache.EXTRA_BUFFER,
)  # fmt: skip
NEMOTRON_H = ModelRule(
    "nemotron-h-backend", "NemotronHForCausalLM", frozenset({"NemotronHForCausalLM"}),
    IN_SERVER_ARGS, defaults=choices(("flashinfer", ON_SM100)), default_unless=frozenset({AB}),
    refused=("triton",), mamba=MambaCache.NO_BUFFER,
)  # fmt: skip
FALCON_H1 = ModelRule(
    "falcon-h1-backend", "FalconH1ForCausalLM",
    frozenset({"FalconH1ForCausalLM", "JetNemotronForCausalLM", "JetVLMForConditionalGeneration"}),
    IN_SERVER_ARGS, defaults=choices(("triton", ON_SM100)), default_unless=frozenset({AB}),
    mamba=MambaCache.NO_BUFFER,
)  # fmt: skip
KIMI_LINEAR = ModelRule(
    "kimi-linear-cache", "KimiLinearForCausalLM", frozenset({"KimiLinearForCausalLM"}),
    IN_SERVER_ARGS, mamba=MambaCache.NONE,
)  # fmt: skip


# -- updates: functions of the previous release's model rules ---------------------------------

Rules = tuple[ModelRule, ...]


def changed(rule_id: str, **fields: Any) -> Callable[[Rules], Rules]:
    """One rule (or a family's rules sharing an id prefix) with some fields replaced."""
    return lambda before: tuple(replace(r, **fields) if r.rule == rule_id else r for r in before)


def extended(rule_id: str, **lists: Iterable[Any]) -> Callable[[Rules], Rules]:
    """One rule with names appended to its tuples and set fields (`allowed=("ascend",)`)."""

    def change(before: Rules) -> Rules:
        out = []
        for rule in before:
            if rule.rule == rule_id:
                fields: dict[str, Any] = {}
                for name, more in lists.items():
                    current = getattr(rule, name)
                    fields[name] = (
                        current | frozenset(more)
                        if isinstance(current, frozenset)
                        else (*current, *(m for m in more if m not in current))
                    )
                rule = replace(rule, **fields)
            out.append(rule)
        return tuple(out)

    return change


def added(rule: ModelRule) -> Callable[[Rules], Rules]:
    """A new model branch, last (or in place of one with the same id)."""
    return lambda before: (*(r for r in before if r.rule != rule.rule), rule)


def removed(rule_id: str) -> Callable[[Rules], Rules]:
    return lambda before: tuple(r for r in before if r.rule != rule_id)


def moved(source: str, *rule_ids: str) -> Callable[[Rules], Rules]:
    """Rules now written elsewhere (every rule when no id is named)."""
    return lambda before: tuple(
        replace(r, source=source) if not rule_ids or r.rule in rule_ids else r for r in before
    )


def chained(*updates: Callable[[Rules], Rules]) -> Callable[[Rules], Rules]:
    """Several updates of the model rules in one change, in order."""

    def change(before: Rules) -> Rules:
        for update in updates:
            before = update(before)
        return before

    return change


def with_family(*names: str) -> Callable[[Rules], Rules]:
    """The DeepSeek family's branches (DSA and not), with more architectures."""
    return lambda before: tuple(
        replace(r, architectures=r.architectures | set(names))
        if r.rule in ("dsa-backend", "deepseek-backend")
        else r
        for r in before
    )


# Where the model branches live from 0.5.15 (checks) and 0.5.19 (checks and declarations).
OVERRIDES_FILE = "arg_groups/overrides.py"
MODEL_HOOK = "arg_groups/model_hook.py, handle_model_specific_adjustments"
WHISPER = frozenset({"WhisperForConditionalGeneration"})


# Gemma 4 (0.5.11+): its own default backend, from 0.5.13 a list of the backends it runs.
GEMMA4 = frozenset(
    {"Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration"}
)
GEMMA4_RULE = ModelRule(
    "gemma4-backend", "Gemma4", frozenset({"Gemma4ForConditionalGeneration"}), IN_SERVER_ARGS,
    defaults=choices(("triton", None)),
)  # fmt: skip
GEMMA4_LISTED = changed(
    "gemma4-backend", architectures=GEMMA4,
    defaults=choices(("trtllm_mha", ON_SM100), ("triton", None)),
    # Unset flags, or only a phase flag: `--attention-backend` takes the default.
    default_unless=frozenset({AB}), allowed=("trtllm_mha", "triton", "intel_xpu"),
)  # fmt: skip
DIFFUSION_GEMMA = ModelRule(
    "diffusion-gemma-backend", "DiffusionGemmaForBlockDiffusion",
    frozenset({"DiffusionGemmaForBlockDiffusion"}), MODEL_HOOK,
    defaults=choices(("triton", None)), default_unless=frozenset({AB}),
)  # fmt: skip
MOSS_VL = ModelRule(
    "moss-vl-prefill", "MossVLForConditionalGeneration",
    frozenset({"MossVLForConditionalGeneration"}), IN_SERVER_ARGS,
    defaults=choices(("flashinfer", None)), default_fields=(PB,), allowed=("flashinfer",),
    checks=frozenset({RUNS_PREFILL}),
)  # fmt: skip
MINICPM_V4_6 = ModelRule(
    "minicpm-v4-6-backend", "MiniCPMV4_6ForConditionalGeneration",
    frozenset({"MiniCPMV4_6ForConditionalGeneration"}), IN_SERVER_ARGS,
    defaults=choices(("triton", ON_SM100)), default_unless=frozenset({AB}),
    mamba=MambaCache.EXTRA_BUFFER,
)  # fmt: skip
BAILING_V2_5 = ModelRule(
    "bailing-v2-5-cache", "BailingMoeV2_5ForCausalLM", frozenset({"BailingMoeV2_5ForCausalLM"}),
    IN_SERVER_ARGS, mamba=MambaCache.EXTRA_BUFFER,
)  # fmt: skip


def split(
    rule_id: str, new_id: str, names: frozenset[str], **fields: Any
) -> Callable[[Rules], Rules]:
    """Some architectures of a rule now their own branch: a copy of it (with `fields`
    replaced) for `names`, placed after it, and the rule without them."""

    def change(before: Rules) -> Rules:
        out: list[ModelRule] = []
        for rule in before:
            if rule.rule == rule_id:
                out.append(replace(rule, architectures=rule.architectures - names))
                out.append(replace(rule, rule=new_id, model=min(names), architectures=names,
                                   **fields))  # fmt: skip
            else:
                out.append(rule)
        return tuple(out)

    return change


MINIMAX_M3 = ModelRule(
    "minimax-m3-backend", "MiniMaxM3Sparse",
    frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"}),
    f"{OVERRIDES_FILE}, _minimax_m3_overrides",
    defaults=choices(("triton", ON_ROCM), ("fa4", ON_SM100), ("fa3", ON_SM90)),
    # The sparse block attention's page: 128 while unset, for the backends that run it.
    pages=(MachinePage(None, ON_ROCM),
           MachinePage(128, ON_SM100, backends=frozenset({"fa4"}), unset_only=True),
           MachinePage(128, ON_SM90, backends=frozenset({"fa3"}), unset_only=True)),
)  # fmt: skip
IQUEST_Q1 = ModelRule(
    "iquest-q1-backend", "IQuestQ1", frozenset({"IQuestQ1ForCausalLM", "IQuestQ1MTP"}),
    "arg_groups/model_overrides/iquest_q1.py, _iquest_q1_overrides",
    # Every flag set must be fa3; the unset ones (all, or the phases) become fa3.
    defaults=choices(("fa3", None)), default_unless=frozenset({AB}), allowed=("fa3",),
    checks=ANY_FLAG, check_before_default=True,
)  # fmt: skip
KIMI_K3 = ModelRule(
    "kimi-k3-backend", "KimiK3ForConditionalGeneration",
    frozenset({"KimiK3ForConditionalGeneration"}), f"{OVERRIDES_FILE}, _kimi_k3_overrides",
    # Both phase flags: the default decision then takes them (prefill == decode).
    defaults=choices(("trtllm_mla", ON_SM100)), default_fields=(PB, DB),
)  # fmt: skip


def fp8_kv(launch: Launch) -> str:
    """DeepSeek V4's KV dtype when `auto`: FP8 (e4m3) on every machine."""
    return "fp8_e4m3"


# DeepSeek V4 (0.5.12+): dsv4 and page 256 whatever the flags (`--attention-backend` is
# overwritten, so no list check), an FP8 KV cache only, speculation as EAGLE at topk 1.
DSV4_HOOK = "arg_groups/deepseek_v4_hook.py, apply_deepseek_v4_defaults"
DSV4_OVERRIDES = "arg_groups/model_overrides/deepseek_v4.py, _deepseek_v4_overrides"
DEEPSEEK_V4 = ModelRule(
    "deepseek-v4-backend", "DeepseekV4ForCausalLM", frozenset({"DeepseekV4ForCausalLM"}),
    DSV4_HOOK, defaults=choices(("dsv4", None)), default_unless=frozenset(),
    pages=(MachinePage(256),), kv_dtypes=frozenset({"fp8_e4m3"}), auto_kv_dtype=fp8_kv,
    speculation="EAGLE",
)  # fmt: skip
