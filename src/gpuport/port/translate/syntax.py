"""What the translator reads of C/C++ around a name: lines and directives, calls, definitions.

The fast walk (:mod:`.walk`) stops at names; these helpers look a little way around one with
the lossless lexer (:mod:`gpuport.syntax.cxx`) where structure matters, and with plain string
scans where a character or two decides. What needs more than a few characters around a name
(where its logical line starts, where a call's parenthesis closes) comes from a
:class:`CodeIndex` built once per file, so that a file of many names on one line, or of many
unclosed calls, is translated in linear time (benchmarks/lexer_adversarial.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from gpuport.syntax.brackets import Brackets
from gpuport.syntax.cxx import Kind, Token, code_only, starts_logical_line, tokenize

NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_CONTINUATION_RE = re.compile(r"\\(?:\r\n|\r|\n)")
# What may come right before a name that is called in an expression (not declared).
_CALL_CONTEXT = frozenset("=(,[{};!?:+-/%^|<~")
# Keywords after which a name followed by '(' is called, not declared.
_EXPRESSION_KEYWORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "sizeof",
        "throw",
        "co_return",
        "co_yield",
        "co_await",
        "new",
        "delete",
        "and",
        "or",
        "not",
        "decltype",
        "alignof",
        "typeid",
        "if",
        "while",
        "for",
        "switch",
    }
)


# ----------------------------------------------------------------------------------- lines


def line_start(text: str, pos: int) -> int:
    """Start of the (physical) line holding ``pos`` (a lone \\r ends a line too). Reads the
    line only: looking for a \\r back to the file's start cost the whole file in files
    without one."""
    newline = text.rfind("\n", 0, pos)
    return max(newline, text.rfind("\r", newline + 1, pos)) + 1


def starts_line(text: str, pos: int) -> bool:
    """Is ``pos`` the first non-blank character of its (logical) line?"""
    return starts_logical_line(text, pos)


class LogicalLines:
    """Where the logical line (physical lines joined by backslash continuations) holding a
    position starts and ends, for one text. Asked mostly in file order and often for many
    names on one line, it keeps the last line found: reading a long line again for each
    name on it was quadratic."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._start = 0
        self._end = -1

    def _find(self, pos: int) -> None:
        if self._start <= pos <= self._end:
            return
        text = self._text
        start = line_start(text, pos)
        while start > 0:
            if not _CONTINUATION_RE.match(text, _break_before(text, start) - 1):
                break
            start = line_start(text, _break_before(text, start) - 1)
        end = pos
        while True:
            newline = NEWLINE_RE.search(text, end)
            if newline is None:
                end = len(text)
                break
            if newline.start() == 0 or text[newline.start() - 1] != "\\":
                end = newline.start()
                break
            end = newline.end()
        self._start, self._end = start, end

    def start(self, pos: int) -> int:
        """Start of the logical line holding ``pos``."""
        self._find(pos)
        return self._start

    def end(self, pos: int) -> int:
        """End of the logical line holding ``pos`` (where its last line break starts)."""
        self._find(pos)
        return self._end


def _break_before(text: str, start: int) -> int:
    """Where the line break ending right before the line start ``start`` begins."""
    return start - 2 if text.startswith("\r\n", start - 2) else start - 1


# ---------------------------------------------------------------------------------- tokens


def is_significant(tok: Token) -> bool:
    return tok.kind not in (Kind.WS, Kind.NEWLINE, Kind.COMMENT)


_ID_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")
_PUNCT_3 = frozenset({"->*", "...", "<=>", "<<=", ">>="})
_PUNCT_2 = frozenset(
    {"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-="}
    | {"*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"}
)


def _is_id_char(ch: str) -> bool:
    return ch in _ID_CHAR or "\u00c0" <= ch <= "\uffff"


