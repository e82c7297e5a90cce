"""A lossless lexer for C, C++ and CUDA sources.

Joining the tokens' texts gives back the input exactly, whatever the input: unbalanced quotes
and comments, stray bytes (decode with ``surrogateescape``), CRLF, line continuations and raw
strings all survive. ``scan`` uses it so that rules never fire inside comments or strings;
``port`` uses it to rename whole identifiers only.

Preprocessor directives are tokenized like code (so ``#ifdef __CUDA_ARCH__`` exposes the
identifier) but every token of a directive line carries ``in_directive``; the path of an
``#include <...>`` is one ``HEADER`` token.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from typing import NamedTuple


class Kind(enum.IntEnum):
    IDENT = 1
    NUMBER = 2
    STRING = 3  # includes raw strings and prefixed literals; may be unterminated
    CHAR = 4
    COMMENT = 5  # // line or /* block */; a block may be unterminated
    WS = 6  # spaces, tabs, form feeds and backslash-newline continuations
    NEWLINE = 7  # \n or \r\n or \r
    PUNCT = 8
    HASH = 9  # the '#' that starts a directive
    HEADER = 10  # <path> or "path" after #include
    LAUNCH_OPEN = 11  # <<<
    LAUNCH_CLOSE = 12  # >>>
    OTHER = 13  # anything else (stray bytes, '@', '`', non-ASCII outside identifiers)


class Token(NamedTuple):
    kind: Kind
    text: str
    line: int  # 1-based line where the token starts
    column: int  # 1-based column where the token starts
    in_directive: bool


_PATTERNS: list[tuple[str, str]] = [
    ("NEWLINE", r"\r\n|\r|\n"),
    ("WS", r"(?:[ \t\f\v]|\\(?:\r\n|\r|\n))+"),
    ("COMMENT", r"//(?:[^\r\n\\]|\\(?:\r\n|\r|\n)?)*|/\*(?:.|\n)*?(?:\*/|\Z)"),
    # Raw string: R"delim( ... )delim" with an optional encoding prefix; unterminated runs to EOF.
    (
        "RAW",
        r"(?:u8|u|U|L)?R\"(?P<delim>[^()\\\s\"]{0,16})\((?:.|\n)*?(?:\)(?P=delim)\"|\Z)",
    ),
    ("STRING", r"(?:u8|u|U|L)?\"(?:[^\"\\\r\n]|\\(?:\r\n|.|\n))*(?:\"|(?=[\r\n])|\Z)"),
    ("CHAR", r"(?:u8|u|U|L)?'(?:[^'\\\r\n]|\\(?:\r\n|.|\n))*(?:'|(?=[\r\n])|\Z)"),
    ("IDENT", r"[A-Za-z_$\u00c0-\uffff][A-Za-z0-9_$\u00c0-\uffff]*"),
    # pp-number: digits, digit separators, exponents with signs, suffixes
    ("NUMBER", r"\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*"),
    ("LAUNCH", r"<<<|>>>"),
    (
        "PUNCT",
        r"->\*|\.\.\.|<=>|<<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%="
        r"|&=|\|=|\^=|##|\.\*|[{}\[\]()#;:?.,~!+\-*/%^&|=<>]",
    ),
    ("OTHER", r"(?:.|\n)"),
]
_MASTER = re.compile("|".join(f"(?P<{name}>{pat})" for name, pat in _PATTERNS), re.DOTALL)
_HEADER_RE = re.compile(r"<[^>\r\n]*>|\"[^\"\r\n]*\"")
_KIND_OF = {
    "NEWLINE": Kind.NEWLINE,
    "WS": Kind.WS,
    "COMMENT": Kind.COMMENT,
    "RAW": Kind.STRING,
    "STRING": Kind.STRING,
    "CHAR": Kind.CHAR,
    "IDENT": Kind.IDENT,
    "NUMBER": Kind.NUMBER,
    "PUNCT": Kind.PUNCT,
    "OTHER": Kind.OTHER,
}


def tokenize(text: str) -> Iterator[Token]:
    """Yield the tokens of ``text``; ``"".join(t.text for t in tokenize(s)) == s`` always."""
    line = 1
    line_start = 0
    pos = 0
    n = len(text)
    in_directive = False
    at_line_start = True  # only whitespace/comments seen since the last newline
    expect_header = False  # just saw `# include`
    directive_tokens = 0
    match = _MASTER.match
    while pos < n:
        if expect_header:
            hm = _HEADER_RE.match(text, pos)
            expect_header = False
            if hm:
                yield Token(Kind.HEADER, hm.group(), line, pos - line_start + 1, True)
                pos = hm.end()
                continue
        m = match(text, pos)
        assert m is not None  # OTHER matches any character
        group = m.lastgroup
        assert group is not None
        tok_text = m.group()
        column = pos - line_start + 1
        if group == "LAUNCH":
            kind = Kind.LAUNCH_OPEN if tok_text == "<<<" else Kind.LAUNCH_CLOSE
        elif group == "PUNCT" and tok_text == "#" and at_line_start:
            kind = Kind.HASH
        else:
            kind = _KIND_OF[group]
        if kind is Kind.HASH:
            in_directive = True
            directive_tokens = 0
        if kind is Kind.NEWLINE:
            yield Token(kind, tok_text, line, column, in_directive)
            in_directive = False
            at_line_start = True
            line += 1
            pos = m.end()
            line_start = pos
            continue
        yield Token(kind, tok_text, line, column, in_directive)
        if in_directive and kind not in (Kind.WS, Kind.COMMENT):
            directive_tokens += 1
            # `#include`, `#include_next`, `#import`: the next non-blank thing is a header name
            if directive_tokens == 2 and kind is Kind.IDENT and tok_text in _INCLUDE_WORDS:
                expect_header = _skip_blank_then_header(text, m.end())
                if expect_header:
                    ws = _BLANKS_RE.match(text, m.end())
                    assert ws is not None
                    if ws.end() > m.end():
                        yield Token(Kind.WS, ws.group(), line, m.end() - line_start + 1, True)
                    pos = ws.end()
                    continue
        if kind not in (Kind.WS, Kind.COMMENT):
            at_line_start = False
        # multi-line tokens (block comments, continuations, raw strings) move the line count
        pos, line, line_start = _advance(tok_text, line, line_start, m.start())


_INCLUDE_WORDS = frozenset({"include", "include_next", "import"})
_NL_RE = re.compile(r"\r\n|\r|\n")


_BLANK_THEN_HEADER_RE = re.compile(r"[ \t]*[<\"]")
_BLANKS_RE = re.compile(r"[ \t]*")


def _skip_blank_then_header(text: str, pos: int) -> bool:
    return _BLANK_THEN_HEADER_RE.match(text, pos) is not None


def _advance(tok_text: str, line: int, line_start: int, tok_start: int) -> tuple[int, int, int]:
    """Position after a token, with the line counter moved past any newlines inside it."""
    end = tok_start + len(tok_text)
    newlines = list(_NL_RE.finditer(tok_text))
    if newlines:
        return end, line + len(newlines), tok_start + newlines[-1].end()
    return end, line, line_start


def significant(tokens: Iterator[Token] | list[Token]) -> list[Token]:
    """Tokens without whitespace, newlines and comments: what a parser would look at."""
    return [t for t in tokens if t.kind not in (Kind.WS, Kind.NEWLINE, Kind.COMMENT)]


_ID_CHARS = r"A-Za-z0-9_$\u00c0-\uffff"
# What may stand between a line's start, its '#' and `include`: blanks, continuations and
# one-line block comments.
_GAP = r"(?:[ \t]|\\(?:\r\n|\r|\n)|/\*(?:(?!\*/)[^\r\n])*\*/)*"
# Only the spans code_only changes (comments, literals) or must keep whole (pp-numbers with
# digit separators, #include headers) are matched; identifiers and punctuation are skipped
# by the regex engine itself, which is what makes this path fast.
_CODE_ONLY_RE = re.compile(
    rf"""
    (?P<include>(?:^(?<!\\\n)(?<!\\\r\n)|(?<=\r)(?<!\\\r)){_GAP}\#{_GAP}(?:include|include_next|import)[ \t]*(?:<[^>\r\n]*>|"[^"\r\n]*"))
  | (?P<comment>//(?:[^\r\n\\]|\\(?:\r\n|\r|\n)?)*|/\*(?:.|\n)*?(?:\*/|\Z))
  | (?P<raw>(?:(?<![{_ID_CHARS}])(?:u8|u|U|L))?(?<![{_ID_CHARS}])R"(?P<delim>[^()\\\s"]{{0,16}})\(
        (?:.|\n)*?(?:\)(?P=delim)"|\Z))
  | (?P<literal>(?:(?<![{_ID_CHARS}])(?:u8|u|U|L))?
        (?:"(?:[^"\\\r\n]|\\(?:\r\n|.|\n))*(?:"|(?=[\r\n])|\Z)
          |'(?:[^'\\\r\n]|\\(?:\r\n|.|\n))*(?:'|(?=[\r\n])|\Z)))
  | (?P<number>(?<![{_ID_CHARS}.])\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)
    """,
    re.DOTALL | re.MULTILINE | re.VERBOSE,
)


def code_only(text: str) -> str:
    """``text`` with comments and the insides of string/char literals blanked to spaces.

    Offsets and line numbers are unchanged, so a regular expression run over the result
    finds only code, at the right place in the original. Agrees with :func:`tokenize`
    (see :func:`code_only_by_tokens`) except for an ``#include "x"`` that follows a block
    comment on its own line, whose path this blanks.
    """
    return _CODE_ONLY_RE.sub(_code_only_replacement, text)


def _code_only_replacement(m: re.Match[str]) -> str:
    kind = m.lastgroup
    if kind == "comment":
        return _blank(m.group())
    if kind in ("raw", "literal", "delim"):  # "delim" is nested in "raw"
        return _blank_literal(m.group())
    if kind == "include" and "/*" in m.group():
        return code_only_by_tokens(m.group())  # blank the comments, keep the header
    return m.group()


def code_only_by_tokens(text: str) -> str:
    """The reference version of :func:`code_only`, token by token (slower)."""
    out: list[str] = []
    for tok in tokenize(text):
        if tok.kind is Kind.COMMENT:
            out.append(_blank(tok.text))
        elif tok.kind in (Kind.STRING, Kind.CHAR):
            out.append(_blank_literal(tok.text))
        else:
            out.append(tok.text)
    return "".join(out)


def _blank(s: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in s)


def _blank_literal(s: str) -> str:
    # keep the quotes so that code like `f("x")` still looks like a call with one argument
    if len(s) >= 2 and s[-1] in "\"'":
        q = s.find(s[-1])
        if q < len(s) - 1:
            return s[: q + 1] + _blank(s[q + 1 : -1]) + s[-1]
    return _blank(s)
