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


# ``#define NAME value`` at a line's start (checked by hand), any NAME: one pass per file. The
# value is what a ``#define`` of that one name would match (``$`` before a line feed only).
_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+([^ \t\r\n]+)[ \t]+([^\r\n]*?)[ \t]*$", re.M)
# What follows a declared constant's name: ``= value`` or ``{value}``, then ``;`` or ``,``.
_DECLARATION_TAIL = r"\s*(?:=\s*([^;,{}]+?)|\{\s*([^;,{}]+?)\s*\})\s*[;,]"
_DECLARATION_TAIL_RE = re.compile(_DECLARATION_TAIL)
_ASSIGNED_RE = re.compile(r"[={]")


def find_constant(code: str, name: str) -> Constant | None:
    """The first ``#define name value`` or ``type name = value;`` in the code.

    One search of the whole file per name: :class:`Constants` answers the same from indexes
    built in one pass, and this stays as the definition it must agree with (tests)."""
    escaped = re.escape(name)
    define = re.compile(r"#[ \t]*define[ \t]+" + escaped + r"[ \t]+([^\r\n]*?)[ \t]*$", re.M)
    for m in define.finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if not code[line_start : m.start()].strip() and m.group(1):
            return Constant(name, m.group(1), m.start(1), m.end(1), m.start(), True)
    decl = re.compile(escaped + _DECLARATION_TAIL)
    for m in words(decl, code):
        if _INTEGER_TYPE_BEFORE_RE.search(code, max(0, m.start() - 40), m.start()) is None:
            continue
        return _declared(code, name, m)
    return None


def _declared(code: str, name: str, m: re.Match[str]) -> Constant:
    """The constant that a declaration's match (name, then :data:`_DECLARATION_TAIL`) gives."""
    group = 1 if m.group(1) is not None else 2
    start, end = trimmed(code, m.start(group), m.end(group))
    _, stmt = statement_before(code, m.start())
    return Constant(name, code[start:end], start, end, m.start() - len(stmt.lstrip()), False)


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"  # as words.word_start reads a word's start


class Constants:
    """Constant definitions, looked up by name: the ``#define`` lines and the names assigned
    with ``=`` or ``{`` are each indexed in one pass over the file at first use (a search of
    the file for each name was quadratic on many masks named by distinct macros, issue 10).
    Answers are :func:`find_constant`'s."""

    def __init__(self, code: str) -> None:
        self._code = code
        self._found: dict[str, Constant | None] = {}
        self._defines: dict[str, Constant] | None = None
        self._assigned: dict[str, list[int]] | None = None

    def get(self, name: str) -> Constant | None:
        if name not in self._found:
            self._found[name] = self._find(name)
        return self._found[name]

    def _find(self, name: str) -> Constant | None:
        if self._defines is None:
            self._defines = self._index_defines()
        define = self._defines.get(name)
        if define is not None:
            return define
        if self._assigned is None:
            self._assigned = self._index_assigned()
        code = self._code
        for at in self._assigned.get(name, ()):
            m = _DECLARATION_TAIL_RE.match(code, at + len(name))
            if m is None:
                continue
            if _INTEGER_TYPE_BEFORE_RE.search(code, max(0, at - 40), at) is None:
                continue
            if self._inside_earlier_match(name, at):
                continue
            decl = re.compile(re.escape(name) + _DECLARATION_TAIL).match(code, at)
            if decl is not None:
                return _declared(code, name, decl)
        return None

    def _index_defines(self) -> dict[str, Constant]:
        """The first ``#define`` of each name that opens its line and has a value."""
        code = self._code
        defines: dict[str, Constant] = {}
        if "define" not in code:
            return defines
        for m in _DEFINE_RE.finditer(code):
            name = m.group(1)
            if name in defines or not m.group(2):
                continue
            line_start = code.rfind("\n", 0, m.start()) + 1
            if not code[line_start : m.start()].strip():
                defines[name] = Constant(name, m.group(2), m.start(2), m.end(2), m.start(), True)
        return defines

    def _index_assigned(self) -> dict[str, list[int]]:
        """Where each whole word followed by blanks and ``=`` or ``{`` starts, by the word."""
        code = self._code
        assigned: dict[str, list[int]] = {}
        for m in _ASSIGNED_RE.finditer(code):
            end = m.start()
            while end > 0 and code[end - 1].isspace():
                end -= 1
            start = end
            while start > 0 and _is_name_char(code[start - 1]):
                start -= 1
            if start < end:
                assigned.setdefault(code[start:end], []).append(start)
        return assigned

    def _inside_earlier_match(self, name: str, at: int) -> bool:
        """Whether a search for ``name`` and its declaration tail from the file's start would
        have passed over ``at`` inside an earlier match (``X = int name = 1;`` ends at the
        ``;`` from ``X``'s tail). Such a match starts after the last ``;``, ``,``, ``{`` or
        ``}`` before ``at``: a tail holds none but its own last ``;`` or ``,``, and a name
        that matches itself is not inside a ``{value}``."""
        code = self._code
        segment = max(code.rfind(ch, 0, at) for ch in ";,{}") + 1
        for m in re.compile(re.escape(name) + _DECLARATION_TAIL).finditer(code, segment):
            if m.start() >= at:
                return False
            if m.end() > at:
                return True
        return False
