"""Statements in code text: where the one before an offset starts, which variable it assigns, and
the operand left of an operator."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate

from gpuport.scan.kernels.brackets import match_backward

_PLUS_ONE = (1).__add__
_PLAIN_ASSIGN_RE = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)")
_LAST_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*$")
# Words that end a statement's head without naming a variable: `return x = ...` is no
# declaration, `new T[n]` no array bound.
CPP_KEYWORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "sizeof",
        "delete",
        "throw",
        "new",
        "co_return",
        "co_yield",
        "goto",
        "alignof",
        "decltype",
        "typeid",
    }
)


def statement_before(code: str, pos: int) -> tuple[int, str]:
    """(start, text) of the statement that runs up to ``pos`` (at most 400 characters)."""
    floor = max(0, pos - 400)
    start = max(
        code.rfind(";", floor, pos), code.rfind("{", floor, pos), code.rfind("}", floor, pos)
    )
    start = max(start + 1, floor)
    return start, code[start:pos]


def assigned_name(code: str, pos: int) -> tuple[str, int] | None:
    """The variable that the expression at ``pos`` initialises or is assigned to, and where."""
    start, stmt = statement_before(code, pos)
    eq = _PLAIN_ASSIGN_RE.search(stmt)
    if eq is None:
        return None
    name = _LAST_NAME_RE.search(stmt, 0, eq.start())
    if name is None or name.group(1) in CPP_KEYWORDS:
        return None
    return name.group(1), start + name.start(1)


class Statements:
    """Statement starts (after each ``;``, ``{`` or ``}``) of one file's code, indexed once.

    Answers what :func:`statement_before` and :func:`assigned_name` would, by bisecting
    instead of three ``rfind`` calls per question, and remembers each statement's assignment.
    """

    __slots__ = ("_assigned", "_bounds", "_code")

    def __init__(self, code: str) -> None:
        self._code = code
        # Offsets of every ';', '{' and '}', after a -1 sentinel (and ending with len(code)):
        # piece i of the split ends where boundary i+1 stands. Summed in C, not Python;
        # two replaces and a split on one character are three times faster than re.split.
        pieces = code.replace("{", ";").replace("}", ";").split(";")
        self._bounds = list(accumulate(map(_PLUS_ONE, map(len, pieces)), initial=-1))
        # statement start -> (offset of its first plain '=', what assigned_name answered)
        self._assigned: dict[int, tuple[int, tuple[str, int] | None]] = {}

    def before(self, pos: int) -> tuple[int, str]:
        """``statement_before(code, pos)``."""
        bounds = self._bounds
        start = max(bounds[bisect.bisect_left(bounds, pos) - 1] + 1, pos - 400, 0)
        return start, self._code[start:pos]

    def assigned_name(self, pos: int) -> tuple[str, int] | None:
        """``assigned_name(code, pos)``.

        Every position after a statement's first plain '=' (and the character after it,
        which the look-ahead reads) gets the same answer, so it is worked out once.
        """
        start, stmt = self.before(pos)
        known = self._assigned.get(start)
        if known is not None and known[0] + 1 < pos:
            return known[1]
        eq = _PLAIN_ASSIGN_RE.search(stmt)
        if eq is None:
            return None
        name = _LAST_NAME_RE.search(stmt, 0, eq.start())
        found = None
        if name is not None and name.group(1) not in CPP_KEYWORDS:
            found = name.group(1), start + name.start(1)
        if start + eq.start() + 1 < pos:
            self._assigned[start] = (start + eq.start(), found)
        return found


def left_operand(code: str, op_at: int) -> str:
    """The expression text just left of a binary operator: a name chain or a bracketed group."""
    i = op_at - 1
    while i >= 0 and code[i] in " \t":
        i -= 1
    if i < 0:
        return ""
    if code[i] == ")":
        open_at = match_backward(code, i)
        if open_at < 0:
            return ""
        # a call: include the function name
        j = open_at - 1
        while j >= 0 and (code[j].isalnum() or code[j] in "_."):
            j -= 1
        return code[j + 1 : i + 1]
    end = i + 1
    while i >= 0 and (code[i].isalnum() or code[i] in "_."):
        i -= 1
        if i >= 1 and code[i - 1 : i + 1] == "->":
            i -= 2
    return code[i + 1 : end]
