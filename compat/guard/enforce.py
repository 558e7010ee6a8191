"""`enforce()`: the guard inside an engine, reading SGLang's own ServerArgs at start-up."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from compat.guard.judge import judge
from compat.guard.policy import Policy
from compat.guard.report import IncompatibleConfigError, Report
from compat.inputs.assemble import LaunchRequest, assemble
from compat.inputs.checks import InputProblem, InvalidConfigError
from compat.inputs.flags import FLAG_FIELDS, SUB_BACKEND_FLAGS, flag_field
from compat.inputs.installed import installed_version


def enforce(
    server_args: Any,
    *,
    attention_arch: str | None = None,
    platform: str | None = None,
    compute_capability: tuple[int, int] | str | None = None,
    sliding_window: bool = False,
    multimodal: bool = False,
    sglang_version: str | None = None,
    parity: bool = False,
    model_architecture: str | None = None,
    kv_heads: int | None = None,
    log: bool = True,
    draft_attention_arch: str | None = None,
) -> Report:
    """Check SGLang's ServerArgs (duck-typed) at start-up; raise if the model would not run.

    Call it after SGLang resolved its arguments (after `ServerArgs.__post_init__`). The
    model's architecture, name and KV heads are read from `server_args.model_config` when
    SGLang has built it; `attention_arch`, `model_architecture` and `kv_heads` override.
    The speculative draft model's attention is read as `compat check` reads a launch's:
    from the config of `speculative_draft_model_path` (a local directory, the offline
    Hugging Face cache, a checkpoint the package knows), or, for a draft built from the
    target's own checkpoint, as the release renames it; `draft_attention_arch` overrides
    (an EAGLE3 draft is MHA even for an MLA model).
    Platform and compute capability are detected with torch when not given. The
    variables SGLang's start-up reads are read from this process's environment, and the
    kernel packages' versions it reads (Triton, for DSA on ROCm) from the installed
    distributions. Raises
    IncompatibleConfigError when the page documents the launch as unsupported, or, with
    `parity=True`, only when SGLang's own code fails it (it refuses at start-up, or
    fails building the backends after the weights load). Warnings are logged on
    the `compat` logger (each line naming attention-compat; `log=False` leaves the wording
    to the caller, as the SGLang plugin does to speak once per launch); a logging handler
    that raises is ignored. `server_args` is read by attribute, or by key when it is a mapping.
    Every refusal is a ValueError (see the README's error contract): IncompatibleConfigError,
    InvalidConfigError (a bad flag value, or no architecture known for the model),
    PlatformDetectionError. A `server_args`
    that cannot hold flags is a TypeError.
    """
    server_args = _flag_holder(server_args)
    model = _model_facts(server_args)
    arch = attention_arch or model.get("attention_arch")
    if arch is None:
        raise InvalidConfigError(
            [
                InputProblem(
                    "attention_arch",
                    None,
                    "the model's attention architecture is unknown: pass enforce(..., "
                    "attention_arch='mha' or 'mla'), or call it after SGLang built "
                    "server_args.model_config",
                    ("mha", "mla"),
                )
            ]
        )
    assembled = assemble(
        LaunchRequest(
            flags=_server_args_fields(server_args),
            model={
                "attention_arch": arch,
                "sliding_window": sliding_window,
                "multimodal": multimodal,
                "model_architecture": model_architecture or model.get("model_architecture"),
                "kv_heads": kv_heads or model.get("kv_heads"),
                "checkpoint_quantization": model.get("checkpoint_quantization"),
                "draft_attention_arch": draft_attention_arch,
            },
            platform=platform,
            compute_capability=compute_capability,
            sglang_version=sglang_version,
            # The checkpoints SGLang loads: the draft's decides the draft's backends.
            model_path=_text(getattr(server_args, "model_path", None)),
            draft_model_path=_text(getattr(server_args, "speculative_draft_model_path", None)),
            # SGLang reads its variables from the process it runs in: this one.
            process_environment=os.environ,
            # And the kernel packages installed beside it: read only where the release's
            # start-up reads one on this machine (Triton, DSA on ROCm).
            installed_version=installed_version,
        )
    )
    report = judge(assembled)
    if log:
        _log(report)
    if not (Policy.PARITY if parity else Policy.DOCUMENTED).accepts(report):
        raise IncompatibleConfigError(report, detected=assembled.detected is not None)
    return report


def _log(report: Report) -> None:
    """Warnings and notes on the `compat` logger, naming attention-compat (an engine's log
    format may drop logger names). A handler that raises never turns a warning into a
    failed start-up."""
    import logging  # enforce() runs once per process; check() never logs

    logger = logging.getLogger("compat")
    findings = [(logging.WARNING, f) for f in report.warnings]
    findings += [(logging.INFO, f) for f in report.infos]
    for level, finding in findings:
        try:
            logger.log(level, "attention-compat: [%s] %s", finding.rule, finding.message)
        except Exception:  # the record is lost; the launch goes on
            continue


def _server_args_fields(server_args: Any) -> dict[str, Any]:
    """The flags enforce() reads: the resolved values where SGLang keeps them apart.

    Up to SGLang 0.5.18 the ServerArgs fields hold the resolved values after its post-init;
    from 0.5.19 they keep the raw flags, and `resolved_dict()` answers with what
    `resolve_once()` decided. ServerArgs names its fields as AttentionConfig does.
    """
    if getattr(server_args, "_resolution_finished", False) and callable(
        getattr(server_args, "resolved_dict", None)
    ):
        resolved = server_args.resolved_dict()
        return {name: resolved.get(name) for name in FLAG_FIELDS}
    fields = {name: getattr(server_args, name, None) for name in FLAG_FIELDS}
    # Up to 0.5.12 the DSA sub-backends are ServerArgs fields of their older names.
    for name, older in _OLDER_FIELDS.items():
        if fields[name] is None:
            fields[name] = getattr(server_args, older, None)
    return fields


_OLDER_FIELDS = {
    flag.field: flag_field(alias) for flag in SUB_BACKEND_FLAGS for alias in flag.aliases
}
"""The fields older releases' ServerArgs name the sub-backend flags by (`nsa_prefill_backend`)."""


def _model_facts(server_args: Any) -> dict[str, Any]:
    """What SGLang's own ModelConfig says of the model, when the ServerArgs holds one.

    Up to 0.5.18 it is memoised as `model_config`; 0.5.19+ keep it in `_model_config`.
    """
    model_config = getattr(server_args, "model_config", None)
    if model_config is None:
        model_config = getattr(server_args, "_model_config", None)
    if model_config is None:
        return {}
    facts: dict[str, Any] = {}
    arch = getattr(getattr(model_config, "attention_arch", None), "name", None)
    if isinstance(arch, str) and arch.lower() in ("mha", "mla"):
        facts["attention_arch"] = arch.lower()
    hf_config = getattr(model_config, "hf_config", None)
    names = getattr(hf_config, "architectures", None)
    if isinstance(names, list) and names and isinstance(names[0], str):
        facts["model_architecture"] = names[0]
    try:
        # The model's heads: the guard divides them by `--tp-size` as SGLang does.
        heads = model_config.get_total_num_kv_heads()
    except Exception:  # an older or stubbed ModelConfig: the heads only refine ROCm's default
        heads = None
    if type(heads) is int and heads > 0:
        facts["kv_heads"] = heads
    # No model type: the config SGLang built is one its loader read (reloads applied).
    quantization = getattr(hf_config, "quantization_config", None)
    method = quantization.get("quant_method") if isinstance(quantization, dict) else None
    if isinstance(method, str):
        facts["checkpoint_quantization"] = method
    return facts


def _text(value: Any) -> str | None:
    """A path ServerArgs holds, or None where it holds none (or not a string)."""
    return value if isinstance(value, str) and value else None


def _flag_holder(server_args: Any) -> Any:
    """What enforce() reads flags from as attributes: a mapping is read by key."""
    if isinstance(server_args, Mapping):
        from types import SimpleNamespace

        return SimpleNamespace(**{k: v for k, v in server_args.items() if isinstance(k, str)})
    if server_args is None or isinstance(server_args, (str, bytes, int, float)):
        raise TypeError(
            "enforce() takes SGLang's ServerArgs (or any object or mapping with its attention "
            f"flags), got {type(server_args).__name__}"
        )
    return server_args