def tokens_before(
    code: str, pos: int, count: int, *, floor: int = 0, breaks: int = -1
) -> list[str]:
    """The last ``count`` significant tokens before ``pos``, read backwards in ``code`` (the
    text with comments and literal insides blank: :func:`gpuport.syntax.cxx.code_only`), at
    or after ``floor`` and across at most ``breaks`` line breaks (-1: any). Costs what it
    reads, where tokenizing from the line's start cost the whole line for each name on it. A
    literal reads as its quotes; a number may read as pieces: neither is an identifier."""
    out: list[str] = []
    i = pos
    while len(out) < count:
        while i > floor:
            ch = code[i - 1]
            if ch in " \t\f\v":
                i -= 1
            elif ch in "\r\n":
                if ch == "\n" or not code.startswith("\n", i):
                    if breaks == 0:
                        return out[::-1]
                    breaks -= 1
                i -= 1
            elif ch == "\\" and code.startswith(("\n", "\r"), i):
                i -= 1  # a continuation's backslash
            else:
                break
        if i <= floor:
            break
        j = i - 1
        if _is_id_char(code[j]):
            while j > floor and _is_id_char(code[j - 1]):
                j -= 1
        elif j - 2 >= floor and code[j - 2 : i] in _PUNCT_3:
            j -= 2
        elif j - 1 >= floor and code[j - 1 : i] in _PUNCT_2:
            j -= 1
        out.append(code[j:i])
        i = j
    return out[::-1]


def significant_after(text: str, pos: int) -> list[str]:
    """The first two significant tokens after ``pos`` on its line."""
    out: list[str] = []
    for tok in tokenize(text[pos : pos + 200]):
        if tok.kind is Kind.NEWLINE:
            break
        if is_significant(tok):
            out.append(tok.text)
            if len(out) == 2:
                break
    return out


class LineTokens(NamedTuple):
    """One line's significant tokens."""

    start: int  # where the line starts
    end: int  # the position after its newline
    significant: list[Token]


def line_tokens(text: str) -> Iterator[LineTokens]:
    """The first lines of ``text`` (its first 20,000 characters), each with its tokens."""
    offset = 0
    start = 0
    sig: list[Token] = []
    for tok in tokenize(text[:20000]):
        offset += len(tok.text)
        if tok.kind is Kind.NEWLINE:
            yield LineTokens(start, offset, sig)
            start, sig = offset, []
        elif is_significant(tok):
            sig.append(tok)
    yield LineTokens(start, offset, sig)


# ----------------------------------------------------------------------------------- calls


class Span(NamedTuple):
    """``text[start:end]``."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Call:
    """A call's parentheses and arguments."""

    open_paren: int
    close_paren: int  # position of ')'
    args: tuple[Span, ...]  # each argument, blanks trimmed


_CALL_LOOKAHEAD = 4000  # characters a call may span before gpuport gives up on it
_OPERATOR_LOOKAHEAD = 2000  # the same for an operator's parameter list
_BLANKS_FORWARD_RE = re.compile(r"(?:[ \t\f\v\r\n]++|\\(?:\r\n|\r|\n))*+")


class CodeIndex:
    """What the translator looks up around names in one file, each part made at first use:
    its code text (comments and literal insides blank), logical lines and brackets."""

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def code(self) -> str:
        return code_only(self.text)

    @functools.cached_property
    def lines(self) -> LogicalLines:
        return LogicalLines(self.text)

    @functools.cached_property
    def brackets(self) -> Brackets:
        return Brackets(self.code)


def _open_paren(code: str, pos: int) -> int:
    """The '(' that comes first after ``pos`` past blanks, or -1."""
    blanks = _BLANKS_FORWARD_RE.match(code, pos)
    at = blanks.end() if blanks else pos
    return at if code.startswith("(", at) else -1


def _trimmed(code: str, start: int, end: int) -> Span | None:
    """``code[start:end]`` without the blanks around it, or None when it is all blank."""
    blanks = _BLANKS_FORWARD_RE.match(code, start, end)
    first = blanks.end() if blanks else start
    last = end
    while last > first:
        ch = code[last - 1]
        if ch in " \t\f\v\r\n" or (ch == "\\" and code.startswith(("\n", "\r"), last)):
            last -= 1
        else:
            break
    return Span(first, last) if last > first else None


