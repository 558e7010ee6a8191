"""The AttentionConfig fields of one combination of the finder's menu values, worked out
here independently of compat.publish.finder's own mapping, for the tests that hold the
finder's data (tests/publish/test_finder.py) and the page in Chromium (test_browser*.py) to
check(): a named model's are those of `AttentionConfig.from_known_model` (what `compat
check --model NAME` judges)."""

import dataclasses
from typing import Any

from compat import AttentionConfig
from compat.inputs.config import speculation_with_topk
from compat.inputs.gpus import find_gpu


def menu_fields(values: dict[str, str], release: str) -> dict[str, Any]:
    """`values`: an option value per axis id (model, gpu, kv_cache_dtype, page_size, topk)."""
    fields: dict[str, Any] = {"sglang_version": release}
    if values["model"] in ("mha", "mla"):
        fields["attention_arch"] = values["model"]
    else:
        known = AttentionConfig.from_known_model(values["model"], sglang_version=release)
        fields |= {  # what the model sets (a field at its default is the test's to set)
            f.name: getattr(known, f.name)
            for f in dataclasses.fields(known)
            if f.init and getattr(known, f.name) != f.default
        }
    fields["kv_cache_dtype"] = values["kv_cache_dtype"]
    gpu = find_gpu(values["gpu"].replace("-", " "))
    if gpu is None:  # a platform without a named GPU (its option value is the platform)
        fields["platform"] = values["gpu"]
    else:
        fields["platform"] = gpu.platform.value
        if gpu.capability is not None:
            fields["compute_capability"] = gpu.capability
    if values["page_size"]:
        fields["page_size"] = int(values["page_size"])
    if values["topk"]:
        # SGLang takes a topk only with the number of steps and draft tokens.
        fields.update(speculation_with_topk(int(values["topk"])))
    return fields


def default_launch_passes(values: dict[str, str], release: str) -> bool:
    """SGLang's default launch for the menus' `values` (no backend flag), judged by check()
    afresh: it picks a backend, and each backend it picks is compatible on its own row."""
    from compat import check

    fields = menu_fields(values, release)
    resolved = check(AttentionConfig(**fields)).resolved
    picked = {resolved.prefill_backend, resolved.decode_backend} - {None}
    reports = [check(AttentionConfig(attention_backend=name, **fields)) for name in picked]
    return bool(picked) and all(r.ok and not r.warnings for r in reports)
