"""Named constants a file defines (``#define NAME value``, ``const int NAME = value;``), looked up by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport.scan.kernels.brackets import trimmed
from gpuport.scan.kernels.statements import statement_before
from gpuport.scan.kernels.words import words


@dataclass(frozen=True, slots=True)
class Constant:
    name: str
    value: str
    value_start: int
    value_end: int
    start: int  # the start of the definition, for the finding
    is_macro: bool


_INTEGER_TYPE_BEFORE_RE = re.compile(
    r"(?:unsigned(?:\s+(?:int|long(?:\s+long)?))?|u?int(?:32|64)_t|int|long\s+long|size_t|auto)"
    r"\s*$"
)


def find_constant(code: str, name: str) -> Constant | None:
    """The first ``#define name value`` or ``type name = value;`` in the code."""
    escaped = re.escape(name)
    define = re.compile(r"#[ \t]*define[ \t]+" + escaped + r"[ \t]+([^\r\n]*?)[ \t]*$", re.M)
    for m in define.finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if not code[line_start : m.start()].strip() and m.group(1):
            return Constant(name, m.group(1), m.start(1), m.end(1), m.start(), True)
    decl = re.compile(escaped + r"\s*(?:=\s*([^;,{}]+?)|\{\s*([^;,{}]+?)\s*\})\s*[;,]")
    for m in words(decl, code):
        if _INTEGER_TYPE_BEFORE_RE.search(code, max(0, m.start() - 40), m.start()) is None:
            continue
        group = 1 if m.group(1) is not None else 2
        start, end = trimmed(code, m.start(group), m.end(group))
        _, stmt = statement_before(code, m.start())
        return Constant(name, code[start:end], start, end, m.start() - len(stmt.lstrip()), False)
    return None


class Constants:
    """Constant definitions, looked up by name on demand and cached."""

    def __init__(self, code: str) -> None:
        self._code = code
        self._found: dict[str, Constant | None] = {}

    def get(self, name: str) -> Constant | None:
        if name not in self._found:
            self._found[name] = find_constant(self._code, name)
        return self._found[name]
