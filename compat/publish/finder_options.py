"""The finder's option space: its menus, release by release, and the columns it shows.

What a reader may pick (a model, a GPU, a KV dtype, a page size, a speculative top-k) and
which backends and pairs each combination is judged for; `compat.publish.finder` runs the
guard over it. Also where the menus open (`opening`: a launch that passes), where the KV
dtype menu moves when a GPU cannot run the chosen dtype (`kv_follow`), and which backends
are another platform's (`foreign_backends`). Every list comes from the release's own data:
its backends, KV dtypes and page sizes, the GPU table (`compat.inputs.gpus`) and the model
zoo (`compat.inputs.zoo`).
"""

from __future__ import annotations

import functools
import itertools
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compat.guard.check import check
from compat.guard.report import Report
from compat.guard.suggest import page_sizes
from compat.inputs.config import DEFAULT_SPECULATIVE_ALGORITHM, AttentionConfig, flag_of
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
PREFERRED_GPU = "b200"
"""The GPU the opening selection tries first (`opening`), a current data-centre GPU; the
others follow in menu order."""
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
    note: str = ""
    """Shown under its menu when chosen (a model option: the architecture it is judged as),
    so that the label itself stays short enough for a phone's menu."""

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


def finder_backends(release: str) -> tuple[str, ...]:
    """The backends the finder shows for `release`: the release's matrix rows that its
    `--attention-backend` accepts, in the matrix's order."""
    accepted = RELEASES[release].backend_set
    return tuple(name for name in release_matrix(release).backend_names if name in accepted)


Menus = tuple[tuple[Option, ...], ...]
"""Each axis's options, in `AXIS_ORDER`."""


@functools.cache
def _menus(release: str) -> Menus:
    """The options of each menu for `release`, in `AXIS_ORDER`."""
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
        Option(a.value, f"any {a.label} model", (("attention_arch", a.value),),
               note=f"judged as {assumed(a)}")
        for a in vocab.Arch
    ]  # fmt: skip
    models += [_named_model(name, release) for name in NAMED_MODELS]
    # One spelling per dtype: the canonical one (drops aliases such as `bfloat16`).
    spellings, offered = vocab.KV_DTYPE_SPELLINGS, RELEASES[release].kv_set
    dtypes = [name for name, dtype in spellings.items() if name == dtype.value and name in offered]
    kv = [Option(n, n, (("kv_cache_dtype", n),)) for n in dtypes]
    sizes = [
        Option(str(s), str(s), (("page_size", s),)) for s in page_sizes(release_matrix(release))
    ]
    page = [Option("", "unset (backend default)", ()), *sizes]
    # A topk comes with the step and draft-token counts SGLang requires alongside it.
    topk = [Option("", "off", ())] + [
        Option(str(k), f"{k} ({DEFAULT_SPECULATIVE_ALGORITHM})", tuple(with_topk(k).items()))
        for k in TOPK_CHOICES
    ]
    return tuple(models), tuple(gpus), tuple(kv), tuple(page), tuple(topk)


@functools.cache
def finder_options(release: str = FINDER_RELEASES[0]) -> tuple[Axis, ...]:
    """The finder's option space for `release`, axis by axis in `AXIS_ORDER`; each menu
    opens on `opening_selection(release)`."""
    menus = _menus(release)
    initial = opening_selection(release)
    axes = tuple(
        Axis(axis_id, options, initial[axis_id])
        for axis_id, options in zip(AXIS_ORDER, menus, strict=True)
    )
    return axes


def verdict(report: Report) -> int:
    """A report's verdict digit: 0 compatible, 1 compatible with warnings, 2 incompatible."""
    return 2 if not report.ok else 1 if report.warnings else 0


def launch_passes(
    defaults: tuple[str | None, str | None], verdict_of: Callable[[str], int]
) -> bool:
    """Whether SGLang's default launch (no backend flag) passes: it picks a backend, and
    the row of each backend it picks (`defaults`: prefill, decode) is compatible
    (`verdict_of` a backend name, both phases on it)."""
    names = {name for name in defaults if name is not None}
    return bool(names) and all(verdict_of(name) == 0 for name in names)


def gpu_order(gpus: Sequence[str]) -> list[str]:
    """The GPU menu's values in the order `opening` tries them: `PREFERRED_GPU` first."""
    return sorted(gpus, key=lambda value: value != PREFERRED_GPU)


