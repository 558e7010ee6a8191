"""The lines under a report's verdict that say what the answer assumed of the machine's
environment and kernel packages, where the launch did not say."""

from __future__ import annotations

from compat.guard.report import Report


def assumed_lines(report: Report) -> list[str]:
    """The environment line, the packages line and the note on an unknown version, each
    where it has something to say."""
    lines = []
    if report.environment or report.assumed_environment:
        lines.append(environment_line(report))
    if (packages := packages_line(report)) is not None:
        lines.append(packages)
    if (note := report.package_note) is not None:
        lines.append(f"note: {note}")
    return lines


def environment_line(report: Report) -> str:
    """Which of the variables the release's start-up reads the answer took, which it took as
    the official ROCm image sets them, and which it assumed unset."""
    given = [f"{name}={value}" for name, value in report.environment.items()]
    image = [f"{name}={value}" for name, value in report.assumed_image.items()]
    unset = list(report.assumed_unset)
    parts = (
        ([f"set {', '.join(given)}"] if given else [])
        + ([f"assumed as the official ROCm image sets them: {', '.join(image)}"] if image else [])
        + (
            [f"assumed unset (as the official image ships them): {', '.join(unset)}"]
            if unset
            else []
        )
    )
    return "environment: " + "; ".join(parts)


def packages_line(report: Report) -> str | None:
    """Which kernel package versions the answer took, and which it could not know."""
    given = [f"{name}=={version}" for name, version in report.config.packages]
    known = [f"{n}=={v}" for n, v in report.assumed_packages.items() if v is not None]
    unknown = [name for name, v in report.assumed_packages.items() if v is None]
    parts = (
        ([f"given {', '.join(given)}"] if given else [])
        + ([f"assumed as the official image installs them: {', '.join(known)}"] if known else [])
        + ([f"not known (--package NAME==VERSION): {', '.join(unknown)}"] if unknown else [])
    )
    return "packages: " + "; ".join(parts) if parts else None
