"""What the guard says: findings, the resolved configuration, suggestions, the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from compat.engine.preshuffle import PAGE_LEGACY, PAGE_PRESHUFFLE, TRITON, TRITON_MIN
from compat.inputs.environment import assumed
from compat.vocab.hardware import ComputeCapability
from compat.vocab.terms import Arch, KvDtype, ModelFeature, Phase, Platform, Severity, Term

if TYPE_CHECKING:
    from compat.inputs.config import AttentionConfig


class Enforcement(Term):
    """Where a finding is enforced: by SGLang at start-up, later, or only by the page."""

    STARTUP = "startup"
    BACKEND_BUILD = "backend-build"
    WARMUP = "warmup"
    DOCUMENTED = "documented"

    @property
    def label(self) -> str:
        return _ENFORCEMENT_LABELS[self.value]


_ENFORCEMENT_LABELS = {
    "startup": "SGLang refuses at start-up",
    "backend-build": "SGLang starts, then fails building the backend (after the weights load)",
    "warmup": (
        "SGLang starts and loads the weights, then fails in the first forward pass "
        "(warm-up, CUDA graph capture or the first batch)"
    ),
    "documented": "documented only: SGLang does not check it",
}


STARTUP_PREFIX = "startup-"
"""The rule ids of the findings for what SGLang's start-up code does: the prefix, then the
engine's rule id (the page's own id where both state a rule)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason, with a stable rule id, the flags involved, the value and the allowed set."""

    rule: str
    severity: Severity
    message: str
    flags: tuple[str, ...] = ()
    value: str | None = None
    allowed: tuple[str, ...] = ()
    backend: str | None = None
    phases: tuple[Phase, ...] = ()
    enforced: Enforcement = Enforcement.DOCUMENTED
    raised_at: str | None = None
    """Where the release's code raises (`file:line (function)`), when the finding is that
    code's and the engine holds the line (the backend build's findings)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "flags": list(self.flags),
            "value": self.value,
            "allowed": list(self.allowed),
            "backend": self.backend,
            "phases": [phase.value for phase in self.phases],
            "enforced": self.enforced.value,
        }


@dataclass(frozen=True, slots=True)
class Resolved:
    """The configuration SGLang would actually run, after defaults and adjustments."""

    arch: Arch
    platform: Platform
    compute_capability: ComputeCapability | None
    prefill_backend: str | None
    decode_backend: str | None
    kv_dtype: KvDtype
    page_size: int
    speculative: bool
    topk: int | None
    num_steps: int | None = None
    num_draft_tokens: int | None = None

    def backend(self, phase: Phase) -> str | None:
        return self.prefill_backend if phase is Phase.PREFILL else self.decode_backend

    def to_dict(self) -> dict[str, Any]:
        capability = self.compute_capability
        return {
            "attention_arch": self.arch.value,
            "platform": self.platform.value,
            "compute_capability": None if capability is None else capability.dotted,
            "prefill_attention_backend": self.prefill_backend,
            "decode_attention_backend": self.decode_backend,
            "kv_cache_dtype": self.kv_dtype.value,
            "page_size": self.page_size,
            "speculative": self.speculative,
            "speculative_eagle_topk": self.topk,
            "speculative_num_steps": self.num_steps,
            "speculative_num_draft_tokens": self.num_draft_tokens,
        }


@dataclass(frozen=True)
class Suggestion:
    """Flags to paste that make the configuration pass; the guard has checked that they do."""

    flags: tuple[tuple[str, str], ...]
    """(flag, value) pairs to set."""
    removes: tuple[str, ...]
    """Flags to drop from the launch command."""
    reason: str
    changes: int = 1
    """How many flags it changes (dropping the speculative flags together counts once)."""

    @property
    def args(self) -> str:
        return " ".join(f"{flag} {value}" for flag, value in self.flags)

    @property
    def summary(self) -> str:
        text = self.args
        if self.removes:
            dropped = "drop " + " and ".join(self.removes)
            text = f"{text} ({dropped})" if text else dropped
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "flags": self.args,
            "remove": list(self.removes),
            "reason": self.reason,
            "changes": self.changes,
        }


