"""SGLang's speculative-decoding handler, replayed: `ServerArgs._handle_speculative_decoding`.

It runs last, after the page size is settled: it fills the EAGLE parameters (or checks
them), fixes NGRAM's breadth, and refuses a topk above 1 on a paged backend that cannot
run it. The other algorithms a release accepts (DFLASH from 0.5.11, FROZEN_KV_MTP from
0.5.12, DSPARK from 0.5.16, UNO from 0.5.20) have handlers of their own that the replay
does not run: their draft parameters, draft-model checks and DFLASH's draft backend
fallback. They skip the EAGLE path's checks, as in SGLang, and the launch is told its
algorithm's start-up is not modelled rather than given a prediction for it.
"""

from __future__ import annotations

from compat.engine.events import (
    NgramOffCuda,
    SpecNotModelled,
    SpecParamsChosen,
    SpecParamsPartial,
    TopkOneOnly,
    TopkPaged,
)
from compat.engine.launch import Launch
from compat.engine.rules import ReleaseRules, SpecParams
from compat.engine.startup.state import ServerArgsFields, StartupLog
from compat.vocab.terms import Platform

_FLAGS = ("--speculative-algorithm", "--speculative-eagle-topk")


def handle_speculative_decoding(
    parsed: Launch, rules: ReleaseRules, model: str, f: ServerArgsFields, log: StartupLog
) -> None:
    """The algorithm's own handler, then the paged topk check on what it left."""
    algorithm = rules.algorithm_aliases.get(f.algorithm or "", f.algorithm)
    f.algorithm = algorithm
    if algorithm is None:
        return
    if algorithm in rules.eagle_family:
        _eagle_family(rules, algorithm, model, f, log)
        paged = rules.topk_paged_eagle
    elif algorithm == rules.ngram:
        _ngram(parsed, rules, f, log)
        paged = rules.topk_paged_ngram
    else:
        log.add(
            # No `allowed`: the algorithm is SGLang's to take; only the replay lacks it.
            SpecNotModelled(flags=_FLAGS[:1], value=algorithm, algorithm=algorithm)
        )
        return
    assert f.page_size is not None
    if f.topk is not None and f.topk > 1 and f.page_size > 1 and f.attention not in paged:
        log.add(
            TopkPaged(
                rule=rules.topk_paged_rule_id,
                flags=(*_FLAGS, "--page-size", "--attention-backend"),
                value=f.attention,
                allowed=paged,
                backend=f.attention,
                topk=f.topk,
                page_size=f.page_size,
                backends=paged,
            )
        )


def _eagle_family(
    rules: ReleaseRules, algorithm: str, model: str, f: ServerArgsFields, log: StartupLog
) -> None:
    """EAGLE's parameters: all three given, or none (chosen for the model); topk-1 checks."""
    if f.steps is None and (f.topk is not None or f.draft_tokens is not None):
        log.add(SpecParamsPartial(flags=("--speculative-num-steps", *_FLAGS[1:])))
        f.topk = f.topk or 1
    elif f.steps is None:
        params = auto_spec_params(rules, algorithm, model)
        f.steps, f.topk, f.draft_tokens = params.steps, params.topk, params.draft_tokens
        log.add(
            SpecParamsChosen(
                flags=("--speculative-num-steps",),
                value=params.topk,
                steps=params.steps,
                topk=params.topk,
                draft_tokens=params.draft_tokens,
                model=model,
            )
        )
    elif f.topk is None:
        f.topk = 1  # never read before SGLang fails on it; the page judges topk 1
    assert f.topk is not None
    for name in rules.topk_one_only:
        if f.any_is(rules.topk_one_only_fields, name) and f.topk > 1:
            log.add(
                TopkOneOnly(
                    rule=rules.topk_one_only_rule,
                    flags=_FLAGS,
                    value=f.topk,
                    allowed=(1,),
                    backend=name,
                    name=name,
                )
            )
    if f.topk == 1 and f.steps is not None:
        f.draft_tokens = f.steps + 1


def _ngram(parsed: Launch, rules: ReleaseRules, f: ServerArgsFields, log: StartupLog) -> None:
    """NGRAM runs only on CUDA, with its BFS breadth as topk."""
    if parsed.platform is not Platform.CUDA:
        log.add(
            NgramOffCuda(
                flags=("--speculative-algorithm", "--platform"), value=parsed.platform.value
            )
        )
    f.topk = rules.ngram_bfs_breadth


def modelled_algorithms(rules: ReleaseRules) -> tuple[str, ...]:
    """The algorithms whose start-up handler the replay runs (aliases included): those of
    the two branches of `handle_speculative_decoding`; any other is not modelled."""
    handled = rules.eagle_family | {rules.ngram}
    aliases = (alias for alias, target in rules.algorithm_aliases.items() if target in handled)
    return (*sorted(handled), *sorted(aliases))


def auto_spec_params(rules: ReleaseRules, algorithm: str, model: str) -> SpecParams:
    """`auto_choose_speculative_params`: the first case that fits the algorithm and model."""
    for case in rules.spec_auto_params:
        if case.algorithm is not None and case.algorithm != algorithm:
            continue
        if case.architectures is not None and model not in case.architectures:
            continue
        return case.params
    raise AssertionError("the automatic speculative parameters end with a catch-all case")
