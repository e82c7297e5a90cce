"""A lossless lexer for C, C++ and CUDA sources.

Joining the tokens' texts gives back the input exactly, whatever the input: unbalanced quotes
and comments, stray bytes (decode with ``surrogateescape``), CRLF, line continuations and raw
strings all survive. ``scan`` uses it so that rules never fire inside comments or strings;
``port`` uses it to rename whole identifiers only.

Preprocessor directives are tokenized like code (so ``#ifdef __CUDA_ARCH__`` exposes the
identifier) but every token of a directive line carries ``in_directive``; the path of an
``#include <...>`` is one ``HEADER`` token.

Why not a library: measured with ``benchmarks/cxx_lexer.py`` over the CUDA 13.0 toolkit's
``include/`` folder (1,799 files, 19 MB; benchmarks/results/cxx_lexer.md), :func:`code_only`
blanks comments and literals at 28.3 MB/s, tree-sitter-cuda (a C parser, but walked from
Python) at 5.9 MB/s and Pygments' CudaLexer at 1.5 MB/s; and both libraries leave the
comments and strings inside ``#define`` bodies unread (tree-sitter keeps a macro body as one
opaque argument, Pygments a directive line as one token), so they gave a different text on
190 and 158 of those files, such as the format strings of the ``CUDA_CHECK`` macros that
nearly every CUDA project has.

Lexing is linear in the input's size, whatever it holds (benchmarks/lexer_adversarial.py times
adversarial shapes up to 1 MB; the growth tests in tests/core/test_lexer.py).
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
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


# The token rules, as regular-expression text (also for the fast scanners: code_only, the
# port translator; tests check that they agree with tokenize() on what is code). Each rule that
# starts a comment or literal matches whatever follows its opening, so the engine never
# backtracks out of one: an open string or character literal runs to its line's end (a
# backslash escapes the next character, a line break or nothing at the end of the text), an
# open block comment or raw string to the end of the text. Possessive quantifiers (``*+``,
# ``++``) keep that so: on adversarial input (``"\\"\\`` repeated, a last line ending in a
# backslash) a rule that could fail after reading to the line's end made lexing quadratic
# (benchmarks/lexer_adversarial.py).
COMMENT_RE_TEXT = r"//(?:[^\r\n\\]++|\\(?:\r\n|\r|\n)?)*+|/\*(?:[^*]++|\*(?!/))*+(?:\*/|\Z)"
RAW_RE_TEXT = (
    r"(?:u8|u|U|L)?R\"(?P<delim>[^()\\\s\"]{0,16})\("
    r"(?:[^)]++|\)(?!(?P=delim)\"))*+(?:\)(?P=delim)\"|\Z)"
)
STRING_RE_TEXT = r"(?:u8|u|U|L)?\"(?:[^\"\\\r\n]++|\\(?:\r\n|.|\n)?)*+(?:\"|(?=[\r\n])|\Z)"
CHAR_RE_TEXT = r"(?:u8|u|U|L)?'(?:[^'\\\r\n]++|\\(?:\r\n|.|\n)?)*+(?:'|(?=[\r\n])|\Z)"
NUMBER_RE_TEXT = r"[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*+"

_PATTERNS: list[tuple[str, str]] = [
    ("NEWLINE", r"\r\n|\r|\n"),
    ("WS", r"(?:[ \t\f\v]|\\(?:\r\n|\r|\n))++"),
    ("COMMENT", COMMENT_RE_TEXT),
    # Raw string: R"delim( ... )delim" with an optional encoding prefix; unterminated runs to EOF.
    ("RAW", RAW_RE_TEXT),
    ("STRING", STRING_RE_TEXT),
    ("CHAR", CHAR_RE_TEXT),
    ("IDENT", r"[A-Za-z_$\u00c0-\uffff][A-Za-z0-9_$\u00c0-\uffff]*+"),
    # pp-number: digits, digit separators, exponents with signs, suffixes
    ("NUMBER", rf"\.?{NUMBER_RE_TEXT}"),
    ("LAUNCH", r"<<<|>>>"),
    (
        "PUNCT",
        r"->\*|\.\.\.|<=>|<<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%="
        r"|&=|\|=|\^=|##|\.\*|[{}\[\]()#;:?.,~!+\-*/%^&|=<>]",
    ),
    ("OTHER", r"(?:.|\n)"),
]


# Compiled on first use: a character class reaching U+FFFF costs the compiler a pass over 65,000
# code points (about 5 ms a pattern), which a scan of Python-only code would pay for nothing.
@functools.cache
def _master() -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{name}>{pat})" for name, pat in _PATTERNS), re.DOTALL)


HEADER_RE = re.compile(r"<[^>\r\n]*+>|\"[^\"\r\n]*+\"")
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
    match = _master().match
    while pos < n:
        if expect_header:
            hm = HEADER_RE.match(text, pos)
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


_BLANK_THEN_HEADER_RE = re.compile(r"[ \t]*[<\"]")
_BLANKS_RE = re.compile(r"[ \t]*")


def _skip_blank_then_header(text: str, pos: int) -> bool:
    return _BLANK_THEN_HEADER_RE.match(text, pos) is not None


def _advance(tok_text: str, line: int, line_start: int, tok_start: int) -> tuple[int, int, int]:
    """Position after a token, with the line counter moved past any newlines inside it
    (\\r\\n, \\r and \\n each count once; counted in C, not match by match)."""
    end = tok_start + len(tok_text)
    last = max(tok_text.rfind("\n"), tok_text.rfind("\r"))
    if last < 0:
        return end, line, line_start
    breaks = tok_text.count("\n") + tok_text.count("\r") - tok_text.count("\r\n")
    return end, line + breaks, tok_start + last + 1


def significant(tokens: Iterator[Token] | list[Token]) -> list[Token]:
    """Tokens without whitespace, newlines and comments: what a parser would look at."""
    return [t for t in tokens if t.kind not in (Kind.WS, Kind.NEWLINE, Kind.COMMENT)]


# Identifier characters (the IDENT rule above), for whole-word tests.
ID_CHARS = r"A-Za-z0-9_$\u00c0-\uffff"
ID_START_CHARS = r"A-Za-z_$\u00c0-\uffff"

# Between '#' and `include` the lexer allows blanks, continuations and comments.
DIRECTIVE_GAP_RE_TEXT = rf"(?:(?:[ \t\f\v]|\\(?:\r\n|\r|\n))++|{COMMENT_RE_TEXT})*+"


@functools.cache
def _any_token() -> re.Pattern[str]:
    """One identifier or one character (compiled on first use, as :func:`_master`)."""
    return re.compile(rf"[{ID_START_CHARS}][{ID_CHARS}]*|.", re.DOTALL)


# `#include` up to its header name, which is read only once the '#' is known to start its line
# (HEADER_RE): a pattern that read the name itself would read to the line's end at every
# `#include <` of a line that never closes it.
INCLUDE_RE_TEXT = (
    rf"\#(?P<gap>{DIRECTIVE_GAP_RE_TEXT})(?:include_next|include|import)(?![{ID_CHARS}])[ \t]*"
    r"(?=[<\"])"
)


@functools.cache
def _code_walker(skip_only: bool = False) -> re.Pattern[str]:
    """Walk for :func:`code_only`: skip code, stop at comments, literals, #include."""
    identifier = rf"(?!(?:u8|u|U|L)?R\"|(?:u8|u|U|L)[\"'])[{ID_START_CHARS}][{ID_CHARS}]*+"
    skip = "|".join(
        [
            rf"[^/\"'\#{ID_CHARS}]++",
            identifier,
            NUMBER_RE_TEXT,
            r"/(?![/*])",
            rf"\#(?!{DIRECTIVE_GAP_RE_TEXT}(?:include_next|include|import)(?![{ID_CHARS}])[ \t]*[<\"])",
        ]
    )
    if skip_only:
        return re.compile(f"(?:{skip})*+", re.DOTALL)
    stops = [
        f"(?P<inc>{INCLUDE_RE_TEXT})",
        f"(?P<com>{COMMENT_RE_TEXT})",
        f"(?P<lit>{RAW_RE_TEXT}|{STRING_RE_TEXT}|{CHAR_RE_TEXT})",
        r"(?P<end>\Z)",
    ]
    return re.compile(f"(?:{skip})*+(?:{'|'.join(stops)})", re.DOTALL)