@dataclass(frozen=True)
class Report:
    """Every finding about one configuration; `ok` when none is an error."""

    config: AttentionConfig
    resolved: Resolved
    findings: tuple[Finding, ...]
    _suggest: Callable[[Report], tuple[Suggestion, ...]] = field(repr=False, compare=False)
    sglang_version: str = ""
    """The SGLang release whose start-up code the report predicts."""
    version_source: str = ""
    """Where `sglang_version` came from: given, the installed package, or the newest modelled."""
    unmodelled_release: str | None = None
    """The release asked for (COMPAT_SGLANG_VERSION, the installed sglang) when it is newer
    than the newest modelled; `sglang_version`, the newest modelled, answers for it."""

    @property
    def ok(self) -> bool:
        """The guard's verdict over everything the page documents (start-up refusals included)."""
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def refused_at_startup(self) -> bool:
        """Whether SGLang's own start-up code raises before loading weights."""
        return any(
            f.severity is Severity.ERROR and f.enforced is Enforcement.STARTUP
            for f in self.findings
        )

    @property
    def sglang_fails(self) -> bool:
        """Whether SGLang's own code fails the launch: it refuses at start-up, or it starts
        and then fails building the backends or in the first forward pass (what `--parity`
        refuses)."""
        return any(
            f.severity is Severity.ERROR and f.enforced is not Enforcement.DOCUMENTED
            for f in self.findings
        )

    @property
    def startup_summary(self) -> str:
        """One line: what SGLang does at start-up, and how the page's verdict differs."""
        where = {"given": "--sglang-version", "installed": "installed"}.get(
            self.version_source, self.version_source
        )
        if self.unmodelled_release is not None:
            where = f"answering for the {where} {self.unmodelled_release}"
        head = f"SGLang {self.sglang_version} ({where})"
        if self.refused_at_startup:
            return f"{head}: refuses to start"
        later = sum(1 for f in self.errors if f.enforced is Enforcement.BACKEND_BUILD)
        warmup = sum(1 for f in self.errors if f.enforced is Enforcement.WARMUP)
        documented = sum(1 for f in self.errors if f.enforced is Enforcement.DOCUMENTED)
        text = f"{head}: starts"
        if later:
            text += f", then fails building the backend ({later} problem{'s' * (later > 1)})"
        elif warmup:
            text += f", then fails in the first forward pass ({warmup} problem{'s' * (warmup > 1)})"
        if documented:
            text += (
                f"; the page documents {documented} problem{'s' * (documented > 1)} "
                "that SGLang does not check at start-up"
            )
        return text

    @property
    def startup_findings(self) -> tuple[Finding, ...]:
        """What SGLang itself says at start-up: refusals, warnings and adjustments."""
        return tuple(f for f in self.findings if f.enforced is Enforcement.STARTUP)

    @property
    def startup_reasons(self) -> tuple[Finding, ...]:
        """The start-up refusals: why SGLang would not start."""
        return tuple(
            f
            for f in self.findings
            if f.enforced is Enforcement.STARTUP and f.severity is Severity.ERROR
        )

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.WARNING)

    @property
    def infos(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.INFO)

    @property
    def rules(self) -> frozenset[str]:
        return frozenset(f.rule for f in self.findings)

    @property
    def environment(self) -> dict[str, str]:
        """The variables start-up reads that the launch sets (`AttentionConfig.environment`)."""
        return dict(self.config.environment)

    @property
    def assumed_environment(self) -> tuple[tuple[str, str | None], ...]:
        """The variables the release's start-up reads on this machine (those modelled) that
        the launch does not set, with the value the answer took: the official ROCm image's
        where it sets one, else None (unset, as the image ships it)."""
        return assumed(self.config.environment, self.config.parsed.release, self.resolved.platform)

    @property
    def assumed_unset(self) -> tuple[str, ...]:
        """Those of `assumed_environment` taken as unset."""
        return tuple(name for name, value in self.assumed_environment if value is None)

    @property
    def assumed_image(self) -> dict[str, str]:
        """Those of `assumed_environment` taken as the official ROCm image sets them."""
        return {name: value for name, value in self.assumed_environment if value is not None}

    @property
    def assumed_packages(self) -> dict[str, str | None]:
        """The kernel packages' versions the release's start-up reads on this machine that
        the launch does not give: the official image's, or None where that is not known
        (then the answer turns on it: `package_note`)."""
        from compat.inputs.packages import read_on  # only the CLI and --json ask

        rules = self.config.parsed.release
        given = dict(self.config.packages)
        image = dict(rules.rocm_image.packages) if rules.rocm_image is not None else {}
        read = read_on(rules, self.resolved.platform)
        return {name: image.get(name) for name in read if name not in given}

    @property
    def package_note(self) -> str | None:
        """What an unknown package version decides, where it decides one for this launch."""
        if self.assumed_packages.get(TRITON, "") is not None:
            return None
        launch = self.config.parsed
        if ModelFeature.SPARSE_DSA not in launch.features:
            return None
        if launch.release.preshuffle_usable(launch) is not None:
            return None
        return (
            f"triton not given (--package triton==VERSION), and the version SGLang "
            f"{self.sglang_version}'s official ROCm image installs is not established: "
            f"DeepSeek DSA's page size on ROCm is {PAGE_PRESHUFFLE} with Triton >= "
            f"{'.'.join(map(str, TRITON_MIN))} and {PAGE_LEGACY} below; taken as "
            f"{PAGE_LEGACY} (SGLang's answer for a version it cannot read)"
        )

    @property
    def assumed_cuda(self) -> str | None:
        """The CUDA of torch's build the answer took on a CUDA machine when the launch gave
        none (`--cuda-version`) and none was detected: the release's official image's."""
        if self.config.cuda_version is not None or self.resolved.platform is not Platform.CUDA:
            return None
        from compat.releases import release_rules  # only the CLI and --json ask

        return release_rules(self.sglang_version).image_cuda.label

    @cached_property
    def suggestions(self) -> tuple[Suggestion, ...]:
        """Computed on first access, so the guard's hot path pays nothing for them."""
        return () if self.ok else self._suggest(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "sglang_version": self.sglang_version,
            "sglang_version_source": self.version_source,
            "unmodelled_sglang_version": self.unmodelled_release,
            "refused_at_startup": self.refused_at_startup,
            "resolved": self.resolved.to_dict(),
            "environment": {
                "set": self.environment,
                "assumed_unset": list(self.assumed_unset),
                "assumed_image": self.assumed_image,
            },
            "packages": {
                "given": dict(self.config.packages),
                "assumed": self.assumed_packages,
                "note": self.package_note,
            },
            "assumed_cuda": self.assumed_cuda,
            "errors": [f.to_dict() for f in self.errors],
            "warnings": [f.to_dict() for f in self.warnings],
            "infos": [f.to_dict() for f in self.infos],
            "suggestions": [s.to_dict() for s in self.suggestions],
        }


