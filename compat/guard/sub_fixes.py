"""The fixes that change a sub-backend flag: unset it, or set it to a name the release
builds on this machine.

Offered only for the sub-backend flags the launch sets (SGLang's own choice, when one is
unset, passes its checks); every candidate is then checked like any other fix
(`compat.guard.suggest`), so only a passing one is offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec.structs import replace

from compat.engine.sub_build import SubPart
from compat.inputs.config import AttentionConfig, Parsed
from compat.inputs.flags import SUB_BACKEND_FLAGS
from compat.inputs.sub_backend_checks import spelling

KIND = "sub"
"""The kind of move (`compat.guard.moves.Move.kind`)."""


SubMove = tuple[int, tuple[tuple[str, Any], ...], tuple[tuple[str, str], ...], tuple[str, ...], str]
"""A move's rank, the config fields it sets, the flags it writes, those it removes, why."""


def sub_backend_moves(config: AttentionConfig) -> Iterable[SubMove]:
    """The moves of the sub-backend flags the launch sets: unset first, then the others."""
    parsed = config.parsed
    release = parsed.release.release
    for flag in SUB_BACKEND_FLAGS:
        value = getattr(config, flag.field)
        if value is None:
            continue
        option = spelling(flag, release)
        part = SubPart.of(flag.field).value
        why = f"let SGLang choose the kernels of the {part}"
        yield 0, ((flag.field, None),), (), (option,), why
        for rank, name in enumerate(accepted_here(parsed, flag.field), start=1):
            if name != value:
                yield (
                    rank,
                    ((flag.field, name),),
                    ((option, name),),
                    (),
                    f"run the {part} on {name}",
                )


def accepted_here(parsed: Parsed, field: str) -> tuple[str, ...]:
    """The release's names for the flag of `field` that none of its sub-backend checks
    refuses on this launch's machine."""
    rules = parsed.release
    checks = [check for check in rules.build.sub_checks if check.field == field]
    accepted = []
    for name in rules.sub_choices.get(field, ()):
        trial = replace(parsed, sub_backends=replace(parsed.sub_backends, **{field: name}))
        if not any(check.fails(trial) for check in checks):
            accepted.append(name)
    return tuple(accepted)
