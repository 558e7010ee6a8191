"""The GPU code a compiled extension carries: the CUDA fatbin in its ELF `.nv_fatbin`
section, read without the CUDA toolkit.

A fatbin is a run of containers (magic 0xBA55ED50), each a run of entries: one compiled
kernel image (a cubin, for one SM architecture) or PTX (which the driver can compile for a
newer GPU). Each entry's header names its kind, its architecture (major * 10 + minor) and
flags; the flags say whether the image is arch-specific (`sm_100a`: that GPU alone) or
family-specific (`sm_100f`: that major, from that minor on), and whether it is compressed.
An uncompressed cubin names its own target too (its `.note.nv.tkinfo`, ptxas's
`-arch sm_XYa`): `cubin_target` reads it, which the tests use to confirm the flags.

Which GPUs an image runs on is the engine's rule (`compat.engine.kernels.image_runs_on`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator

from compat.engine.kernels import Image, image_runs_on

FATBIN_MAGIC = 0xBA55ED50
SECTION = ".nv_fatbin"
_CUBIN, _PTX = 2, 1
_ARCH_SPECIFIC = 0x100000
"""Entry flag of an `a` image (`sm_90a`, `sm_100a`, `sm_103a`)."""
_FAMILY_SPECIFIC = 0x200000
"""Entry flag of an `f` image (`sm_100f`)."""
_COMPRESSED = 0x2000 | 0x8000
"""Entry flags of a compressed payload (LZ4, zstd): its header is still read."""


def sections(elf: bytes) -> dict[str, tuple[int, int]]:
    """name -> (offset, size) of each section of a 64-bit little-endian ELF file."""
    if elf[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strings = headers[shstrndx][4]
    found = {}
    for name, _, _, _, offset, size in headers:
        start = strings + name
        found[elf[start : elf.index(b"\0", start)].decode()] = (offset, size)
    return found


def _entries(elf: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """(kind, architecture, flags, payload) of every entry of the fatbin section."""
    offset, size = sections(elf).get(SECTION, (0, 0))
    position, end = offset, offset + size
    while position + 16 <= end:
        magic, _, header, length = struct.unpack_from("<IHHQ", elf, position)
        if magic != FATBIN_MAGIC:
            position += 8  # containers are 8-byte aligned
            continue
        entry, stop = position + header, position + header + length
        while entry < stop:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", elf, entry)
            (arch,) = struct.unpack_from("<I", elf, entry + 28)
            (flags,) = struct.unpack_from("<Q", elf, entry + 40)
            start = entry + entry_header
            yield kind, arch, flags, elf[start : start + payload]
            entry = start + payload
        position = stop


def _variant(flags: int) -> str:
    if flags & _ARCH_SPECIFIC:
        return "a"
    return "f" if flags & _FAMILY_SPECIFIC else ""


def images(elf: bytes) -> tuple[Image, ...]:
    """The distinct images the extension carries, sorted."""
    found = {
        ("cubin" if kind == _CUBIN else "ptx", arch, _variant(flags))
        for kind, arch, flags, _ in _entries(elf)
        if kind in (_CUBIN, _PTX)
    }
    return tuple(sorted(found))


def cubin_targets(elf: bytes) -> dict[tuple[int, str], set[str]]:
    """(architecture, variant the entry's flags give) -> the targets the uncompressed cubins
    name themselves (`sm_100a`): the check on `images`' reading of the flags."""
    found: dict[tuple[int, str], set[str]] = {}
    for kind, arch, flags, payload in _entries(elf):
        if kind != _CUBIN or flags & _COMPRESSED or payload[:4] != b"\x7fELF":
            continue
        target = cubin_target(payload)
        if target is not None:
            found.setdefault((arch, _variant(flags)), set()).add(target)
    return found


def cubin_target(cubin: bytes) -> str | None:
    """The target ptxas compiled the cubin for (`sm_100a`), from its toolkit note; an older
    cubin without the note gives its ELF flags instead (the architecture, `a` by 0x800)."""
    note = sections(cubin).get(".note.nv.tkinfo")
    if note is not None:
        match = re.search(rb"sm_\d+[af]?", cubin[note[0] : note[0] + note[1]])
        if match:
            return match.group().decode()
    if cubin[8] == 7:  # the CUDA ELF ABI before Blackwell: the SM in the low byte
        (flags,) = struct.unpack_from("<I", cubin, 0x30)
        return f"sm_{flags & 0xFF}{'a' if flags & 0x800 else ''}"
    return None


def name(image: Image) -> str:
    kind, arch, variant = image
    return f"{'sm' if kind == 'cubin' else 'compute'}_{arch}{variant}"


def accepted(
    found: tuple[Image, ...], capabilities: frozenset[tuple[int, int]]
) -> frozenset[tuple[int, int]]:
    """Those of `capabilities` some image runs on (the engine's rule, `image_runs_on`)."""
    return frozenset(c for c in capabilities if any(image_runs_on(i, c) for i in found))
