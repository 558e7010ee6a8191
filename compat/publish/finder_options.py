"""The finder's option space: its menus, release by release, and the columns it shows.

What a reader may pick (a model, a GPU, a KV dtype, a page size, a speculative top-k) and
which backends and pairs each combination is judged for; `compat.publish.finder` runs the
guard over it. Every list comes from the release's own data: its backends, KV dtypes and
page sizes, the GPU table (`compat.inputs.gpus`) and the model zoo (`compat.inputs.zoo`).
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compat.guard.suggest import page_sizes
from compat.inputs.config import DEFAULT_SPECULATIVE_ALGORITHM, flag_of
from compat.inputs.config import speculation_with_topk as with_topk
from compat.inputs.gpus import GPUS
from compat.releases import NEWEST, RELEASE_NAMES, RELEASES, release_matrix
from compat.vocab import terms as vocab
from compat.vocab.hardware import ComputeCapability

FINDER_RELEASES = tuple(reversed(RELEASE_NAMES))
"""The releases the published finder offers: every modelled one, newest first (the initial
selection)."""
DEFAULT_RELEASES = (NEWEST,)
"""The releases a build offers unless told otherwise: the newest alone (every release costs
minutes of CPU; `compat check --sglang-version` answers the same for any of them)."""
RELEASES_VARIABLE = "COMPAT_FINDER_RELEASES"
"""Names the releases a build offers (comma-separated, kept newest first); `all`: every one
(the published site); unset: `DEFAULT_RELEASES`. Fewer for the tests' sample of releases."""
MODELS_VARIABLE = "COMPAT_FINDER_MODELS"
"""Names the model menu's options a build offers (their values, comma-separated, kept in
menu order); unset or `all`: every one."""
NAMED_MODELS = (
    "gpt-oss-120b",
    "Llama-3.1-8B-Instruct",
    "Llama-4-Scout-17B-16E",
    "DeepSeek-R1",
    "DeepSeek-V3.2-Exp",
    "Kimi-K2-Instruct",
    "Qwen3-8B",
    "Qwen3-Next-80B-A3B",
    "gemma-3-27b-it",
)
"""The published checkpoints of the model menu (`compat.inputs.zoo`), after the two
architectures: one per family an operator looks for, among them each family whose start-up
rules SGLang special-cases (GPT-OSS, Llama 4, DeepSeek V3's architecture, DeepSeek sparse
attention, Qwen3-Next's Mamba cache) and a sliding-window model with a vision tower. Each is
judged from its own config, as `compat check --model NAME` judges it."""
INITIAL_MODEL = vocab.Arch.MLA.value
"""The model menu's initial choice: an MLA model, PR #14467's FP4 question."""
TOPK_CHOICES = (1, 2, 4)
"""Speculative top-k values offered besides "off": 1 and more than 1 are different columns."""
AXIS_ORDER = ("model", "gpu", "kv_cache_dtype", "page_size", "topk")
"""The axes in the order that the data's combination index counts them (last varies fastest)."""


@dataclass(frozen=True)
class Option:
    """One choice of one axis: the form value, its label, and the config fields it sets."""

    value: str
    label: str
    fields: tuple[tuple[str, Any], ...]
    flags: str | None = None
    """How `compat check` spells it, where that is not its fields as flags (`--gpu B200`)."""
    fix_search: bool = True
    """Whether its rows carry the guard's fixes where nothing passes (a model option: its
    architecture's do, a named model's do not)."""

    @property
    def args(self) -> str:
        """The option as `compat check` flags (empty when it sets nothing)."""
        if self.flags is not None:
            return self.flags
        dotted = [v.dotted if isinstance(v, ComputeCapability) else v for _, v in self.fields]
        return " ".join(f"{flag_of(n)} {v}" for (n, _), v in zip(self.fields, dotted, strict=True))


@dataclass(frozen=True)
class Axis:
    id: str
    options: tuple[Option, ...]
    initial: str

    def __post_init__(self) -> None:
        values = [option.value for option in self.options]
        if len(set(values)) != len(values) or self.initial not in values:
            raise ValueError(f"finder axis {self.id}: duplicate values or unknown initial")


def _axis(axis_id: str, initial: str, options: Iterable[tuple[str, str, dict[str, Any]]]) -> Axis:
    return Axis(axis_id, tuple(Option(v, t, tuple(f.items())) for v, t, f in options), initial)


def finder_backends(release: str) -> tuple[str, ...]:
    """The backends the finder shows for `release`: the release's matrix rows that its
    `--attention-backend` accepts, in the matrix's order."""
    accepted = RELEASES[release].backend_set
    return tuple(name for name in release_matrix(release).backend_names if name in accepted)


