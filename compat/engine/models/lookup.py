"""What one SGLang release knows about models, folded from the stored data on first use.

The data (`compat.engine.models.data`) is generated from each release's wheel by
`tools/models.py`: the first release whole, then what each later one changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import msgspec
from msgspec.structs import replace

from compat.engine.models.data import BASE, BASE_RELEASE, CHANGES
from compat.engine.models.encoding import Known, apply, release_key
from compat.vocab.terms import Arch

RELEASES = (BASE_RELEASE, *CHANGES)
"""Every release with model data, oldest first."""


class ModelKnowledge(msgspec.Struct, frozen=True):
    """What one release's own code knows about models."""

    release: str
    architectures: frozenset[str]
    """The model classes its registry serves (`architectures[0]` of a config it runs)."""
    mla: frozenset[str]
    """The architectures its ModelConfig runs as MLA by name alone."""
    encoder_decoder: frozenset[str]
    multimodal: frozenset[str]
    model_types: frozenset[str]
    """The config types it reads without remote code (its transformers' and its own)."""
    quantization: tuple[str, ...]
    """The choices of `--quantization`."""
    quantization_rocm: frozenset[str]
    """The quantization methods ROCm runs (`ModelConfig._verify_quantization`)."""
    quantization_compatible: Mapping[str, frozenset[str]]
    """`--quantization` -> the checkpoint methods it may run instead of the same one."""

    def attention_arch(self, architecture: str) -> Arch | None:
        """MLA or MHA for an architecture the release serves; None for one it does not."""
        if architecture in self.mla:
            return Arch.MLA
        if architecture in self.architectures:
            return Arch.MHA
        return None


@cache
def _known(release: str) -> Known:
    if release == BASE_RELEASE:
        return dict(BASE)
    if release not in CHANGES:
        raise KeyError(release)
    return apply(_known(RELEASES[RELEASES.index(release) - 1]), CHANGES[release])


@cache
def release_models(release: str) -> ModelKnowledge:
    """What `release` knows about models: its own data, or, for a release newer than the
    data (one standing in before `tools/models.py` read it), the newest release's before it.
    KeyError for a release older than the data."""
    if release not in RELEASES:
        older = [name for name in RELEASES if release_key(name) < release_key(release)]
        if not older:
            raise KeyError(release)
        return replace(release_models(older[-1]), release=release)
    known = _known(release)
    return ModelKnowledge(
        release=release,
        architectures=frozenset(known["architectures"]),
        mla=frozenset(known["mla"]),
        encoder_decoder=frozenset(known["encoder_decoder"]),
        multimodal=frozenset(known["multimodal"]),
        model_types=frozenset(known["model_types"]),
        quantization=tuple(known["quantization"]),
        quantization_rocm=frozenset(known["quantization_rocm"]),
        quantization_compatible=_pairs(known["quantization_compatible"]),
    )


def _pairs(pairs: tuple[str, ...]) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for pair in pairs:
        flag, _, checkpoint = pair.partition(":")
        found.setdefault(flag, set()).add(checkpoint)
    return {flag: frozenset(methods) for flag, methods in found.items()}
