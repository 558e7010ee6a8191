"""The hostile files of the fuzzer (tests/hostile.py): model configs, --output targets, trees.

Each is made in a scratch directory: malformed, deep, huge or special model configs; FIFOs,
devices, directories and symbolic links where `compat export --output` may write; copies
of the generated files broken in one way each (invalid UTF-8, CR/CRLF, a directory or a
FIFO instead of a file, `docs` a file or a link out of the tree, read-only, missing).
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paths import MODELS, ROOT

GENERATED = ("docs/attention_backend.md", "docs/matrix.json", "docs/matrix.schema.json")
MODELS = sorted(MODELS.glob("*/config.json"))
MALICIOUS_TEMPLATE = "{{ cycler.__init__.__globals__.os.system('touch %s') }}\n"


def _deep(depth: int) -> str:
    return '{"architectures": ["X"], "a": ' + "[" * depth + "]" * depth + "}"


def model_config_zoo(base: Path) -> list[str]:
    """Paths to malformed, huge and special model configs (and a few good ones)."""
    base.mkdir(parents=True, exist_ok=True)
    texts: dict[str, bytes] = {
        "deep10000.json": _deep(10_000).encode(),
        "deep64.json": _deep(62).encode(),
        "deep65.json": _deep(70).encode(),
        "bigint.json": b'{"kv_lora_rank": ' + b"9" * 5000 + b"}",
        "negbigint.json": b'{"sliding_window": -' + b"9" * 200 + b"}",
        "surrogate.json": b'{"model_type": "\\ud800"}',
        "lowsurrogate.json": b'{"\\udfff": 1}',
        "pair.json": b'{"model_type": "\\ud83d\\ude00"}',
        "badutf8.json": b'{"model_type": "\xff\xfe"}',
        "bom.json": b'\xef\xbb\xbf{"model_type": "llama"}',
        "empty.json": b"",
        "array.json": b"[1, 2]",
        "nan.json": b'{"sliding_window": NaN, "kv_lora_rank": Infinity}',
        "types.json": b'{"architectures": 5, "text_config": [], "layer_types": {}}',
        "null.json": b"null",
        "float.json": b'{"kv_lora_rank": 1e999, "sliding_window": 4096.5}',
    }
    paths = []
    for name, data in texts.items():
        (base / name).write_bytes(data)
        paths.append(str(base / name))
    huge = base / "huge.json"
    with huge.open("wb") as handle:  # sparse: 60 MB on paper, nothing on disk
        handle.truncate(60 * 1024 * 1024)
    fifo = base / "fifo.json"
    os.mkfifo(fifo)
    (base / "dir-without-config").mkdir()
    (base / "dir-with-dir" / "config.json").mkdir(parents=True)
    loop = base / "loop.json"
    loop.symlink_to(loop)
    paths += [str(p) for p in (huge, fifo, base / "dir-without-config", base / "dir-with-dir")]
    paths += [str(loop), str(base / ("x" * 300)), str(base / "missing.json"), "/dev/null"]
    paths += [str(p) for p in MODELS] + [str(p.parent) for p in MODELS]
    return paths


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value that mixes the keys the reader knows with junk of every type."""
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        return rng.choice(
            [None, True, False, 0, -1, 1, 4096, 2**70, 1.5, "", "x", "sliding_attention",
             "DeepseekV3ForCausalLM", "deepseek_v3", "LlavaForConditionalGeneration", [], {}]
        )  # fmt: skip
    if roll < 0.6:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [
        "architectures", "model_type", "kv_lora_rank", "q_lora_rank", "index_topk",
        "sliding_window", "use_sliding_window", "layer_types", "sliding_window_pattern",
        "vision_config", "text_config", "llm_config", "is_encoder_decoder",
        "dual_chunk_attention_config", "junk",
    ]  # fmt: skip
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def special_outputs(base: Path) -> tuple[list[tuple[str, Callable[[], bool]]], Callable[[], None]]:
    """(--output path, a test that the thing at the path is unharmed) for export --output,
    and a function that undoes what a (permitted) --follow-symlinks write did."""
    base.mkdir(parents=True, exist_ok=True)
    outside = Path(tempfile.mkdtemp(prefix="outside-", dir=base.parent))  # not below `base`
    secret = outside / "secret.txt"
    secret.write_text("keep me\n", encoding="utf-8")
    fifo = base / "fifo"
    os.mkfifo(fifo)
    device = base / "device"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        device = Path("/dev/null")  # a non-root user cannot replace it either
    (base / "dir").mkdir()
    (base / "link-out").symlink_to(secret)
    (base / "link-in").symlink_to("inside.json")
    (base / "dangling").symlink_to(outside / "nowhere.json")
    (base / "file").write_text("a file\n", encoding="utf-8")
    (base / "loop").symlink_to("loop")
    unharmed: list[tuple[str, Callable[[], bool]]] = [
        (str(fifo), lambda: stat.S_ISFIFO(fifo.lstat().st_mode)),
        (str(device), lambda: stat.S_ISCHR(device.lstat().st_mode)),
        (str(base / "dir"), lambda: (base / "dir").is_dir()),
        (str(base / "link-out"), lambda: secret.read_text(encoding="utf-8") == "keep me\n"),
        (str(base / "dangling"), lambda: not (outside / "nowhere.json").exists()),
    ]
    names = ("link-in", "loop", "loop/x.json", "plain.json", "file/x.json", "x" * 300, "a/b/m.json")
    for name in names:
        unharmed.append((str(base / name), lambda: True))
    unharmed.append((str(base) + os.sep + os.fsdecode(b"\xff\xfe.json"), lambda: True))
    for name in ("/proc/x.json", "/proc/self/status", "-"):
        unharmed.append((name, lambda: True))

    def reset() -> None:
        secret.write_text("keep me\n", encoding="utf-8")
        (outside / "nowhere.json").unlink(missing_ok=True)

    return unharmed, reset


