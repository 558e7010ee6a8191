"""DeepSeek sparse attention's (DSA's) page size on ROCm: aiter's preshuffle paged-MQA path.

From 0.5.12 the DSA branch of the model overrides forces page size 1 on ROCm only where
`aiter_can_use_preshuffle_paged_mqa()` (`layers/attention/dsa/utils.py`, `nsa/utils.py` in
0.5.12) is False, and 64 otherwise (0.5.8 to 0.5.11: 1 on ROCm always). The function reads
the environment and the installed Triton, in this order: False off ROCm; False unless
`SGLANG_USE_AITER` is true; False where the disable switch is set; True where
`AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS` is true; else True iff Triton's base version is at
least 3.5.0 (a version it cannot read: False). Both inputs have defaults: the launch's own
values, else the release's official ROCm image's (`RocmImage`); a Triton nobody states is
unknown, and the replay then takes the legacy path (SGLang's own answer for a version it
cannot read) while the report says that the page size turns on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from compat.engine.package_versions import at_least
from compat.vocab.evidence import Evidence

if TYPE_CHECKING:
    from compat.engine.launch import Launch

USE_AITER = "SGLANG_USE_AITER"
AOT_GLUON = "AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS"
DSA_DISABLE = "SGLANG_DSA_HIP_DISABLE_PRESHUFFLE"
NSA_DISABLE = "SGLANG_NSA_HIP_DISABLE_PRESHUFFLE"
TRITON = "triton"
TRITON_MIN = (3, 5, 0)
"""`Version(Version(triton.__version__).base_version) >= Version("3.5.0")`."""
PAGE_PRESHUFFLE, PAGE_LEGACY = 64, 1

_BOOL_ENV_TRUE = frozenset({"true", "1"})
"""`get_bool_env_var`: anything else (unset, `false`, `yes`) is false."""
_ENV_BOOL_TRUE = frozenset({"true", "1", "yes", "y"})
"""`EnvBool.parse`: these are true; `false/0/no/n` false; any other value warns and gives
the default (False)."""


class RocmImage(msgspec.Struct, frozen=True):
    """What a release's official ROCm image sets among the inputs of a start-up decision:
    the variables (name, value), and the kernel packages' versions it installs (a package
    absent: its version is not established from a public file)."""

    environment: tuple[tuple[str, str], ...]
    packages: tuple[tuple[str, str], ...]
    evidence: tuple[Evidence, ...]


class Preshuffle(msgspec.Struct, frozen=True):
    """`aiter_can_use_preshuffle_paged_mqa()` as a release writes it."""

    disable: tuple[str, ...]
    """The disable switch's names, the canonical first (`EnvBoolWithAlias` reads the
    deprecated one only where the canonical is unset)."""
    env_bool: bool
    """The switch is an `EnvBool` (`true/1/yes/y`), not `get_bool_env_var` (`true/1`)."""
    source: str
    """Where: "file:line function" in the wheel of the release that wrote it so (later
    releases move the line, not the code)."""

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable it reads, in its order."""
        return (USE_AITER, *self.disable, AOT_GLUON)


def value(launch: Mapping[str, str], image: Mapping[str, str], name: str) -> str | None:
    """The value SGLang reads: the launch's, else the image's (None: unset)."""
    return launch.get(name, image.get(name))


def usable(
    preshuffle: Preshuffle,
    launch_env: Mapping[str, str],
    image_env: Mapping[str, str],
    triton: str | None,
) -> bool | None:
    """Whether the preshuffle path is usable on ROCm; None where it turns on a Triton
    version nobody gave (the launch's, else the image's)."""

    def read(name: str) -> str | None:
        return value(launch_env, image_env, name)

    if (read(USE_AITER) or "").lower() not in _BOOL_ENV_TRUE:
        return False
    switch = next((v for v in map(read, preshuffle.disable) if v is not None), None)
    truths = _ENV_BOOL_TRUE if preshuffle.env_bool else _BOOL_ENV_TRUE
    if switch is not None and switch.lower() in truths:
        return False
    if (read(AOT_GLUON) or "").lower() in _BOOL_ENV_TRUE:
        return True
    if triton is None:
        return None
    return at_least(triton, TRITON_MIN)


def package(launch: Launch, image: RocmImage | None, name: str) -> str | None:
    """The version of `name` start-up reads: the launch's, else the image's (None: unknown)."""
    given = dict(launch.packages).get(name)
    if given is not None or image is None:
        return given
    return dict(image.packages).get(name)
