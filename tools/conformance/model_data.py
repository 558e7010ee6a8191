"""What each release knows about models, read from its wheel, and the generator of its data.

For each release (`python tools/models.py --all`, or named releases):

- `architectures`: every model class its registry serves (`EntryClass` of the modules of
  `sglang/srt/models/`, which `ModelRegistry` imports);
- `mla`: the architectures `ModelConfig` runs as MLA by name alone (the names of its
  `self.attention_arch = AttentionArch.MLA` branches that need no other config field);
- `encoder_decoder`, `multimodal`: `is_encoder_decoder_model`'s and `multimodal_model_archs`'
  lists (`sglang/srt/configs/model_config.py`);
- `model_types`: the config types it can read without remote code: those of the
  transformers it pins (`CONFIG_MAPPING_NAMES`) and those SGLang adds (its config registry
  and `AutoConfig.register` calls, read by running the release's own config loader);
- `quantization`: the choices of `--quantization`; `quantization_rocm` and
  `quantization_compatible`: `_verify_quantization`'s ROCm list and the checkpoint methods a
  `--quantization` value may run (as "flag:checkpoint").

The lists are written to compat/engine/models/data.py: the first release whole, then what
each later one adds and removes.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conformance.hf_configs import pinned_transformers, transformers_facts
from conformance.wheel import FRESH, cache_dir, harness_digest, source_root

_MODEL_CONFIG = "sglang/srt/configs/model_config.py"
_CHOICE_FILES = ("sglang/srt/arg_groups/choices.py", "sglang/srt/server_args.py")
# The loader module holding `_CONFIG_REGISTRY`: 0.5.11+ the package, before it one module.
_LOADERS = ("sglang.srt.utils.hf_transformers.common", "sglang.srt.utils.hf_transformers_utils")


def _strings(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _is_mla_assignment(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target, value = statement.targets[0], statement.value
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "attention_arch"
        and isinstance(value, ast.Attribute)
        and value.attr == "MLA"
    )


def _named(test: ast.expr) -> Iterator[str]:
    """The architectures a branch's test names on their own (`"X" in ...architectures`
    as the test or one operand of an `or`); a name `and`-ed with another field is not."""
    operands = (
        test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    )
    for operand in operands:
        if (
            isinstance(operand, ast.Compare)
            and isinstance(operand.left, ast.Constant)
            and isinstance(operand.left.value, str)
            and len(operand.ops) == 1
            and isinstance(operand.ops[0], ast.In)
        ):
            yield operand.left.value


def mla_architectures(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and any(_is_mla_assignment(s) for s in node.body):
            names.update(_named(node.test))
    return names


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _assigned_list(tree: ast.Module, name: str) -> list[str]:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            value = getattr(node, "value", None)
            if value is not None:
                return list(_strings(value))
    return []


def entry_classes(models_dir: Path) -> set[str]:
    """The class names of every top-level module's `EntryClass` (what ModelRegistry serves)."""
    names: set[str] = set()
    for file in sorted(models_dir.glob("*.py")):
        for node in ast.parse(file.read_text(encoding="utf-8-sig")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
            ):
                value = node.value
                items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                names.update(item.id for item in items if isinstance(item, ast.Name))
    return names


def quantization_choices(root: Path) -> list[str]:
    for relative in _CHOICE_FILES:
        file = root / relative
        if file.is_file():
            found = _assigned_list(
                ast.parse(file.read_text(encoding="utf-8")), "QUANTIZATION_CHOICES"
            )
            if found:
                return found
    raise LookupError(f"no QUANTIZATION_CHOICES in {root}")


def sglang_model_types(version: str) -> set[str]:
    """The config types SGLang `version` adds: its registry and its AutoConfig registrations,
    read by importing the release's own loader in the zoo runtime."""
    from conformance.harness import open_runtime

    with open_runtime(version, "H200", zoo=True) as runtime:
        world = runtime._runtime.world  # type: ignore[attr-defined]
        registry: set[str] = set()
        for name in _LOADERS:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            found = getattr(module, "_CONFIG_REGISTRY", None)
            if isinstance(found, dict):
                registry.update(found)
                break
        return registry | set(world.registered)


