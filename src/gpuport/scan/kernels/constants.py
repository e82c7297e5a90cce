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
_ASSIGNED_OR_SEPARATOR_RE = re.compile(r"[={};,]")


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
        return _declared(code, name, m.start(), m)
    return None


def _declared(code: str, name: str, at: int, m: re.Match[str]) -> Constant:
    """The constant declared by ``name`` at ``at`` and its tail's match ``m`` (groups as in
    :data:`_DECLARATION_TAIL`)."""
    group = 1 if m.group(1) is not None else 2
    start, end = trimmed(code, m.start(group), m.end(group))
    _, stmt = statement_before(code, at)
    return Constant(name, code[start:end], start, end, at - len(stmt.lstrip()), False)


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
        self._assigned: dict[str, list[tuple[int, int]]] | None = None

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
        for at, segment in self._assigned.get(name, ()):
            m = _DECLARATION_TAIL_RE.match(code, at + len(name))
            if m is None:
                continue
            if _INTEGER_TYPE_BEFORE_RE.search(code, max(0, at - 40), at) is None:
                continue
            if not self._inside_earlier_match(name, at, segment):
                return _declared(code, name, at, m)
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

    def _index_assigned(self) -> dict[str, list[tuple[int, int]]]:
        """Where each whole word followed by blanks and ``=`` or ``{`` starts, by the word,
        with where its segment starts: past the last ``;``, ``,``, ``{`` or ``}`` before it."""
        code = self._code
        assigned: dict[str, list[tuple[int, int]]] = {}
        segment = 0
        for m in _ASSIGNED_OR_SEPARATOR_RE.finditer(code):
            if m.group() in ";,}":
                segment = m.end()
                continue
            end = m.start()
            while end > 0 and code[end - 1].isspace():
                end -= 1
            start = end
            while start > 0 and _is_name_char(code[start - 1]):
                start -= 1
            if start < end:
                assigned.setdefault(code[start:end], []).append((start, segment))
            if m.group() == "{":
                segment = m.end()
        return assigned

    def _inside_earlier_match(self, name: str, at: int, segment: int) -> bool:
        """Whether a search for ``name`` and its declaration tail from the file's start would
        have passed over ``at`` inside an earlier match (``X = int name = 1;`` ends at the
        ``;`` from ``X``'s tail). Such a match starts after the last ``;``, ``,``, ``{`` or
        ``}`` before ``at`` (``segment``): a tail holds none but its own last ``;`` or ``,``,
        and a name that matches itself is not inside a ``{value}``."""
        code = self._code
        pos = code.find(name, segment, at)
        while pos >= 0:  # as finditer would: the next match starts after this one's end
            tail = _DECLARATION_TAIL_RE.match(code, pos + len(name))
            if tail is None:
                pos = code.find(name, pos + 1, at)
            elif tail.end() > at:
                return True
            else:
                pos = code.find(name, tail.end(), at)
        return False