@functools.cache
def finder_options(release: str = FINDER_RELEASES[0]) -> tuple[Axis, ...]:
    """The finder's option space for `release`, axis by axis in `AXIS_ORDER`."""
    # Every GPU of `compat.inputs.gpus` by name, then each platform that has no named GPU.
    gpus = []
    for gpu in GPUS:
        fields: tuple[tuple[str, Any], ...] = (("platform", gpu.platform.value),)
        if gpu.capability is not None:
            fields += (("compute_capability", gpu.capability),)
        label = " / ".join((gpu.name, *gpu.aliases))
        where = gpu.platform.label if gpu.capability is None else str(gpu.capability)
        flags = f"--gpu {shlex.quote(gpu.name)}"
        value = "-".join(gpu.name.lower().split())  # lower case, words joined by hyphens
        gpus.append(Option(value, f"{label} ({where})", fields, flags))
    bare = [p for p in vocab.Platform if p not in {gpu.platform for gpu in GPUS}]
    gpus += [Option(p.value, p.label, (("platform", p.value),)) for p in bare]
    # An architecture's label names the model SGLang's model-dependent choices assume for it
    # (the guard says so in each answer): Llama for MHA, DeepSeek V3 for MLA.
    assumed = RELEASES[release].assumed_architecture
    models = [
        Option(a.value, f"any {a.label} model (as {assumed(a)})", (("attention_arch", a.value),))
        for a in vocab.Arch
    ]
    models += [_named_model(name, release) for name in NAMED_MODELS]
    # One spelling per dtype: the canonical one (drops aliases such as `bfloat16`).
    spellings, offered = vocab.KV_DTYPE_SPELLINGS, RELEASES[release].kv_set
    dtypes = [name for name, dtype in spellings.items() if name == dtype.value and name in offered]
    # PR #14467's question: the release's first FP4 cache dtype, else SGLang's default.
    fp4 = [name for name in dtypes if spellings[name].is_fp4] + [vocab.KvDtype.AUTO.value]
    kv = _axis("kv_cache_dtype", fp4[0], ((n, n, {"kv_cache_dtype": n}) for n in dtypes))
    sizes = [(str(s), str(s), {"page_size": s}) for s in page_sizes(release_matrix(release))]
    page = _axis("page_size", "", [("", "unset (backend default)", {}), *sizes])
    # A topk comes with the step and draft-token counts SGLang requires alongside it.
    spec = [(str(k), f"{k} ({DEFAULT_SPECULATIVE_ALGORITHM})", with_topk(k)) for k in TOPK_CHOICES]
    topk = _axis("topk", "", [("", "off", {}), *spec])
    model = Axis("model", tuple(models), INITIAL_MODEL)
    axes = (model, Axis("gpu", tuple(gpus), "b200"), kv, page, topk)
    assert tuple(axis.id for axis in axes) == AXIS_ORDER
    return axes


def _named_model(name: str, release: str) -> Option:
    """A published checkpoint as `compat check --model NAME` reads it for `release`."""
    from compat.inputs.zoo import known_model, known_model_fields

    key, _ = known_model(name)
    fields = known_model_fields(key, RELEASES[release].models)
    label = f"{key} ({fields['model_architecture']})"
    return Option(key.lower(), label, tuple(fields.items()), f"--model {key}", fix_search=False)


def pair_prefills(release: str = FINDER_RELEASES[0]) -> tuple[str, ...]:
    """Prefill backends the finder pairs with every decode backend: those that cannot serve
    decode themselves, and those a pairing rule names (a pair is where they are needed)."""
    matrix = release_matrix(release)
    names = {b.name for b in matrix.backends if b.phases == frozenset({vocab.Phase.PREFILL})}
    names |= {rule.prefill_backend for rule in matrix.pairing_rules}
    return tuple(name for name in finder_backends(release) if name in names)


def hardware_classes(axes: tuple[Axis, ...]) -> list[tuple[tuple[str, Any], ...]]:
    """The distinct platform/compute-capability settings the GPU menu's options make."""
    return list(dict.fromkeys(option.fields for option in axes[1].options))


def offered_releases() -> tuple[str, ...]:
    """The releases this build offers, newest first: `DEFAULT_RELEASES`, or those that
    `COMPAT_FINDER_RELEASES` names (`all`: `FINDER_RELEASES`); ValueError (one line, the
    choices) for an unknown one."""
    return _offered(
        RELEASES_VARIABLE, FINDER_RELEASES, "a modelled release", RELEASE_NAMES, DEFAULT_RELEASES
    )


def offered_models() -> tuple[str, ...]:
    """The model menu's options this build offers (their values, in menu order): every
    one, or those that `COMPAT_FINDER_MODELS` names; ValueError (one line, the choices)
    for an unknown one."""
    values = tuple(option.value for option in finder_options(NEWEST)[0].options)
    return _offered(MODELS_VARIABLE, values, "an option of the model menu")


def _offered(
    variable: str,
    every: tuple[str, ...],
    what: str,
    listed: Sequence[str] = (),
    default: tuple[str, ...] | None = None,
) -> tuple[str, ...]:
    """The values of `every` that `variable` names (`all`: every one; unset: `default`,
    else every one); `listed`: the choices in the order the error names them (default:
    `every`'s)."""
    wanted = os.environ.get(variable, "").strip()
    if wanted == "all" or (not wanted and default is None):
        return every
    if not wanted:
        return default or every
    names = {name.strip() for name in wanted.split(",") if name.strip()}
    unknown = sorted(names - set(every))
    if unknown or not names:
        raise ValueError(
            f"{variable}={wanted!r}: {', '.join(unknown) or 'nothing'} is not {what}; "
            f"choose among {', '.join(listed or every)} or all"
        )
    return tuple(name for name in every if name in names)
