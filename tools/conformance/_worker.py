"""Worker process of harness.run_many: stdin one JSON [gpu, model, argv] per line, stdout
one JSON StartupOutcome per line, in order. Usage: python -m conformance._worker VERSION
[--zoo]"""

from __future__ import annotations

import itertools
import json
import sys

from conformance.harness import open_runtime


def main(version: str, zoo: bool = False) -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # anything SGLang prints must not corrupt the JSON lines
    launches = [json.loads(line) for line in sys.stdin if line.strip()]
    for gpu, group in itertools.groupby(launches, key=lambda launch: launch[0]):
        with open_runtime(version, gpu, zoo=zoo) as runtime:  # one load per run of a profile
            for _, model, argv in group:
                out.write(json.dumps(runtime.outcome(model, argv).to_json()) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], zoo="--zoo" in sys.argv[2:])
