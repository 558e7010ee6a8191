"""The fix search's moves of the flags that choose one part's kernels after start-up: the
draft model's backend (`--speculative-draft-attention-backend`), where the draft's build
fails, and the multimodal encoder's (`--mm-attention-backend`), where its default kernel
fails the first forward pass. Each move is checked like any other before it is offered
(`compat.guard.suggest`)."""

from __future__ import annotations

from collections.abc import Iterable

from compat.engine.kernels import KernelPath
from compat.guard.build_words import DRAFT_FLAG
from compat.guard.moves import Move
from compat.guard.report import Report
from compat.inputs.flags import MM_ATTENTION_BACKEND
from compat.inputs.sub_backend_checks import spelling as flag_spelling


def draft_moves(report: Report, order: list[str]) -> Iterable[Move]:
    """Where the draft model's build fails (a finding that names the draft's flag): the
    draft on the target's backends (the flag dropped, where it is set), then
    `--speculative-draft-attention-backend NAME` for each backend the release's draft
    factory builds, in SGLang's preference; the guard checks each before it is offered."""
    if not any(DRAFT_FLAG in finding.flags for finding in report.errors):
        return
    current = report.config.speculative_draft_attention_backend
    if current is not None:
        yield Move(
            "draft",
            0,
            (("speculative_draft_attention_backend", None),),
            (),
            (DRAFT_FLAG,),
            "let the draft model inherit the target's backends",
        )
    draft = report.config.parsed.release.build.draft
    variants = frozenset() if draft is None else draft.backends
    for rank, name in enumerate(order, start=1):
        if name in variants and name != current:
            yield Move(
                "draft",
                rank,
                (("speculative_draft_attention_backend", name),),
                ((DRAFT_FLAG, name),),
                (),
                f"run the draft model on {name}",
                backend=name,
            )


def mm_moves(report: Report) -> Iterable[Move]:
    """Where the multimodal encoder's default kernel fails the first forward pass: the
    encoder backend SGLang's default picks on the other GPUs, set with its own flag."""
    if not any(f.rule == KernelPath.VISION_FA4.rule for f in report.errors):
        return
    config = report.config
    release = config.parsed.release
    for limit in release.kernels.limits:
        fallback = limit.fallback
        accepted = release.sub_choices.get(MM_ATTENTION_BACKEND.field, ())
        if limit.path is KernelPath.VISION_FA4 and fallback in accepted:
            yield Move(
                "mm",
                0,
                (("mm_attention_backend", fallback),),
                ((flag_spelling(MM_ATTENTION_BACKEND, release.release), fallback),),
                (),
                f"run the multimodal encoder on {fallback}",
            )