def runs_as(resolved: Resolved, *, detected: bool = False) -> str:
    """One line: what SGLang would run, after defaults and adjustments."""
    where = resolved.platform.value
    if resolved.compute_capability is not None:
        where += f" {resolved.compute_capability}"
    if detected:
        where += " (detected)"
    phases = (
        f"backend {resolved.prefill_backend}"
        if resolved.prefill_backend == resolved.decode_backend
        else f"prefill {resolved.prefill_backend}, decode {resolved.decode_backend}"
    )
    spec = f", speculative topk {resolved.topk}" if resolved.speculative else ""
    return (
        f"runs as: {resolved.arch.label} model on {where}; {phases}; KV "
        f"{resolved.kv_dtype.value}; page size {resolved.page_size}{spec}"
    )


class IncompatibleConfigError(ValueError):
    """Raised by `enforce()`: the configuration would not run; `report` holds every reason.

    The message (every error, then the fixes the guard checked) is worded when it is first
    read, `str(error)`: finding the fixes runs the guard on hundreds of neighbouring launches,
    which a caller that only catches the refusal should not pay for.
    """

    def __init__(
        self, report: Report, *, detected: bool = False, message: str | None = None
    ) -> None:
        super().__init__()
        self.report = report
        self.detected = detected
        self._message = message

    def __str__(self) -> str:
        return self.message

    @property
    def message(self) -> str:
        """The refusal in words (given, or the guard's own, worded on first use)."""
        if self._message is None:
            report = self.report
            lines = [f"  {runs_as(report.resolved, detected=self.detected)}"]
            lines += [f"  - [{f.rule}] {f.message}" for f in report.errors]
            lines += [f"  try: {s.summary}  ({s.reason})" for s in report.suggestions]
            count = len(report.errors)
            noun = "problem" if count == 1 else "problems"
            heading = f"incompatible attention configuration ({count} {noun}):"
            self._message = "\n".join([heading, *lines])
        return self._message
