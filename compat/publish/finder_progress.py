"""The site build's progress through the finder's parts: a line per part, in MkDocs' log,
with its time and an estimate of the time left."""

from __future__ import annotations

import time
from collections.abc import Callable

Part = tuple[str, str]
"""(release, model option value): what one data file of the finder holds."""


FIX_SEARCH_COST = 2
"""About how many times a named model's piece an architecture's costs (its rows carry the
fix search): the weight of a piece in the estimate of the time left."""


class Progress:
    """Lines of progress as the parts come in: the part's time, how many are done, the time
    so far and an estimate of the time left (the cost left, in pieces weighted by
    `FIX_SEARCH_COST`, at the pace so far)."""

    def __init__(self, cost: int, workers: int, say: Callable[[str], None] | None) -> None:
        self.cost, self.workers, self.say = cost, workers, say
        self.start = self.last = time.perf_counter()
        self.cost_done = self.parts_done = 0

    def part_done(self, part: Part, cost: int, parts: int) -> None:
        now = time.perf_counter()
        self.cost_done += cost
        self.parts_done += 1
        spent, elapsed, self.last = now - self.last, now - self.start, now
        left = elapsed / self.cost_done * (self.cost - self.cost_done)
        if self.say is not None:
            release, model = part
            self.say(
                f"finder: SGLang {release}, model {model} computed in {spent:.0f} s "
                f"({self.parts_done} of {parts} parts, {elapsed:.0f} s so far, about "
                f"{_duration(left)} left, {self.workers} processes)"
            )


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"