_NOT_NEWLINE_RE = re.compile(r"[^\r\n]")
_COMMENT_RE = re.compile(COMMENT_RE_TEXT, re.DOTALL)


def _blank_match(m: re.Match[str]) -> str:
    return _blank(m.group())


def _blank(s: str) -> str:
    if "\n" not in s and "\r" not in s:
        return " " * len(s)
    return _NOT_NEWLINE_RE.sub(" ", s)


def _blank_literal(s: str) -> str:
    # the quotes stay, the inside turns to spaces
    if len(s) >= 2 and s[-1] in "\"'":
        q = s.find(s[-1])
        if q < len(s) - 1:
            return s[: q + 1] + _blank(s[q + 1 : -1]) + s[-1]
    return _blank(s)


_NO_COMMENTS: dict[int, int] = {}
_NO_LITERALS: frozenset[int] = frozenset()


def starts_logical_line(
    text: str,
    pos: int,
    comment_starts: Mapping[int, int] = _NO_COMMENTS,
    literal_ends: AbstractSet[int] = _NO_LITERALS,
) -> bool:
    """Is the '#' at ``pos`` a directive by the lexer's rule: nothing but blanks,
    continuations and comments since the last newline outside a comment? ``comment_starts``
    maps the end of each comment before ``pos`` to its start (none: a comment is not blank).
    Reads back over the blanks only, so a '#' in the middle of a long line costs one step.

    A backslash that ends a string or char literal (``"\\`` left open at the end of its line)
    is part of the literal, not a line continuation: a continuation would have been read into
    the literal."""
    i = pos
    while i > 0:
        ch = text[i - 1]
        if ch in " \t\f\v":
            i -= 1
            continue
        if ch in "\r\n":
            j = i - 1
            if ch == "\n" and j > 0 and text[j - 1] == "\r":
                j -= 1
            if j > 0 and text[j - 1] == "\\" and j not in literal_ends:
                i = j - 1  # a backslash continuation is blank
                continue
            return True
        start = comment_starts.get(i)
        if start is None:
            return False
        i = start
    return True