def make_tree(rng: random.Random, base: Path, originals: dict[str, bytes]) -> Path:
    """A fresh project root holding the generated files, broken in one random way."""
    root = Path(tempfile.mkdtemp(dir=base))
    for relative, data in originals.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    target = root / rng.choice(GENERATED)
    how = rng.randrange(15)
    if how == 0:  # invalid UTF-8 somewhere
        data = bytearray(target.read_bytes())
        data[rng.randrange(len(data))] = 0xFF
        target.write_bytes(bytes(data))
    elif how in (1, 2):  # CRLF or CR line endings
        target.write_bytes(target.read_bytes().replace(b"\n", b"\r\n" if how == 1 else b"\r"))
    elif how == 3:
        target.write_bytes(b"")
    elif how == 4:
        target.unlink()
        target.mkdir()
    elif how == 5:
        target.unlink()
        os.mkfifo(target)
    elif how == 6:  # the page a link out of the tree
        target.unlink()
        target.symlink_to(Path(tempfile.mkdtemp(dir=base)) / "outside.md")
    elif how == 7:  # docs/ a file
        shutil.rmtree(root / "docs")
        (root / "docs").write_text("not a directory\n", encoding="utf-8")
    elif how == 8:  # docs/ a link out of the tree
        outside = Path(tempfile.mkdtemp(dir=base))
        shutil.move(str(root / "docs"), str(outside / "docs"))
        (root / "docs").symlink_to(outside / "docs")
    elif how == 9:  # a read-only tree (only binding for a non-root user)
        for path in (root / "docs", root):
            path.chmod(0o555)
    elif how == 10:
        shutil.rmtree(root / "docs")
    elif how == 12:  # docs/ a symlink loop
        shutil.rmtree(root / "docs")
        (root / "docs").symlink_to("docs")
    elif how == 13:  # the generated file a symlink loop
        target.unlink()
        target.symlink_to(target.name)
    elif how == 11:  # huge: over the diff limit
        with target.open("r+b") as handle:
            handle.truncate(20 * 1024 * 1024)
    return root


@dataclass
class Workspace:
    base: Path
    zoo: list[str]
    outputs: list[tuple[str, Callable[[], bool]]]
    reset_outputs: Callable[[], None]
    originals: dict[str, bytes]
    templates: list[str]
    marker: Path
    launch_configs: list[str]
    """SGLang `--config` YAML files, fair and hostile."""


def launch_configs(base: Path) -> list[str]:
    """YAML launch configs: valid, refused values, unknown keys, bombs, wrong kinds."""
    base.mkdir()
    aliases = [
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
        for p, c in zip("abcdef", "bcdefg", strict=True)
    ]
    texts = {
        "ok.yaml": "attention-backend: fa3\npage-size: 16\ntp-size: 2\ndisable-radix-cache: true\n",
        "refused.yml": "attention-backend: trtllm_mha\nkv-cache-dtype: fp4_e2m1\n",
        "underscore.yaml": "attention_backend: fa3\n",
        "list.yaml": "- a\n- b\n",
        "broken.yaml": "a: [\n",
        "empty.yaml": "",
        "types.yaml": "page-size: [1, 2]\nmodel-path: {a: 1}\n1: 2\nnone-flag: null\n",
        "bomb.yaml": "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(aliases),
        "deep.yaml": "a: " + "[" * 5000 + "]" * 5000 + "\n",
        "config.json": '{"attention-backend": "fa3"}',
    }
    for name, text in texts.items():
        (base / name).write_text(text, encoding="utf-8")
    (base / "binary.yaml").write_bytes(b"a: \xff\xfe\n")
    (base / "huge.yaml").write_bytes(b"a: " + b"x" * (2 * 1024 * 1024))
    (base / "dir.yaml").mkdir()
    os.mkfifo(base / "fifo.yaml")
    names = [*texts, "binary.yaml", "huge.yaml", "dir.yaml", "fifo.yaml", "missing.yaml"]
    return [str(base / name) for name in names]


@contextlib.contextmanager
def workspace() -> Iterator[Workspace]:
    base = Path(tempfile.mkdtemp(prefix="compat-hostile-"))
    marker = base / "template-ran"
    evil = base / "evil-templates"
    evil.mkdir()
    (evil / "attention_backend.md.j2").write_text(MALICIOUS_TEMPLATE % marker, encoding="utf-8")
    binary = base / "binary-templates"
    binary.mkdir()
    (binary / "attention_backend.md.j2").write_bytes(b"\xff\xfe{{")
    costly = base / "costly-templates"
    costly.mkdir()
    (costly / "attention_backend.md.j2").write_text("{% for i in range(10**9) %}{% endfor %}")
    leaking = base / "leaking-templates"
    leaking.mkdir()
    (leaking / "attention_backend.md.j2").write_text("{% include 'out.j2' %}")
    (leaking / "out.j2").symlink_to(base / "secret")
    (base / "secret").write_text("secret")
    originals = {relative: (ROOT / relative).read_bytes() for relative in GENERATED}
    logging.getLogger("compat").disabled = True  # enforce() warns on every call otherwise
    try:
        yield Workspace(
            base,
            model_config_zoo(base / "models"),
            *special_outputs(base / "outputs"),
            originals,
            [str(ROOT / "templates"), *map(str, (evil, binary, costly, leaking, base / "none"))],
            marker,
            launch_configs(base / "launch-configs"),
        )
    finally:
        logging.getLogger("compat").disabled = False
        for path in base.rglob("*"):  # undo read-only trees so they can be removed
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
