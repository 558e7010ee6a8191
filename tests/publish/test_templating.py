"""The pages' sandbox answers every attribute read as Jinja's immutable sandbox does, however
often it is asked (it remembers the answer per type and attribute)."""

from __future__ import annotations

import collections
import itertools
from typing import Any

import pytest
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from compat.claim.baseline import MATRIX
from compat.publish.templating import Sandbox
from compat.vocab.terms import Arch


def _generator() -> Any:
    yield 1


class _Disguised:
    """Reports another class than its type, as a proxy may."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return list


OBJECTS = (
    [],
    {},
    set(),
    collections.deque(),
    "text",
    MATRIX,
    Arch.MLA,
    Arch,
    len,
    _generator,
    _generator(),
    MATRIX.table,
    _Disguised(),
)
ATTRIBUTES = (
    "append",
    "clear",
    "pop",
    "keys",
    "upper",
    "mro",
    "gi_frame",
    "__globals__",
    "__code__",
    "__func__",
    "_private",
    "tables",
    "value",
)


@pytest.mark.parametrize("rounds", [1, 2])
def test_every_answer_is_jinjas_own(rounds: int) -> None:
    ours, jinjas = Sandbox(), ImmutableSandboxedEnvironment()
    for _ in range(rounds):  # the second round answers from memory
        for obj, attr in itertools.product(OBJECTS, ATTRIBUTES):
            value = getattr(obj, attr, None)
            expected = jinjas.is_safe_attribute(obj, attr, value)
            assert ours.is_safe_attribute(obj, attr, value) is expected, (obj, attr)


def test_a_mutation_stays_refused_after_a_safe_read_of_the_same_type() -> None:
    template = Sandbox().from_string("{{ items.count(1) }} {{ items.append(2) }}")
    with pytest.raises(SecurityError):
        template.render(items=[1])
