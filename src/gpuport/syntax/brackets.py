"""C/C++ brackets paired with their closers in one pass, for port's translator and scan's rules.

Looking for a bracket's closer from the bracket on costs up to a lookahead per bracket: on
``f(f(f(...`` without an end that is quadratic in effect (issue 10; benchmarks/lexer_adversarial.py).
:class:`Brackets` reads the code once, pairing every bracket as it goes, and answers each
question from what it has read.
"""

from __future__ import annotations

import re

# Brackets and commas in code, and the header names of #include lines (which are kept in
# code_only's text, and may hold a bracket). Not only at a line's start: a look back at every
# character made the pass twice as slow.
_WITH_HEADER_NAMES_RE = re.compile(
    r"\#[ \t]*(?:include_next|include|import)[ \t]*(?:<[^>\r\n]*+>|\"[^\"\r\n]*+\")"
    r"|[()\[\]{},]"
)
_BRACKETS_AND_COMMAS_RE = re.compile(r"[()\[\]{},]")


class Brackets:
    """Brackets of a file's code (``code_only`` text) paired with their closing ones, and the
    commas directly inside each, found in one pass that goes on from question to question.

    Any closer closes the innermost open bracket, whatever its kind, as a count of depth
    would; a closer with nothing open is passed over. The pass starts afresh at a bracket
    before or past what it has read, since brackets before one do not change how it and the
    ones after it pair: questions asked in file order (one rule's, or the translator's) read
    the file once. With ``header_names`` the brackets in ``#include <...>`` names are not
    brackets (the translator reads headers there); without, every bracket character is one.
    """

    def __init__(self, code: str, *, header_names: bool = True) -> None:
        self._code = code
        self._pattern = _WITH_HEADER_NAMES_RE if header_names else _BRACKETS_AND_COMMAS_RE
        self._from = 0
        self._to = 0
        self._stack: list[int] = []
        self._closing: dict[int, int] = {}
        self._commas: dict[int, list[int]] = {}

    def _read(self, open_at: int, limit: int) -> None:
        if not self._from <= open_at < self._to:
            self._from = self._to = open_at
            self._stack, self._closing, self._commas = [], {}, {}
        if limit <= self._to:
            return
        stack = self._stack
        closing = self._closing
        commas = self._commas
        for m in self._pattern.finditer(self._code, self._to, limit):
            ch = m.group()
            if ch == ",":
                if stack:
                    commas.setdefault(stack[-1], []).append(m.start())
            elif ch in ("(", "[", "{"):
                stack.append(m.start())
            elif ch in (")", "]", "}") and stack:
                closing[stack.pop()] = m.start()
        self._to = limit

    def closing(self, open_at: int, limit: int) -> int:
        """Where the bracket at ``open_at`` closes, or -1 when not before ``limit``."""
        self._read(open_at, min(limit, len(self._code)))
        close = self._closing.get(open_at, -1)
        return close if close < limit else -1

    def commas(self, open_at: int) -> list[int]:
        """The commas directly inside the bracket at ``open_at`` (after :meth:`closing`)."""
        return self._commas.get(open_at, [])
