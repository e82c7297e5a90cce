"""Property tests: the lexer gives back any text exactly; the translator's fast walk sees the
same code identifiers as the lexer; translation never crashes and is idempotent."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from gpuport.port.translate import (
    candidate_identifiers,
    is_candidate_name,
    translate_source,
)
from gpuport.syntax.cxx import Kind, code_only, code_only_by_tokens, tokenize

VERSIONS = ("5.2", "6.1", "6.2", "6.4", "7.0")

# Characters that matter to a C/C++ lexer, plus some that must simply survive.
TRICKY = [
    *"\"'/\\*#<>(){}[];,.:=+-!&|^~%?$ \t\n\r\f\vRLuU8_xX0123456789",
    "é",
    "ß",
    "中",
    "\u202e",
    "\udce9",  # a byte that was not UTF-8, as surrogateescape keeps it
    "\x00",
]
arbitrary_text = st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=300)

# Pieces of C/C++/CUDA to glue together in random order: real tokens, half tokens and
# constructs that trip lexers (unterminated literals, continuations, raw strings).
SNIPPETS = [
    "cudaMalloc",
    "cudaFree(p)",
    "hipMalloc",
    "__shfl_xor_sync(0xffffffff, v, 1)",
    "__shfl_sync(mask, v, 0)",
    "__ballot_sync(~0u, x)",
    "__activemask()",
    "__syncwarp()",
    "__CUDA_ARCH__",
    "__CUDACC__",
    "cub::",
    "cub",
    "operator+(float4 a, float4 b)",
    "atomicMax(float* a, float b)",
    "make_float4(0, 0, 0, 0)",
    "#include <cuda_runtime.h>",
    '#include "cublas_v2.h"',
    "#include <thrust/sort.h>",
    "#ifdef __CUDA_ARCH__",
    "#if __CUDA_ARCH__ >= 800",
    "#define FULL 0xffffffff",
    "#pragma once",
    "__global__ void k(float* p)",
    "k<<<g, b, 0, s>>>(p)",
    '"cudaMalloc in a string"',
    '"unterminated cudaFree',
    "'c'",
    "'\\''",
    "1'000'000",
    "0x1fcudaMalloc",
    ".5e+3f",
    'R"x(cudaMalloc )" )x"',
    'u8R"(raw)"',
    'L"wide cudaFree"',
    'R"nope',
    "// cudaMalloc comment",
    "/* block cudaFree */",
    "/* unterminated cudaFree",
    "\\\n",
    "\\\r\n",
    "mycudaMalloc",
    "cudaMalloc_2",
    "obj.cudaMalloc",
    "ptr->cudaFree",
    "ns::cudaMalloc",
    "::cudaFree",
    "__nv_bfloat16",
    "__has_include(<cuda_fp16.h>)",
    "y0(1.0)",
    "texture",
    "$cuda",
    "é cudaMalloc",
    "\udce9cudaFree",
]
SEPARATORS = [" ", "", "\n", "\r\n", "\r", "\t", ";", "(", ")", ",", "{", "}", "#", "/", "*"]
token_soup = st.lists(
    st.tuples(st.sampled_from(SNIPPETS), st.sampled_from(SEPARATORS)), max_size=40
).map(lambda parts: "".join(a + b for a, b in parts))

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(arbitrary_text)
def test_lexer_round_trips_any_text(text: str) -> None:
    assert "".join(t.text for t in tokenize(text)) == text


@PROPERTY_SETTINGS
@given(token_soup)
def test_lexer_round_trips_token_soup(text: str) -> None:
    tokens = list(tokenize(text))
    assert "".join(t.text for t in tokens) == text
    # line numbers advance exactly with the newlines the tokens hold
    line = 1
    for tok in tokens:
        assert tok.line == line
        line += tok.text.count("\n") + tok.text.count("\r") - tok.text.count("\r\n")


def lexer_candidates(text: str, version: str) -> list[tuple[int, str]]:
    """Identifiers in code that the translator must see, according to the lexer."""
    out = []
    offset = 0
    for tok in tokenize(text):
        if tok.kind is Kind.IDENT and is_candidate_name(tok.text, version):
            out.append((offset, tok.text))
        offset += len(tok.text)
    return out


def directives_start_lines(text: str) -> bool:
    """True when every directive's '#' is the first non-blank character of its line: the
    fast walk does not treat `/* c */ #include` as a directive (the lexer does)."""
    offset = 0
    for tok in tokenize(text):
        if tok.kind is Kind.HASH:
            line_start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
            if text[line_start:offset].strip(" \t\f\v"):
                return False
        offset += len(tok.text)
    return True


@PROPERTY_SETTINGS
@given(token_soup, st.sampled_from(VERSIONS))
def test_fast_walk_sees_the_lexers_identifiers(text: str, version: str) -> None:
    assume(directives_start_lines(text))
    assert candidate_identifiers(text, version) == lexer_candidates(text, version)


@PROPERTY_SETTINGS
@given(arbitrary_text, st.sampled_from(VERSIONS))
def test_fast_walk_agrees_with_the_lexer_on_any_text(text: str, version: str) -> None:
    assume(directives_start_lines(text))
    assert candidate_identifiers(text, version) == lexer_candidates(text, version)


@PROPERTY_SETTINGS
@given(token_soup, st.sampled_from(VERSIONS), st.booleans(), st.booleans())
# A CR-only file: the guard around a user's float4 operator was not seen on the line above,
# so a second translation guarded it again.
@example("cudaMalloc\roperator+(float4 a, float4 b){cudaMalloc)", "5.2", False, False)
# A comment continued by a backslash after the definition: an #endif put on the next line
# would be inside the comment.
@example(
    "operator+(float4 a, float4 b);// cudaMalloc comment \\\n cudaMalloc ", "5.2", False, False
)
# `#pragma once` opening a comment that never closes: the runtime include put after that line
# was inside the comment, so a second translation added it again.
@example("#pragma once __global__ void k(float* p) /* unterminated cudaFree ", "5.2", False, False)
def test_translation_never_crashes_and_is_idempotent(
    text: str, version: str, fix: bool, strings: bool
) -> None:
    first = translate_source(
        "soup.cu", text, version, fix_warp_masks=fix, translate_strings=strings
    )
    assert first.original == text
    result = first.translated if first.translated is not None else text
    # undecodable bytes and every character the translator did not rename survive
    assert result.count("\udce9") == text.count("\udce9")
    for change in first.changes:
        assert change.line >= 1 or change.column == 0
    second = translate_source(
        "soup.cu", result, version, fix_warp_masks=fix, translate_strings=strings
    )
    assert second.translated is None, (text, result, second.translated)


@PROPERTY_SETTINGS
@given(arbitrary_text, st.sampled_from(VERSIONS))
def test_translation_survives_any_text(text: str, version: str) -> None:
    first = translate_source("any.cu", text, version, diagnostics=False)
    result = first.translated if first.translated is not None else text
    again = translate_source("any.cu", result, version, diagnostics=False)
    assert again.translated is None


@PROPERTY_SETTINGS
@given(token_soup | arbitrary_text)
def test_fast_code_only_matches_the_lexers(text: str) -> None:
    assert code_only(text) == code_only_by_tokens(text)
