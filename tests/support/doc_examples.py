"""The `compat ...` examples of README.md and docs/*.md, read as a reader sees them.

An example is a `compat` command in a fenced code block (a `$ ` prompt or none, backslash
continuations joined), with the lines a console block shows after it as its output; or an
inline code span that is a whole command: one with an argument, or a launch command after
`--`. An inline span that names a command or one of its options (`compat check`,
`compat check --parity`) is prose, not an example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[\w-]*)")
_SPAN = re.compile(r"(?<!`)`(compat [^`]+)`(?!`)")
# Blocks that hold shell commands; others (yaml, python, json) hold files.
_SHELL = frozenset({"", "console", "bash", "sh", "shell"})
# `compat SUBCOMMAND` alone, or with one option and no value: a mention in prose.
_MENTION = re.compile(r"^compat( [a-z]+)?( --[a-z-]+)?$")
PLACEHOLDERS = frozenset({"X", "A", "B", "DIR", "PATH", "FILE", "BACKEND", "MODEL", "[flags]"})
"""Words an example uses for a value of the reader's own."""


@dataclass(frozen=True)
class Example:
    source: str
    """`file:line` where it is written."""
    command: str
    """The shell command line, continuations joined."""
    output: tuple[str, ...] = ()
    """What the example shows it prints (console blocks)."""

    @property
    def words(self) -> list[str]:
        return self.command.split()

    @property
    def placeholders(self) -> set[str]:
        return {word for word in self.words if word in PLACEHOLDERS}


def examples(path: Path, root: Path) -> list[Example]:
    """Every example of one Markdown file, in order."""
    name = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            found += [
                Example(f"{name}:{index + 1}", span)
                for span in _SPAN.findall(lines[index])
                if not _MENTION.match(span)
            ]
            index += 1
            continue
        end = index + 1
        body: list[str] = []
        while end < len(lines) and not lines[end].strip().startswith(fence["fence"]):
            body.append(lines[end][len(fence["indent"]) :])
            end += 1
        if fence["lang"] in _SHELL:
            found += _block_examples(body, f"{name}:", index + 2, fence["lang"] == "console")
        index = end + 1
    return found


def _block_examples(body: list[str], name: str, first: int, console: bool) -> list[Example]:
    found: list[Example] = []
    index = 0
    while index < len(body):
        line = body[index]
        text = line.removeprefix("$ ") if console else line
        start = index
        index += 1
        if not text.startswith("compat ") or (console and not line.startswith("$ ")):
            continue
        while text.endswith("\\") and index < len(body):
            text = text[:-1].rstrip() + " " + body[index].strip()
            index += 1
        output: list[str] = []
        while console and index < len(body) and not body[index].startswith("$ "):
            output.append(body[index])
            index += 1
        found.append(Example(f"{name}{first + start}", text, tuple(output)))
    return found
