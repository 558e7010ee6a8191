"""The sub-backend flags' values: checked against the release's own choices, and gathered.

Each release's parser declares its own names for `--dsa-prefill-backend`, `--linear-attn-*`
and `--mm-attention-backend` (`ReleaseRules.sub_choices`, generated from the wheel). A name
the release does not accept is a problem naming the releases that accept it; so is a flag
the release does not have (SGLang's parser refuses both: exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compat.engine.rules import ReleaseRules
from compat.engine.sub_backends import NO_SUB_BACKENDS, SubBackends
from compat.inputs.checks import InputProblem, release_choice, shown
from compat.inputs.flags import SUB_BACKEND_FLAGS, Flag
from compat.releases import RELEASES, ChoicesOf, releases_accepting

if TYPE_CHECKING:
    from compat.inputs.config import AttentionConfig


def spelling(flag: Flag, release: str) -> str:
    """The flag as `release`'s parser spells it: its own name, else the older one it kept
    (`--nsa-prefill-backend` alone up to 0.5.12)."""
    # Imported here: only a launch that sets a sub-backend flag reads the parser's lists.
    from compat.engine.parser.lookup import release_flags

    declared = release_flags(release)
    return next((option for option in flag.options if option in declared), flag.option)


def check_sub_backend(
    problems: list[InputProblem], flag: Flag, value: object, rules: ReleaseRules
) -> None:
    """`value` (None: unset) must be one of the names the release accepts for `flag`."""
    if value is None:
        return
    field = flag.field
    choices = rules.sub_choices.get(field)
    option = spelling(flag, rules.release)
    if choices is None:
        accepting = releases_accepting(_choices_of(field), value) if type(value) is str else ()
        if not accepting:
            reason = (
                f"SGLang {rules.release} has no {option}, and no release accepts {shown(value)}"
            )
            problems.append(InputProblem(option, value, reason))
            return
        reason = (
            f"SGLang {rules.release} has no {option}; {shown(value)} is accepted by "
            f"SGLang {_span(accepting)}"
        )
        problems.append(InputProblem(option, value, reason))
        return
    release_choice(problems, option, value, rules, _choices_of(field), choices)


def _choices_of(field: str) -> ChoicesOf:
    """The function that reads one flag's choices from a release's rules."""
    return lambda rules: rules.sub_choices.get(field, ())


def _span(releases: tuple[str, ...]) -> str:
    """`0.5.10 to 0.5.23`, or the one release, or the releases listed where not a run."""
    order = list(RELEASES)
    first, last = order.index(releases[0]), order.index(releases[-1])
    if len(releases) == 1:
        return releases[0]
    if last - first + 1 == len(releases):
        return f"{releases[0]} to {releases[-1]}"
    return ", ".join(releases)


def sub_backends(config: AttentionConfig) -> SubBackends:
    """The sub-backend flags of a validated config, as the engine reads them."""
    values = {flag.field: getattr(config, flag.field) for flag in SUB_BACKEND_FLAGS}
    if not any(values.values()):
        return NO_SUB_BACKENDS
    return SubBackends(**values)