def parse_call(index: CodeIndex, pos: int) -> Call | None:
    """Parse ``(a, b, c)`` after a function name ending at ``pos``: argument spans, or None."""
    code = index.code
    open_paren = _open_paren(code, pos)
    if open_paren < 0:
        return None
    brackets = index.brackets
    close = brackets.closing(open_paren, pos + _CALL_LOOKAHEAD)
    if close < 0:
        return None
    bounds = [open_paren, *brackets.commas(open_paren), close]
    args: list[Span] = []
    for i in range(len(bounds) - 1):
        arg = _trimmed(code, bounds[i] + 1, bounds[i + 1])
        if arg is not None:
            args.append(arg)
        elif i < len(bounds) - 2:
            return None  # an empty argument before a comma
    return Call(open_paren, close, tuple(args))


def _line_start(text: str, pos: int) -> int:
    """Where the line holding ``pos`` starts: after the last LF, CR or CRLF before it."""
    return max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1


def is_definition(index: CodeIndex, text: str, start: int, end: int) -> bool:
    """Is the name at ``start`` being declared or defined (a function or macro), not called?"""
    n = len(text)
    p = end
    while p < n and text[p] in " \t":
        p += 1
    if p >= n or text[p] != "(":
        return False
    q = start
    while q > 0 and text[q - 1] in " \t\r\n" and start - q < 200:
        q -= 1
    if q == 0 or text[q - 1] in _CALL_CONTEXT:
        return False  # the common case, decided without the lexer: a call in an expression
    # the tokens before the name on its line and the line before, unless that line is a
    # preprocessor directive (`#pragma once`, `#endif`): its words end with it
    line_start = _line_start(text, start)
    previous_end = line_start - 1  # the line break before this line
    if previous_end > 0 and text[previous_end] == "\n" and text[previous_end - 1] == "\r":
        previous_end -= 1  # CRLF
    previous_start = _line_start(text, max(0, previous_end))
    previous = text[previous_start:line_start].lstrip(" \t")
    directive_before = previous.startswith("#") and not previous.rstrip("\r\n").endswith("\\")
    floor = line_start if directive_before else 0
    toks = tokens_before(index.code, start, 3, floor=floor, breaks=1)
    if not toks:
        return False
    if len(toks) >= 2 and toks[-1] == "define" and toks[-2] == "#":
        return True
    prev = toks[-1]
    if prev.isidentifier() and prev not in _EXPRESSION_KEYWORDS:
        return not (len(toks) >= 2 and toks[-2] in (".", "->"))
    if prev in ("*", "&", "&&") and len(toks) >= 2:
        prev2 = toks[-2]
        if not prev2.isidentifier() or prev2 in _EXPRESSION_KEYWORDS:
            return False
        prev3 = toks[-3] if len(toks) >= 3 else ""
        return prev3 in ("", ";", "{", "}", ">") or (
            prev3.isidentifier() and prev3 not in _EXPRESSION_KEYWORDS
        )
    return False


class OperatorDeclaration(NamedTuple):
    op: str  # the operator's spelling: "+", "+=", "<<="
    params: Span  # its parameter list, parentheses included


def operator_declaration(index: CodeIndex, pos: int) -> OperatorDeclaration | None:
    """What follows the word ``operator`` ending at ``pos``, or None when it is not an
    operator followed by a parameter list."""
    code = index.code
    op = ""
    offset = pos
    for tok in tokenize(code[pos : pos + 200]):
        start = offset
        offset += len(tok.text)
        if not is_significant(tok):
            continue
        if tok.text == "(" and op:
            close = index.brackets.closing(start, pos + _OPERATOR_LOOKAHEAD)
            if close < 0:
                return None
            return OperatorDeclaration(op, Span(start, close + 1))
        if tok.kind is Kind.PUNCT or (tok.kind is Kind.IDENT and not op):
            op += tok.text
            if len(op) > 4:
                return None
            continue
        return None
    return None
