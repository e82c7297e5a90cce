"""Bracket matching, argument splitting and block ends in code text (comments and strings blanked)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from gpuport.scan.kernels.words import words
from gpuport.syntax.brackets import Brackets

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")": "(", "]": "[", "}": "{"}
_BRACES_RE = re.compile(r"[{}]")
_STATEMENT_END_RE = re.compile(r"[;{}]")
MAX_SPAN = 20_000  # how far a bracket match may run before we give up (unbalanced input)


def match_forward(brackets: Brackets, open_at: int, span: int = MAX_SPAN) -> int:
    """Offset of the bracket closing the one at ``open_at`` (within ``span``), or -1.

    ``brackets`` pairs the file's brackets in one pass (:attr:`KernelSource.brackets`): reading
    ahead from each bracket instead took up to ``span`` characters per unclosed call (issue 10).
    """
    return brackets.closing(open_at, open_at + span)


def match_backward(code: str, close_at: int) -> int:
    """Offset of the bracket opening the one at ``close_at``, or -1."""
    depth = 0
    stop = max(-1, close_at - 2_000)
    for i in range(close_at, stop, -1):
        ch = code[i]
        if ch in CLOSE:
            depth += 1
        elif ch in OPEN:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_args(code: str, brackets: Brackets, open_at: int, close_at: int) -> list[tuple[int, int]]:
    """(start, end) offsets of the top-level, comma-separated arguments inside brackets
    (``close_at`` from :func:`match_forward`, whose pass found the commas)."""
    bounds = [open_at, *brackets.commas(open_at), close_at]
    if len(bounds) == 2 and not code[open_at + 1 : close_at].strip():
        return []
    return [(bounds[i] + 1, bounds[i + 1]) for i in range(len(bounds) - 1)]


def trimmed(code: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding whitespace."""
    while start < end and code[start].isspace():
        start += 1
    while end > start and code[end - 1].isspace():
        end -= 1
    return start, end


def enclosing_bracket(code: str, pos: int, floor: int) -> tuple[str, int] | None:
    """The innermost unclosed ``[``, ``(`` or ``<`` before ``pos`` (not before ``floor``)."""
    depth = {"]": 0, ")": 0, ">": 0}
    opener = {"[": "]", "(": ")", "<": ">"}
    for i in range(pos - 1, floor - 1, -1):
        ch = code[i]
        if ch in depth:
            if ch == ">" and code[i - 1 : i + 1] in ("->", ">>"):
                continue
            depth[ch] += 1
        elif ch in opener:
            if ch == "<" and code[i - 1 : i + 1] == "<<":
                continue
            closer = opener[ch]
            if depth[closer]:
                depth[closer] -= 1
            else:
                return ch, i
    return None


def scope_start(code: str, pos: int) -> int:
    """Offset of the ``{`` opening the block that contains ``pos`` (at most MAX_SPAN back), or
    -1 at file level."""
    depth = 0
    for m in reversed(list(_BRACES_RE.finditer(code, max(0, pos - MAX_SPAN), pos))):
        if m.group() == "}":
            depth += 1
        elif depth:
            depth -= 1
        else:
            return m.start()
    return -1


def scope_end(code: str, pos: int) -> int:
    """Offset of the ``}`` closing the block that contains ``pos`` (at most MAX_SPAN on)."""
    depth = 0
    limit = min(len(code), pos + MAX_SPAN)
    for m in _BRACES_RE.finditer(code, pos, limit):
        if m.group() == "{":
            depth += 1
        elif depth == 0:
            return m.start()
        else:
            depth -= 1
    return limit


def body_after(code: str, brackets: Brackets, after: int) -> tuple[int, int]:
    """The span of the statement or ``{}`` block that starts after ``after`` (a loop's body)."""
    i = after
    while i < len(code) and code[i].isspace():
        i += 1
    if i < len(code) and code[i] == "{":
        close_at = match_forward(brackets, i)
        return i, (close_at if close_at >= 0 else min(len(code), i + MAX_SPAN))
    semi = code.find(";", i)
    return i, (semi if semi >= 0 else len(code))


def function_bodies(
    code: str,
    brackets: Brackets,
    qualifiers: re.Pattern[str],
    keep: Callable[[re.Match[str], int], bool] = lambda _m, _brace: True,
) -> Iterator[tuple[re.Match[str], int, int]]:
    """(qualifier match, ``{``, ``}``) of each function a ``qualifiers`` word
    (``__global__``, ``__device__``) declares with a body, in file order. A qualifier whose
    statement ends before a ``{``, or whose head has no ``(`` before an ``=`` (a variable), is
    passed over, as is one ``keep(match, brace)`` turns down; qualifiers inside a body already
    yielded are skipped (a ``__device__`` lambda in a kernel is part of the kernel)."""
    last_end = -1
    for m in words(qualifiers, code):
        if m.start() < last_end:
            continue
        stop = _STATEMENT_END_RE.search(code, m.end())
        if stop is None or stop.group() != "{":
            continue
        head = code[m.end() : stop.start()]
        if "(" not in head or "=" in head.split("(", 1)[0]:
            continue  # a variable, not a function
        if not keep(m, stop.start()):
            continue
        close_at = match_forward(brackets, stop.start(), len(code))
        if close_at < 0:
            continue
        last_end = close_at
        yield m, stop.start(), close_at
