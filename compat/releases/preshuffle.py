"""`aiter_can_use_preshuffle_paged_mqa()` in each release that has it (0.5.12+): the
variables it reads, and where (`tests/releases/test_preshuffle.py` reads each back from the
wheel). The DSA branch's page 1 on ROCm holds only where it is False."""

from __future__ import annotations

from compat.engine.model_rules import MachinePage
from compat.engine.preshuffle import DSA_DISABLE, NSA_DISABLE, Preshuffle
from compat.releases.families import ON_NPU, ON_ROCM

NSA_UTILS = "sglang/srt/layers/attention/nsa/utils.py"
DSA_UTILS = "sglang/srt/layers/attention/dsa/utils.py"
FUNCTION = "aiter_can_use_preshuffle_paged_mqa"

PRESHUFFLE_0_5_12 = Preshuffle((NSA_DISABLE,), env_bool=False, source=f"{NSA_UTILS}:20 {FUNCTION}")
"""`get_bool_env_var("SGLANG_NSA_HIP_DISABLE_PRESHUFFLE")` (line 45)."""
PRESHUFFLE_0_5_13 = Preshuffle(
    (DSA_DISABLE, NSA_DISABLE), env_bool=True, source=f"{DSA_UTILS}:21 {FUNCTION}"
)
"""`envs.SGLANG_DSA_HIP_DISABLE_PRESHUFFLE.get()`: an `EnvBoolWithAlias` with the NSA name
as its deprecated alias (`environ.py`)."""
PRESHUFFLE_0_5_21 = Preshuffle((DSA_DISABLE,), env_bool=True, source=f"{DSA_UTILS}:26 {FUNCTION}")
"""The alias is gone: `EnvBool(False)`."""

DSA_PAGES_0_5_12 = (  # 0.5.8's pages, the ROCm one now behind the check
    MachinePage(None, ON_NPU),
    MachinePage(1, ON_ROCM, unless_preshuffle=True),
    MachinePage(64),
)
