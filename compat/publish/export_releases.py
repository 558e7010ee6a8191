"""The export's `releases` and `defaults`: what each modelled SGLang release accepts and picks.

Unlike the rest of the export these come from the releases' start-up code
(`compat.releases`), not from the matrix, so they need no evidence index.
"""

from __future__ import annotations

from compat.engine.rules import ReleaseRules
from compat.publish import changes_text as release_text
from compat.publish.export_shapes import DefaultBranchJson, StartupJson
from compat.releases import RELEASES


def default_branches(rules: ReleaseRules) -> list[DefaultBranchJson]:
    """The release's default decision, branch by branch (the first that holds wins)."""
    return [
        {
            "backend": branch.backend,
            "attention_arch": None if branch.arch is None else branch.arch.value,
            "platform": None if branch.platform is None else branch.platform.value,
            "gpu": None
            if branch.gate is None
            else {
                "name": branch.gate.name,
                "majors": sorted(branch.gate.majors),
                "min_cuda": list(branch.gate.min_cuda),
            },
            "no_spec_or_topk_one": branch.needs_no_spec_or_topk_one,
            "topk_given_when_speculative": branch.needs_topk_when_speculative,
            "architectures": None if branch.architectures is None else sorted(branch.architectures),
            "kv_heads": None if branch.kv_heads is None else sorted(branch.kv_heads),
        }
        for branch in rules.defaults
    ]


def release(name: str) -> StartupJson:
    """What a release accepts, how it picks a backend, and what changed in it."""
    rules = RELEASES[name]
    news = release_text.news(name)
    return {
        "backends": list(rules.backend_choices),
        "kv_cache_dtypes": list(rules.kv_choices),
        "speculative_algorithms": list(rules.algorithm_choices),
        "same_as": release_text.same_as(name),
        "defaults": default_branches(rules),
        "model_overrides": [
            {
                "backend": choice.value,
                "architectures": sorted(rule.architectures),
                "sparse_attention_only": rule.sparse is True,
                "gpu": None if choice.on is None else choice.on.label,
            }
            for rule in rules.model_rules
            for choice in rule.defaults
        ],
        "changes": [
            {"summary": change.summary, "evidence": change.evidence.source}
            for change in news.changes
        ],
    }
