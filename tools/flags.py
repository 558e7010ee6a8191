"""Regenerate the flag lists each SGLang release's argument parser declares.

    python tools/flags.py 0.5.24        # one release (or several)
    python tools/flags.py --all         # every release the package models

Each release's wheel is fetched with `pip download --no-deps` (cached; see
tools/conformance/wheel.py), its `ServerArgs.add_cli_args` is run on an empty argparse
parser with every import outside `sglang` a placeholder, and the lists are written to
compat/engine/parser/data.py: the first release whole, then what each later one changes.
"""

import sys

from conformance.flags import main

if __name__ == "__main__":
    sys.exit(main())