def _verify_quantization_lists(tree: ast.Module) -> dict[str, list[str]]:
    """`ModelConfig._verify_quantization`'s ROCm list and its compatible methods (as
    "flag:checkpoint" pairs)."""
    found: dict[str, list[str]] = {"quantization_rocm": [], "quantization_compatible": []}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "rocm_supported_quantization":
            found["quantization_rocm"] = sorted(set(ast.literal_eval(node.value)))
        elif name == "compatible_quantization_methods":
            pairs = ast.literal_eval(node.value)
            found["quantization_compatible"] = sorted(
                f"{flag}:{checkpoint}" for flag, methods in pairs.items() for checkpoint in methods
            )
    return found


def release_data(version: str) -> dict[str, list[str]]:
    """Everything this module reads from `version`'s wheel (imports it: one per process)."""
    root = source_root(version)
    tree = ast.parse((root / _MODEL_CONFIG).read_text(encoding="utf-8"))
    encoder_decoder = _function(tree, "is_encoder_decoder_model")
    transformers = transformers_facts(pinned_transformers(version)).model_types
    return {
        "architectures": sorted(entry_classes(root / "sglang/srt/models")),
        "mla": sorted(mla_architectures((root / _MODEL_CONFIG).read_text(encoding="utf-8"))),
        "encoder_decoder": sorted(set(_strings(encoder_decoder))) if encoder_decoder else [],
        "multimodal": sorted(set(_assigned_list(tree, "multimodal_model_archs"))),
        "model_types": sorted(set(transformers) | sglang_model_types(version)),
        "quantization": quantization_choices(root),
        **_verify_quantization_lists(tree),
    }


def release_data_in_subprocess(release: str) -> dict[str, list[str]]:
    """`release_data(release)`, read in a fresh interpreter (it imports the release), or
    from the cache of a previous run: a pure function of the wheel and of this harness's
    code, which the cache key hashes (`COMPAT_CONFORMANCE_FRESH=1` always recomputes)."""
    key = harness_digest(release).hexdigest()[:16]
    cached = cache_dir() / "model-data" / f"{release}-{key}.json"
    if cached.is_file() and not os.environ.get(FRESH):
        found: dict[str, list[str]] = json.loads(cached.read_text(encoding="utf-8"))
        return found
    data = _read_in_subprocess(release)
    cached.parent.mkdir(parents=True, exist_ok=True)
    staging = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    staging.write_text(json.dumps(data), encoding="utf-8")
    staging.replace(cached)  # a concurrent reader never sees half a file
    return data


def _read_in_subprocess(release: str) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-m", "conformance.model_data", "--print", release],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent.parent,
    )
    if result.returncode != 0:
        raise RuntimeError(f"sglang {release}: {result.stderr.strip()[-2000:]}")
    data: dict[str, list[str]] = json.loads(result.stdout)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--print"] and len(args) == 2:
        print(json.dumps(release_data(args[1])))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from compat.engine.models import encoding
    from compat.releases import RELEASE_NAMES

    releases = list(RELEASE_NAMES) if args == ["--all"] else args
    if not releases or "--all" in releases:
        print("usage: python tools/models.py (--all | RELEASE ...)", file=sys.stderr)
        return 2
    data: dict[str, Any] = encoding.committed_releases()
    for release in releases:
        data[release] = release_data_in_subprocess(release)
        sizes = ", ".join(f"{len(v)} {k}" for k, v in data[release].items())
        print(f"{release}: {sizes}", file=sys.stderr)
    encoding.DATA_MODULE.write_text(encoding.render_data(data), encoding="utf-8")
    order = ", ".join(sorted(data, key=encoding.release_key))
    print(f"wrote {encoding.DATA_MODULE.name}: releases {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
