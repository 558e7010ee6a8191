"""The `--speculative-algorithm` values a release accepts, by running the wheel's own code.

Up to 0.5.11 the flag's argparse `choices` decide. From 0.5.12 the flag is free text and
start-up decides: it upper-cases the value, lets `_resolve_speculative_algorithm_alias` rewrite
it (NEXTN to EAGLE) and asks `SpeculativeAlgorithm.from_string`, which takes the enum's
names and the registry's reserved aliases and raises on anything else. The candidates
probed are the enum's names, the reserved aliases and the upper-case words the alias
resolver compares; each is kept if the resolver and `from_string` accept it. `NONE` is the
enum's "no speculation" member, not an algorithm: left out. Plugin-registered names are
not the release's own: left out too.

    python tools/spec_algorithms.py WHEEL   # prints {"case_sensitive": ..., "accepted": [...]}

It lives beside the harness, not in it: start-up never runs it, so it does not key the
harness's cached outcomes.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from conformance.flags import _parser, _WheelImporter
from conformance.wheel import wheel_path

OPTION = "--speculative-algorithm"
_RESOLVERS = ("sglang.srt.arg_groups.speculative_hook", "sglang.srt.server_args")
_RESOLVER = "_resolve_speculative_algorithm_alias"
_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _resolver(wheel_modules: zipfile.ZipFile) -> Any:
    """The release's `_resolve_speculative_algorithm_alias` (0.5.12+), or None."""
    for module in _RESOLVERS:
        if f"{module.replace('.', '/')}.py" not in wheel_modules.namelist():
            continue
        found = getattr(importlib.import_module(module), _RESOLVER, None)
        if callable(found):
            return found
    return None


def accepted(wheel: Path) -> dict[str, Any]:
    """What `wheel`'s start-up accepts for `--speculative-algorithm`.

    Imports the wheel's modules into this interpreter: call it once per process.
    """
    parser = _parser(wheel)  # leaves the wheel importer on sys.meta_path
    action = next(a for a in parser._actions if OPTION in a.option_strings)
    if action.choices:
        return {"case_sensitive": True, "accepted": sorted(str(c) for c in action.choices)}
    with zipfile.ZipFile(wheel) as archive:
        sys.meta_path.insert(0, _WheelImporter(archive))
        spec_info = importlib.import_module("sglang.srt.speculative.spec_info")
        algorithm = spec_info.SpeculativeAlgorithm
        resolve = _resolver(archive)
        candidates = {member.name for member in algorithm}
        try:
            registry = importlib.import_module("sglang.srt.speculative.spec_registry")
            candidates |= set(getattr(registry, "_RESERVED_ALIASES", ()))
        except ImportError:
            pass
        if resolve is not None:
            words = resolve.__code__.co_consts
            candidates |= {w for w in words if isinstance(w, str) and _NAME.fullmatch(w)}
        found = []
        for name in sorted(candidates):
            value = resolve(name, None) if resolve is not None else name
            try:
                resolved = algorithm.from_string(value)
            except ValueError:
                continue
            if resolved is not algorithm.NONE:
                found.append(name)
    return {"case_sensitive": False, "accepted": found}


def accepted_in_subprocess(release: str) -> dict[str, Any]:
    """`accepted` of `release`'s wheel, computed in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-m", "spec_algorithms", str(wheel_path(release))],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent,
    )
    if result.returncode != 0:
        raise RuntimeError(f"sglang {release}: {result.stderr.strip()[-2000:]}")
    found: dict[str, Any] = json.loads(result.stdout)
    return found


if __name__ == "__main__":
    print(json.dumps(accepted(Path(sys.argv[1]))))
