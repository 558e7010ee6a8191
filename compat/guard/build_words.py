"""The guard's words for where SGLang fails building the backends, after start-up.

The engine predicts the failure (`compat.engine.build`); `finding()` words it, enforced at
the backend build, with the release's registry line as its evidence (or, for the draft
model's backends under speculative decoding, its draft factory's line).
"""

from __future__ import annotations

import msgspec

from compat.engine.build import (
    BUILD_RULE_PREFIX,
    DRAFT_FILE,
    DRAFT_LOOKUP,
    REGISTRY_FILE,
    WRAPPER,
    BuildCheck,
    BuildFailure,
    BuildRules,
)
from compat.guard.report import Enforcement, Finding
from compat.guard.sub_build_words import sub_backend_finding
from compat.inputs.flags import SPECULATIVE_DRAFT_ATTENTION_BACKEND
from compat.vocab.terms import Severity

DRAFT_FLAG = SPECULATIVE_DRAFT_ATTENTION_BACKEND.option


def is_build_finding(finding: Finding) -> bool:
    """Whether `finding` is SGLang's own backend-build failure (not the page's word)."""
    return finding.rule.startswith(BUILD_RULE_PREFIX)


def finding(failure: BuildFailure, release: str) -> Finding:
    """The finding for a backend build that fails in `release`."""
    if failure.sub is not None:
        return sub_backend_finding(failure, failure.sub, release)
    check = failure.check
    flags: tuple[str, ...] = ("--attention-backend",)
    # A draft's failure names the flag that gives the draft a backend of its own.
    if failure.own:
        flags = (DRAFT_FLAG, "--speculative-algorithm")
    elif failure.draft:
        flags = (*flags, "--speculative-algorithm", DRAFT_FLAG)
    elif check is BuildCheck.NO_SPECULATIVE:
        flags = (*flags, "--speculative-algorithm")
    what = f"{failure.backend} for the draft model" if failure.draft else failure.backend
    return Finding(
        check.rule,
        Severity.ERROR,
        f"SGLang {release} starts, then fails building {what} after the weights "
        f"load: {_said(failure)} (sglang {release}, {failure.where}, {failure.function})",
        flags,
        value=failure.backend,
        allowed=tuple(sorted(failure.allowed)),
        backend=failure.backend,
        enforced=Enforcement.BACKEND_BUILD,
        raised_at=f"{failure.where} ({failure.function})",
    )


_REQUIRES = {
    BuildCheck.NEEDS_MLA: "MLA models only",
    BuildCheck.NEEDS_MHA: "non-MLA (MHA) models only",
    BuildCheck.NO_ENCODER_DECODER: "no encoder-decoder (cross-attention) models",
    BuildCheck.NO_SPECULATIVE: "no speculative decoding",
}


def requirement_lines(rules: BuildRules, backend: str, release: str) -> list[str]:
    """What `release`'s registry requires of a launch of `backend`, one line per check."""
    lines = []
    for check in rules.for_backend(backend):
        if check.check is BuildCheck.GPU:
            mha = " or ".join(f"sm{m}x" for m in sorted(check.mha_majors))
            mla = " or ".join(f"sm{m}x" for m in sorted(check.mla_majors))
            what = f"a {mha} GPU for MHA models, {mla} for MLA models (on CUDA)"
        elif check.check is BuildCheck.MODEL_FAMILY:
            what = f"{_family(check.model_types)} only"
        else:
            what = _REQUIRES[check.check]
        lines.append(f"SGLang {release}: {what} ({check.file}:{check.line}, {check.function})")
    draft = rules.draft
    if draft is not None and backend not in draft.backends:
        path = draft.model_path
        # A model with its own draft path never reaches the map (any backend drafts).
        unless = (
            ""
            if path is None
            else f" (unless the draft model has {path.feature.label}: its draft runs on "
            f"{path.backend}'s own backends, {DRAFT_FILE}:{path.decode.line})"
        )
        lines.append(
            f"SGLang {release}: no draft variant, so an EAGLE-family draft model cannot run "
            f"on it, inherited from the target or as {DRAFT_FLAG} ({DRAFT_FILE}:{draft.line}, "
            f"{DRAFT_LOOKUP}){unless}"
        )
    gdn = rules.hybrid_gdn
    if gdn is not None:
        classes = [("Blackwell" if gdn.sm120 is None else "SM100-class Blackwell", gdn.allowed)]
        if gdn.sm120 is not None:
            classes.append(("SM120-class Blackwell", gdn.sm120_allowed))
        refused = [name for name, allowed in classes if backend not in allowed]
        if len(refused) == len(classes) > 1:
            refused = ["Blackwell"]
        if refused:
            lines.append(
                f"SGLang {release}: no hybrid GDN model (Qwen3-Next, Qwen3.5, ...) on "
                f"{' or '.join(refused)} GPUs ({REGISTRY_FILE}:{gdn.line}, {WRAPPER})"
            )
    return lines


def _family(model_types: frozenset[str]) -> str:
    """The models a family backend is built for: MiniCPM's sparse backends read a hybrid
    MiniCPM config (`model_type` minicpm_sala) with sparse attention layers."""
    types = " or ".join(sorted(model_types))
    return f"models of type {types} with sparse attention layers"


def _said(failure: BuildFailure) -> str:
    backend, check = failure.backend, failure.check
    if failure.draft:
        return _said_of_draft(failure)
    if check is BuildCheck.NEEDS_MLA:
        return f"{backend} serves MLA models only"
    if check is BuildCheck.NEEDS_MHA:
        return f"{backend} serves non-MLA (MHA) models only"
    if check is BuildCheck.NO_ENCODER_DECODER:
        return f"{backend} cannot serve encoder-decoder (cross-attention) models"
    if check is BuildCheck.NO_SPECULATIVE:
        return f"{backend} does not support speculative decoding"
    if check is BuildCheck.GPU:
        gpus = " or ".join(f"sm{major}x" for major in sorted(failure.majors))
        return f"{backend} needs a {gpus} GPU for this model"
    if check is BuildCheck.MODEL_FAMILY:
        return f"{backend} is built for {_family(failure.model_types)} only"
    allowed = ", ".join(sorted(failure.allowed))
    return f"hybrid GDN models run only on {allowed} on this Blackwell GPU"


def _said_of_draft(failure: BuildFailure) -> str:
    """The draft's failure: where its backend comes from, then what refuses it (the draft
    factory's map or builder, or the registry, as the draft's model runner builds it)."""
    backend = failure.backend
    source = (
        f"the draft model runs on {backend} ({DRAFT_FLAG})"
        if failure.own
        else f"the draft model inherits the target's {backend}"
    )
    if failure.check is BuildCheck.NO_DRAFT_VARIANT:
        variants = ", ".join(sorted(failure.allowed))
        return (
            f"{source}, which has no draft variant in the speculative draft factory "
            f"(it builds {variants})"
        )
    said = _said(msgspec.structs.replace(failure, draft=False))
    if failure.file == DRAFT_FILE:
        return f"{source}, whose draft variant {said.removeprefix(f'{backend} ')}"
    if said.startswith(f"{backend} "):
        return f"{source}, which {said.removeprefix(f'{backend} ')}"
    return f"{source}: {said}"
