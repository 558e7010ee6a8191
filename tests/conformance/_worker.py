"""Worker process of harness.run_many: stdin one JSON [model, argv] per line, stdout one
JSON StartupOutcome per line. Usage: python -m conformance._worker VERSION GPU"""

from __future__ import annotations

import json
import sys

from conformance.harness import open_runtime


def main(version: str, gpu: str) -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # anything SGLang prints must not corrupt the JSON lines
    with open_runtime(version, gpu) as runtime:
        for line in sys.stdin:
            if line.strip():
                model, argv = json.loads(line)
                out.write(json.dumps(runtime.outcome(model, argv).to_json()) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
