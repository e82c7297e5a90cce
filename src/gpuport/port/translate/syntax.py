"""What the translator reads of C/C++ around a name: lines and directives, calls, definitions.

The fast walk (:mod:`.walk`) stops at names; these helpers look a little way around one with
the lossless lexer (:mod:`gpuport.syntax.cxx`) where structure matters, and with plain string
scans where a character or two decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from gpuport.syntax.cxx import Kind, Token, tokenize

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
    """Start of the (physical) line holding ``pos``."""
    return max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1


def logical_line_start(text: str, pos: int) -> int:
    """Start of the line holding ``pos``, going back over backslash continuations."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    while start > 0:
        prev_end = start - 1
        if text[prev_end] == "\n" and prev_end > 0 and text[prev_end - 1] == "\r":
            prev_end -= 1
        if prev_end > 0 and text[prev_end - 1] == "\\":
            start = max(text.rfind("\n", 0, prev_end), text.rfind("\r", 0, prev_end - 1)) + 1
            continue
        break
    return start


def starts_line(text: str, pos: int) -> bool:
    """Is ``pos`` the first non-blank character of its (logical) line?"""
    before = text[line_start(text, pos) : pos]
    if before.strip(" \t\f\v"):
        return False
    start = logical_line_start(text, pos)
    return not _CONTINUATION_RE.sub("", text[start:pos]).strip(" \t\f\v")


def directive_end(text: str, pos: int) -> int:
    """The end of the (logical) directive line holding ``pos``."""
    while True:
        newline = NEWLINE_RE.search(text, pos)
        if newline is None:
            return len(text)
        if text[newline.start() - 1] != "\\":
            return newline.start()
        pos = newline.end()


# ---------------------------------------------------------------------------------- tokens


def is_significant(tok: Token) -> bool:
    return tok.kind not in (Kind.WS, Kind.NEWLINE, Kind.COMMENT)


def significant_before(text: str, start: int, pos: int) -> list[str]:
    """The significant tokens of ``text[start:pos]``."""
    return [t.text for t in tokenize(text[start:pos]) if is_significant(t)]


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


def parse_call(text: str, pos: int) -> Call | None:
    """Parse ``(a, b, c)`` after a function name ending at ``pos``: argument spans, or None."""
    chunk = text[pos : pos + _CALL_LOOKAHEAD]
    depth = 0
    offset = 0
    open_paren = -1
    arg_start = -1
    last_end = -1
    args: list[Span] = []
    for tok in tokenize(chunk):
        kind = tok.kind
        start = offset
        offset += len(tok.text)
        if open_paren < 0:
            if kind in (Kind.WS, Kind.NEWLINE, Kind.COMMENT):
                continue
            if tok.text != "(":
                return None
            open_paren = start
            depth = 1
            continue
        if kind in (Kind.WS, Kind.NEWLINE, Kind.COMMENT):
            continue
        if kind is Kind.PUNCT and tok.text in ("(", "[", "{"):
            depth += 1
        elif kind is Kind.PUNCT and tok.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if arg_start >= 0:
                    args.append(Span(pos + arg_start, pos + last_end))
                return Call(pos + open_paren, pos + start, tuple(args))
        elif kind is Kind.PUNCT and tok.text == "," and depth == 1:
            if arg_start < 0:
                return None
            args.append(Span(pos + arg_start, pos + last_end))
            arg_start = -1
            continue
        if arg_start < 0:
            arg_start = start
        last_end = offset
    return None


def is_definition(text: str, start: int, end: int) -> bool:
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
    first = line_start(text, start)
    toks = significant_before(text, line_start(text, max(0, first - 1)), start)
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
    params: list[str]  # the significant tokens of its parameter list


def operator_declaration(text: str, pos: int) -> OperatorDeclaration | None:
    """What follows the word ``operator`` ending at ``pos``, or None when it is not an
    operator followed by a parameter list."""
    chunk = text[pos : pos + 2000]
    op = ""
    depth = 0
    params: list[str] = []
    seen_paren = False
    for tok in tokenize(chunk):
        if not is_significant(tok):
            continue
        if not seen_paren:
            if tok.text == "(" and op:
                seen_paren = True
                depth = 1
                continue
            if tok.kind is Kind.PUNCT or (tok.kind is Kind.IDENT and not op):
                op += tok.text
                if len(op) > 4:
                    return None
                continue
            return None
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
            if depth == 0:
                return OperatorDeclaration(op, params)
        params.append(tok.text)
    return None
