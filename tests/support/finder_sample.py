"""The releases and models the tests' sites and finder data offer: every release costs one
to two minutes of CPU per architecture and half a minute per named model, so the tests (and
the benchmark's quick run) build the site with a sample, and one build cache entry (keyed by
the package's sources and these files) serves them all."""

import os
from collections.abc import Mapping

from compat.publish.finder_options import MODELS_VARIABLE, RELEASES_VARIABLE
from compat.releases import NEWEST, RELEASE_NAMES

SAMPLE_RELEASES = (NEWEST, RELEASE_NAMES[len(RELEASE_NAMES) // 2], "0.5.7")
"""The newest release, one in the middle, and 0.5.7 (PR #14467's)."""
SAMPLE_MODELS = ("mha", "mla", "gpt-oss-120b", "deepseek-v3.2-exp")
"""Both architectures, and a named model of each: GPT-OSS's backend list, DeepSeek sparse
attention's page size and KV dtypes."""


def sample_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with the finder offering the sample."""
    return {
        **(os.environ if env is None else env),
        RELEASES_VARIABLE: ",".join(SAMPLE_RELEASES),
        MODELS_VARIABLE: ",".join(SAMPLE_MODELS),
    }


DATA_BUDGET_BYTES = 160_000
DATA_BUDGET_GZIP_BYTES = 40_000
"""The most one release and model's finder data file may weigh, as served and gzipped (the
browser test and `benchmarks/loop.py` hold it). Worded per machine, the guard's lists name
what runs on the GPU asked about, so each hardware class has texts of its own."""