@functools.cache
def opening(release: str, model: str) -> tuple[str, str] | None:
    """The (GPU, KV dtype) values a model option's page opens on: the first, GPUs in
    `gpu_order` and dtypes in menu order (SGLang's default `auto` first), on which SGLang's
    default launch passes (`launch_passes`; page size and top-k unset); None where none does."""
    models, gpus, kvs = _menus(release)[:3]
    chosen = next(option for option in models if option.value == model)
    by_value = {option.value: option for option in gpus}
    for gpu, kv in itertools.product(gpu_order(list(by_value)), kvs):
        fields = dict(itertools.chain(chosen.fields, by_value[gpu].fields, kv.fields))
        config = AttentionConfig(sglang_version=release, **fields)
        unset = check(config)
        defaults = (unset.resolved.prefill_backend, unset.resolved.decode_backend)

        def verdict_of(backend: str, fields: dict[str, Any] = fields) -> int:
            run = AttentionConfig(sglang_version=release, attention_backend=backend, **fields)
            return verdict(check(run))

        if launch_passes(defaults, verdict_of):
            return gpu, kv.value
    return None


def opening_selection(release: str, models: Sequence[str] | None = None) -> dict[str, str]:
    """The selection the finder opens on for `release`, an option value per axis id: the
    first model of the menu (of `models`, their values, when given) that has an `opening`,
    with its GPU and KV dtype; page size and top-k unset. Computed, so it follows the
    release's data: the page opens on a launch that passes."""
    offered = [o.value for o in _menus(release)[0] if models is None or o.value in models]
    starts = ((model, opening(release, model)) for model in offered)
    model, start = next(((m, s) for m, s in starts if s is not None), (offered[0], None))
    # No model has a passing launch (no release so far): SGLang's own defaults.
    gpu, kv = start or (PREFERRED_GPU, vocab.KvDtype.AUTO.value)
    return {"model": model, "gpu": gpu, "kv_cache_dtype": kv, "page_size": "", "topk": ""}


def _named_model(name: str, release: str) -> Option:
    """A published checkpoint as `compat check --model NAME` reads it for `release`."""
    from compat.inputs.zoo import known_model, known_model_fields

    key, _ = known_model(name)
    fields = known_model_fields(key, RELEASES[release].models)
    note = f"{fields['model_architecture']}, from its published config"
    return Option(
        key.lower(), key, tuple(fields.items()), f"--model {key}", fix_search=False, note=note
    )


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


def kv_follow(
    rows: Sequence[tuple[tuple[str | None, str | None], Sequence[tuple[int, Any]]]],
    backends: Sequence[str],
    radix: Sequence[int],
) -> list[int]:
    """Per hardware class, page size and top-k (the last fastest): the first KV dtype, in
    menu order, on which SGLang's default launch passes (`launch_passes`), else the number
    of dtypes. The dtype the page moves to when a new GPU cannot run the chosen one.
    `rows`: per combination (in the data's order), SGLang's (prefill, decode) defaults and
    the cells, a verdict digit first, of each backend on both phases."""
    hardware, dtypes, pages, topks = radix
    column = {name: number for number, name in enumerate(backends)}

    def passes(row: tuple[tuple[str | None, str | None], Sequence[tuple[int, Any]]]) -> bool:
        defaults, cells = row
        return launch_passes(defaults, lambda name: cells[column[name]][0])

    follow = []
    for h, p, t in itertools.product(range(hardware), range(pages), range(topks)):
        at = (((h * dtypes + d) * pages + p) * topks + t for d in range(dtypes))
        follow.append(next((d for d, i in enumerate(at) if passes(rows[i])), dtypes))
    return follow


def foreign_backends(release: str) -> list[list[int]]:
    """Per hardware class, the numbers of the backends that do not run on its platform
    (the page folds their rows under one line)."""
    matrix, backends = release_matrix(release), finder_backends(release)
    classes = hardware_classes(finder_options(release))
    platforms = [vocab.Platform(dict(fields)["platform"]) for fields in classes]
    return [
        [b for b, name in enumerate(backends) if not matrix.backend(name).runs_on(platform)]
        for platform in platforms
    ]


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
