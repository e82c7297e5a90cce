"""The shared C/C++/CUDA lexer: lossless on any input, and right about what is code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuport.syntax.cxx import Kind, code_only, code_only_by_tokens, significant, tokenize

PIECES = [
    '\r#include "a.h"',
    "cudaMalloc",
    "__shfl_sync",
    "x",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\\\n",
    "/*",
    "*/",
    "//",
    '"',
    "'",
    "\\",
    'R"(',
    ')"',
    'R"d(',
    ')d"',
    "#",
    "#include",
    "<",
    ">",
    "<<<",
    ">>>",
    "0x1f",
    "1e+5",
    "'",
    'u8"',
    "é",
    "\udcff",
    "(",
    ")",
    ";",
    "{",
    "}",
    "::",
    "->",
    # the pieces of the adversarial shapes (benchmarks/lexer_adversarial.py)
    '"\\',
    "'\\",
    "\\\r\n",
    'R"x',
    "#include <",
    '#include "',
    "__shfl_sync(0xffffffff,",
    "#if __CUDA_ARCH__ &&",
]


def roundtrip(text: str) -> None:
    assert "".join(t.text for t in tokenize(text)) == text


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    roundtrip(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_code_like_soup_round_trips_and_keeps_offsets(pieces: list[str]) -> None:
    text = "".join(pieces)
    roundtrip(text)
    blanked = code_only(text)
    assert len(blanked) == len(text)
    assert [i for i, c in enumerate(blanked) if c in "\r\n"] == [
        i for i, c in enumerate(text) if c in "\r\n"
    ]


def test_line_and_column_of_tokens_after_multiline_tokens() -> None:
    text = '/* a\n b */ int x;\nR"(\n)" y;\r\nz'
    toks = {t.text: t for t in tokenize(text) if t.kind is Kind.IDENT}
    assert (toks["x"].line, toks["x"].column) == (2, 11)
    assert (toks["y"].line, toks["y"].column) == (4, 4)
    assert (toks["z"].line, toks["z"].column) == (5, 1)


def test_identifiers_in_comments_and_strings_are_not_code() -> None:
    text = '// cudaMalloc\nauto s = "cudaFree"; /* cudaMemcpy */ cudaDeviceSynchronize();'
    idents = [t.text for t in tokenize(text) if t.kind is Kind.IDENT]
    assert idents == ["auto", "s", "cudaDeviceSynchronize"]
    assert "cudaMalloc" not in code_only(text)
    assert "cudaFree" not in code_only(text)


def test_include_header_is_one_token_and_directive_is_marked() -> None:
    toks = significant(list(tokenize('#include <cuda_runtime.h>\n#  include "a b.h"\nint x;')))
    headers = [t.text for t in toks if t.kind is Kind.HEADER]
    assert headers == ["<cuda_runtime.h>", '"a b.h"']
    assert all(t.in_directive for t in toks if t.line <= 2)
    assert not any(t.in_directive for t in toks if t.line == 3)


def test_directive_continues_over_backslash_newline() -> None:
    toks = significant(list(tokenize("#define F(a) \\\n  cudaFree(a)\nint y;")))
    free = next(t for t in toks if t.text == "cudaFree")
    assert free.in_directive and free.line == 2
    assert not next(t for t in toks if t.text == "y").in_directive


def test_launch_brackets_and_hash_in_code() -> None:
    kinds = [t.kind for t in significant(list(tokenize("k<<<1, 2>>>(a); x = a # b;")))]
    assert Kind.LAUNCH_OPEN in kinds and Kind.LAUNCH_CLOSE in kinds
    assert Kind.HASH not in kinds  # a '#' mid-line is not a directive


def test_unterminated_things_do_not_swallow_more_than_they_should() -> None:
    text = 'a = "open\nb = 1;\n/* never closed\nc = 2;'
    toks = list(tokenize(text))
    roundtrip(text)
    b = next(t for t in toks if t.text == "b")
    assert b.kind is Kind.IDENT and b.line == 2  # an open string ends at the newline
    assert not any(t.text == "c" for t in toks)  # an open block comment runs to the end


def test_raw_string_with_quotes_and_parentheses() -> None:
    text = 'auto p = R"ptx(mov.u32 %0, %%laneid; ")" )ptx"; int after;'
    strings = [t.text for t in tokenize(text) if t.kind is Kind.STRING]
    assert strings == ['R"ptx(mov.u32 %0, %%laneid; ")" )ptx"']
    assert any(t.text == "after" for t in tokenize(text))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=80))
def test_fast_code_only_agrees_with_the_tokenizer(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert code_only(text) == code_only_by_tokens(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_fast_code_only_agrees_on_arbitrary_text(text: str) -> None:
    assert code_only(text) == code_only_by_tokens(text)


def test_fast_code_only_keeps_include_paths_the_tokenizer_keeps() -> None:
    for text in [
        '/* c */ #include "a.h"\nx = "s";',
        '#\\\ninclude "a.h"',
        '\\\r#include "a.h"',
        '"\\\\\r#include "a.h"',  # a string ending in an escaped backslash, left open
        '"\\\\\n#include "a.h"',
        "'\\\\\n#include <b.h>",
        ')"\\\r\n\\',  # an open string whose last character is a backslash
        '  # /* c */ include <b.h> // "q"',
        'x \\\n#include "not-a-directive.h"',
    ]:
        assert code_only(text) == code_only_by_tokens(text), text
    assert '"a.h"' in code_only('/* c */ #include "a.h"')


def test_escaped_crlf_at_the_end_stays_whole_and_lines_stay_right() -> None:
    # `'\<CR><LF>` at the end of the text: the engine once backtracked into the CRLF, made
    # `'\<CR>` a literal and `<LF>` a line of its own, and every later token was a line off.
    for opening in ("'", '"'):
        text = f"{opening}\\\r\n\\"
        toks = list(tokenize(text))
        assert [t.text for t in toks] == [text]
        assert toks[0].kind is (Kind.CHAR if opening == "'" else Kind.STRING)
        after = f"x = {opening}\\\r\n\\\r\nint y;\r\nint z;"
        z = next(t for t in tokenize(after) if t.text == "z")
        assert z.line == 4
        assert code_only(after) == code_only_by_tokens(after)


def test_continued_directive_over_crlf_counts_lines() -> None:
    text = "#define A \\\r\n  B \\\r\n  C\r\nint y;\r\n'\\\r\n"
    toks = list(tokenize(text))
    line_of = {t.text: t.line for t in toks if t.kind is Kind.IDENT}
    assert line_of == {"define": 1, "A": 1, "B": 2, "C": 3, "int": 4, "y": 4}
    assert all(t.in_directive for t in toks if t.line < 4 and t.kind is not Kind.NEWLINE)
    assert toks[-1].kind is Kind.CHAR and toks[-1].line == 5


def test_open_literal_ending_in_a_backslash_is_one_literal() -> None:
    # `"\"\"\...\` and `'\'\'...\`: the literal runs to the end, one token (it once failed
    # after reading to the end, then read again from each quote: quadratic)
    for quote in ('"', "'"):
        assert [t.text for t in tokenize(f"{quote}\\" * 50)] == [f"{quote}\\" * 50]
        text = f"{quote}\\" * 50 + " \nint after;"
        toks = list(tokenize(text))
        assert toks[0].text == f"{quote}\\" * 50 + " "
        assert toks[0].kind in (Kind.STRING, Kind.CHAR)
        assert [t.text for t in toks[1:]] == ["\n", "int", " ", "after", ";"]
        assert toks[-1].line == 2
        assert code_only(text) == code_only_by_tokens(text)


def test_include_without_closing_bracket_is_code() -> None:
    text = '#include <a.h /* c */ "s" #include <b.h\n#include <c.h>\n'
    toks = significant(list(tokenize(text)))
    assert [t.text for t in toks if t.kind is Kind.HEADER] == ["<c.h>"]
    assert [t.kind for t in toks if t.text.startswith('"')] == [Kind.STRING]
    assert code_only(text) == code_only_by_tokens(text)
    assert "/* c */" not in code_only(text)


# The adversarial shapes of benchmarks/lexer_adversarial.py (their growth in time:
# tests/test_adversarial_growth.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import lexer_adversarial  # noqa: E402


@pytest.mark.parametrize("shape", list(lexer_adversarial.SHAPES))
def test_adversarial_shapes_round_trip_and_count_lines(shape: str) -> None:
    text = lexer_adversarial.SHAPES[shape](3000)
    toks = list(tokenize(text))
    assert "".join(t.text for t in toks) == text
    assert code_only(text) == code_only_by_tokens(text)
    # each token starts on the line that the line breaks before it say (\r\n counts once)
    offset = 0
    for tok in toks:
        before = text[:offset]
        line = 1 + before.count("\n") + before.count("\r") - before.count("\r\n")
        assert not (before.endswith("\r") and tok.text.startswith("\n")), "a CRLF split"
        assert tok.line == line, (tok, offset)
        offset += len(tok.text)
