"""Every backend a message points to passes the part of the check that message is about.

A finding that lists backends (SGLang's "runs prefill only on ...", a model's allowed list,
the page's "backends with ✅: ...") points the reader at them. Over the whole option space
of a sample of releases (model architectures x GPUs x KV dtypes x backends, with and
without paged speculation), each pointer is followed: the launch is run again with that
backend in the phases the finding is about, and the same rule must not fire for it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest

from compat import AttentionConfig, check
from compat.guard.fit import NOWHERE
from compat.guard.report import Finding, Report
from compat.inputs.config import InvalidConfigError
from compat.inputs.gpus import GPUS
from compat.releases import BASELINE, NEWEST, RELEASE_NAMES, RELEASES
from compat.vocab.terms import Phase

# The first, a middle and the newest release: each changed the lists the messages name.
SAMPLE = (BASELINE, RELEASE_NAMES[len(RELEASE_NAMES) // 2], NEWEST)
# An MHA model, an MHA model with its own backend list, an MLA model.
MODELS = ("LlamaForCausalLM", "GptOssForCausalLM", "DeepseekV3ForCausalLM")
SPECULATION: tuple[dict[str, Any], ...] = (
    {},
    {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 2, "page_size": 16,
     "speculative_num_steps": 3, "speculative_num_draft_tokens": 4},
)  # fmt: skip


def _machines() -> tuple[dict[str, Any], ...]:
    """Each machine of the GPU table once (an H200 judges as an H100)."""
    machines: dict[tuple[object, ...], dict[str, Any]] = {}
    for gpu in GPUS:
        where: dict[str, Any] = {"platform": gpu.platform.value}
        if gpu.capability is not None:
            where["compute_capability"] = (gpu.capability.major, gpu.capability.minor)
        machines.setdefault(tuple(where.values()), where)
    return tuple(machines.values())


MACHINES = _machines()
# What a backend must pass to run at all: a pointer to one that cannot is no advice.
RUNS_HERE = frozenset({"arch-refused", "platform-unsupported", "compute-capability"})


def _space(release: str) -> Iterator[AttentionConfig]:
    rules = RELEASES[release]
    for model, gpu, dtype, backend, spec in itertools.product(
        MODELS, MACHINES, rules.kv_choices, rules.backend_choices, SPECULATION
    ):
        try:
            yield AttentionConfig(
                sglang_version=release,
                model_architecture=model,
                attention_backend=backend,
                kv_cache_dtype=dtype,
                **gpu,
                **spec,
            )
        except InvalidConfigError:
            continue  # a model this release does not know, or a flag it refuses as input


def _pointers(finding: Finding, names: frozenset[str]) -> tuple[str, ...]:
    """The backends a finding's message points to: the backends it names, less the one it
    is about and those its "(and ... on other GPUs)" clause names as not for this machine."""
    if NOWHERE in finding.message:
        return ()  # it names backends only to say that none runs here
    text = _ELSEWHERE.sub("", finding.message)
    named = dict.fromkeys(w for w in _WORD.findall(text) if w in names and w != finding.backend)
    return tuple(named)


_WORD = re.compile(r"[a-z0-9_]+")
_ELSEWHERE = re.compile(r" \(and [^)]*\)")


def _phases(finding: Finding) -> tuple[Phase, ...]:
    """The phases a finding is about: its own, else those its flags name."""
    if finding.phases:
        return finding.phases
    prefill = Phase.PREFILL.flag in finding.flags
    decode = Phase.DECODE.flag in finding.flags
    if prefill and not decode:
        return (Phase.PREFILL,)
    if decode and not prefill:
        return (Phase.DECODE,)
    return (Phase.PREFILL, Phase.DECODE)


def _followed(config: AttentionConfig, phases: tuple[Phase, ...], backend: str) -> Report:
    if len(phases) == 2:
        changes = {"attention_backend": backend}
    else:
        changes = {f"{phases[0].value}_attention_backend": backend}
    fields = {**_fields(config), **changes}
    return check(AttentionConfig(**fields))


def _fields(config: AttentionConfig) -> dict[str, Any]:
    names = ("sglang_version", "model_architecture", "attention_backend", "kv_cache_dtype",
             "platform", "compute_capability", "speculative_algorithm",
             "speculative_eagle_topk", "page_size", "speculative_num_steps",
             "speculative_num_draft_tokens")  # fmt: skip
    return {name: getattr(config, name) for name in names if getattr(config, name) is not None}


@pytest.mark.parametrize("release", SAMPLE)
def test_every_backend_a_message_points_to_passes_that_part(release: str) -> None:
    names = frozenset(RELEASES[release].backend_choices)
    followed = pointed = 0
    broken: list[str] = []
    seen: set[tuple[object, ...]] = set()
    for config in _space(release):
        report = check(config)
        for finding in report.errors:
            phases = _phases(finding)
            for backend in _pointers(finding, names):
                key = (finding.rule, finding.message, backend, phases, config.parsed.replay_key)
                if key in seen:
                    continue
                seen.add(key)
                pointed += 1
                after = _followed(config, phases, backend)
                followed += 1
                again = [
                    f
                    for f in after.errors
                    if f.backend == backend
                    and (f.rule == finding.rule or f.rule.removeprefix("startup-") in RUNS_HERE)
                ]
                if again:
                    broken.append(
                        f"{config}: [{finding.rule}] {finding.message} -> {backend}: "
                        f"{again[0].message}"
                    )
    assert broken == [], f"{len(broken)} pointers fail: {broken[:5]}"
    assert followed == pointed > 100  # the space does hold messages that point
