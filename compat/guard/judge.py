"""A launch judged whole: `check()` on its configuration, plus what was read beside its flags.

Every face judges a launch here (`compat check`, `compat launch`, `enforce()` and through it
the SGLang plugin), after `compat.inputs.assemble` read it.
"""

from __future__ import annotations

from compat.guard.check import check
from compat.guard.extra_findings import with_conflicts, with_software_findings
from compat.guard.report import Report
from compat.inputs.assemble import Assembled


def judge(assembled: Assembled) -> Report:
    """The report on an assembled launch: the guard's findings, the installed software's
    (when the machine was detected) and the model config's conflicts with the flags."""
    report = check(assembled.config)
    if assembled.detected is not None:
        report = with_software_findings(report, assembled.detected)
    return with_conflicts(report, assembled.context)