def code_only(text: str) -> str:
    """``text`` with comments and the insides of string/char literals blanked to spaces.

    Offsets and line numbers are unchanged, so a regular expression run over the result
    finds only code, at the right place in the original. The same text as
    :func:`code_only_by_tokens`, many times faster: the regular-expression engine steps over
    code, and Python sees only comments, literals and ``#include`` lines."""
    walker = _code_walker().match
    out: list[str] = []
    comment_starts: dict[int, int] = {}
    literal_ends: set[int] = set()
    pos = 0
    while True:
        m = walker(text, pos)
        if m is None:  # a token no rule takes whole (`R"x` without '('): step over it
            stop = _code_walker(True).match(text, pos)
            at = stop.end() if stop else pos
            token = _any_token().match(text, at)
            end = at + (len(token.group()) if token else 1)
            out.append(text[pos:end])
            pos = end
            continue
        group = m.lastgroup
        if group == "end":
            out.append(text[pos:])
            return "".join(out)
        start = m.start(group or "")
        end = m.end()
        if group == "inc":
            if not starts_logical_line(text, start, comment_starts, literal_ends):
                out.append(text[pos : start + 1])  # a '#' inside a line: not a directive
                pos = start + 1
                continue
            gap_start, gap_end = m.span("gap")
            out.append(text[pos:gap_start])
            out.append(_COMMENT_RE.sub(_blank_match, text[gap_start:gap_end]))
            header = HEADER_RE.match(text, end)
            if header is not None:  # else a '<' or an open string: code, as tokenize() reads it
                end = header.end()
            out.append(text[gap_end:end])
        elif group == "com":
            comment_starts[end] = start
            out.append(text[pos:start])
            out.append(_blank(text[start:end]))
        else:
            literal_ends.add(end)
            out.append(text[pos:start])
            out.append(_blank_literal(text[start:end]))
        pos = end


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
