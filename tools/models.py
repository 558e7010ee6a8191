"""Regenerate what each SGLang release knows about models (architectures, types, quantization).

    python tools/models.py 0.5.24        # one release (or several)
    python tools/models.py --all         # every release the package models

Each release's wheel is fetched with `pip download --no-deps` (cached; see
tools/conformance/wheel.py) with the transformers it pins; its model registry, its
ModelConfig's architecture lists and its `--quantization` choices are read from the source,
and the config types it reads by running its own config loader in the zoo runtime. The
lists are written to compat/engine/models/data.py: the first release whole, then what each
later one changes.
"""

import sys

from conformance.model_data import main

if __name__ == "__main__":
    sys.exit(main())
