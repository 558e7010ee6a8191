"""`check()` of each configuration once, found by its field values: the fix search's memo.

The fix search (`compat.guard.suggest`) asks about hundreds of copies of one launch, each
with a few flags changed, and the finder's rows ask again about the copies of their
neighbours: in one part of the finder's data, seven asks in ten are repeats. Building a copy
(`replaced`, which validates it) costs more than finding its report, so a copy is looked up
by the values it would hold (`field_values`) and built only the first time. Equal values
are an equal configuration, and check() is a function of the configuration.

The fix search wants only the copies that pass, and nearly all it asks about fail: in the
fix searches measured, 90 to 99 asks in 100 are launches SGLang's start-up code refuses.
`passing_copy_of` replays just the start-up code for a copy it has not checked, and stops
there when SGLang refuses it (a refusal is an error of check(), so the copy cannot pass);
it remembers the refusal, never a partial report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compat.guard.report import Report
from compat.guard.resolve import refused_at_startup
from compat.inputs.config import AttentionConfig, field_values, replaced


class CheckMemo:
    """The reports of `run` (check() against one matrix), each configuration's once."""

    def __init__(self, run: Callable[[AttentionConfig], Report]) -> None:
        self._run = run
        self._reports: dict[object, Report] = {}
        self._refused: set[object] = set()
        """Copies known to fail at start-up, whose whole report nobody asked for."""

    def __call__(self, config: AttentionConfig) -> Report:
        key = _key(config)
        report = self._reports.get(key)
        if report is None:
            report = self._reports[key] = self._run(config)
        return report

    def copy_of(self, config: AttentionConfig, changes: Mapping[str, Any]) -> Report:
        """The report of `replaced(config, **changes)`; the copy is built only when no equal
        configuration was checked before."""
        if type(config) is not AttentionConfig:  # a subclass may hold fields of its own
            return self(replaced(config, **changes))
        key = field_values(config, changes)
        report = self._reports.get(key)
        if report is None:
            report = self._reports[key] = self._run(replaced(config, **changes))
        return report

    def passing_copy_of(self, config: AttentionConfig, changes: Mapping[str, Any]) -> Report | None:
        """The report of `replaced(config, **changes)` when it passes, else None; a copy
        SGLang's start-up code refuses is never checked further."""
        if type(config) is not AttentionConfig:
            report = self(replaced(config, **changes))
        else:
            key = field_values(config, changes)
            known = self._reports.get(key)
            if known is None:
                if key in self._refused:
                    return None
                copy = replaced(config, **changes)
                if refused_at_startup(copy.parsed):
                    self._refused.add(key)
                    return None
                known = self._reports[key] = self._run(copy)
            report = known
        return report if report.ok else None

    def __len__(self) -> int:
        """How many configurations were checked."""
        return len(self._reports)


def _key(config: AttentionConfig) -> object:
    # A subclass's own fields are not in `field_values`: it is its own key.
    return field_values(config) if type(config) is AttentionConfig else config
