"""The walk over one file: one regular expression stops only where the translator must look.

Speed comes from looking only at what can matter: the pattern skips, inside the regular
expression engine and token by token like the lexer, everything up to the next comment,
string or character literal (to step over it), ``#include`` line, or identifier with a
CUDA-ish spelling (``cu…``, ``CU…``, ``nv…``, ``__…``) or a name from a short list. Its token
rules are the lossless lexer's (:mod:`gpuport.syntax.cxx`), which the tests check. Each name
it stops at goes to its handler (warp, arch, includes, names) or takes the API map's action.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from gpuport.port.apimap import Version, parse_version
from gpuport.port.translate import arch, includes, names, signatures, versions, warp
from gpuport.port.translate.actions import CANDIDATE_PREFIXES, Rename, actions
from gpuport.port.translate.syntax import starts_line
from gpuport.port.translate.translation import CONVERTED, Translation
from gpuport.syntax.cxx import CHAR_RE_TEXT as _CHAR
from gpuport.syntax.cxx import COMMENT_RE_TEXT as _COMMENT
from gpuport.syntax.cxx import DIRECTIVE_GAP_RE_TEXT as _DIRECTIVE_GAP
from gpuport.syntax.cxx import HEADER_RE
from gpuport.syntax.cxx import ID_CHARS as _ID
from gpuport.syntax.cxx import ID_START_CHARS as _ID_START
from gpuport.syntax.cxx import NUMBER_RE_TEXT as _NUMBER
from gpuport.syntax.cxx import RAW_RE_TEXT as _RAW
from gpuport.syntax.cxx import STRING_RE_TEXT as _STRING

_NOT_AFTER_ID = rf"(?<![{_ID}])"
# `#include` up to its header name (lexer.INCLUDE_RE_TEXT, without its named group)
_INCLUDE = rf"\#{_DIRECTIVE_GAP}(?:include_next|include|import)(?![{_ID}])[ \t]*(?=[<\"])"
# Words that mark GPU code in a .cu file (which then needs hip_runtime.h).
_KERNEL_WORDS = frozenset(
    {"__global__", "__device__", "__shared__", "__constant__", "__managed__", "__launch_bounds__"}
)
_KERNEL_BUILTIN_RE = re.compile(r"(?<![A-Za-z0-9_$])(?:threadIdx|blockIdx|blockDim|gridDim)\b")
_WORD_RE = re.compile(rf"{_NOT_AFTER_ID}[A-Za-z_$\u00c0-\uffff][{_ID}]*")
# One token (when the walk stops at something it cannot classify, e.g. `R"x` without '(').
_ANY_TOKEN_RE = re.compile(rf"[{_ID_START}][{_ID}]*|.", re.DOTALL)

NameHandler = Callable[[Translation, str, int, int], None]
# The names that need more than the API map's action, and who handles each.
_SPECIAL: dict[str, NameHandler] = {
    "__CUDA_ARCH__": arch.cuda_arch,
    "__has_include": includes.has_include,
    "__activemask": warp.activemask,
    "__syncwarp": warp.syncwarp,
    "cub": names.cub_namespace,
    "cuda": names.thrust_cuda,
    "CUDART_CB": names.cudart_cb,
    **{name: names.cast_argument for name in names.CAST_ARGUMENTS},
    "cudaGraphInstantiate": names.graph_instantiate,
    **{name: signatures.rewrite for name in signatures.handled_names()},
    "operator": names.operator,
    **{name: warp.warp_masked for name in warp.MASKED_WARP},
    **{name: warp.warp_match for name in warp.MATCH_WARP},
    **{name: names.clash_or_rename for name in names.CLASH_FUNCTIONS | warp.WARP_BUILTINS},
    **versions.HANDLERS,
}


# ------------------------------------------------------------------------------ pattern


def _trie_pattern(words: Iterable[str]) -> str:
    """A regular expression matching exactly ``words``, shaped as a trie so that a failed
    first character costs one test rather than one per word."""
    trie: dict[str, dict[str, Any]] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + build(node[ch]) for ch in sorted(node) if ch]
        if not alternatives:
            return ""
        body = "|".join(alternatives)
        if "" in node:
            return f"(?:{body})?"
        return body if len(alternatives) == 1 else f"(?:{body})"

    return build(trie)


def _explicit_names(target: Version) -> set[str]:
    """Names the walk must stop at although their spelling is not CUDA-ish."""
    explicit = set(names.CLASH_FUNCTIONS) | {"operator"}
    explicit |= {n for n in actions(target) if not n.startswith(CANDIDATE_PREFIXES)}
    return explicit


def _scanner_parts(target: Version, literals: bool) -> tuple[str, str]:
    """The pattern that walks a file: each match is a run of uninteresting text (skipped
    inside the regular-expression engine, token by token like the lexer) followed by one
    thing the translator must look at: an ``#include``, a candidate identifier, or the end.
    With ``literals`` comments and string literals are returned too (--translate-strings)."""
    prefixes = "|".join(CANDIDATE_PREFIXES)
    listed = _trie_pattern(_explicit_names(target))
    candidate = rf"(?:{prefixes})[{_ID}]*+|(?:{listed})(?![{_ID}])"
    boring_identifier = (
        rf"(?!{candidate})(?!(?:u8|u|U|L)?R\"|(?:u8|u|U|L)[\"'])[{_ID_START}][{_ID}]*+"
    )
    skip = [
        rf"[^/\"'\#{_ID}]++",
        boring_identifier,
        _NUMBER,
        r"/(?![/*])",
        rf"\#(?!{_DIRECTIVE_GAP}(?:include_next|include|import)(?![{_ID}])[ \t]*[<\"])",
    ]
    interesting = [f"(?P<inc>{_INCLUDE})", f"(?P<id>{candidate})"]
    literal_rules = [_COMMENT, _RAW, _STRING, _CHAR]
    if literals:
        interesting += [f"(?P<com>{_COMMENT})", f"(?P<lit>{_RAW}|{_STRING}|{_CHAR})"]
    else:
        skip += literal_rules
    interesting.append(r"(?P<end>\Z)")
    return f"(?:{'|'.join(skip)})*+", f"(?:{'|'.join(interesting)})"


@functools.cache
def _scanner(target: Version, literals: bool) -> re.Pattern[str]:
    skip, interesting = _scanner_parts(target, literals)
    return re.compile(skip + interesting, re.DOTALL)


@functools.cache
def _skip_only(target: Version, literals: bool) -> re.Pattern[str]:
    skip, _ = _scanner_parts(target, literals)
    return re.compile(skip, re.DOTALL)


def _step_over_stuck(text: str, pos: int, target: Version, literals: bool) -> int:
    """Where to resume after the walk could not match at ``pos``."""
    stop = _skip_only(target, literals).match(text, pos)
    at = stop.end() if stop else pos
    token = _ANY_TOKEN_RE.match(text, at)
    return at + (len(token.group()) if token else 1)


# --------------------------------------------------------------------------------- walk


def walk(t: Translation) -> None:
    """Translate the whole file held by ``t``: every name, include and (with
    --translate-strings) literal the walk stops at, then the file-wide checks."""
    text = t.text
    literals = t.options.translate_strings
    scanner = _scanner(t.target, literals).match
    special = _SPECIAL.get
    action_for = t.actions.get
    pos = 0
    n = len(text)
    while pos <= n:
        m = scanner(text, pos)
        if m is None:
            # the walk stopped at a token no rule takes whole (a lone `R"`): step over it
            pos = _step_over_stuck(text, pos, t.target, literals)
            continue
        group = m.lastgroup
        if group == "id":
            # the hot path, inlined: most names the walk stops at need no handler
            start, end = m.span("id")
            name = text[start:end]
            handler = special(name)
            if handler is not None:
                handler(t, name, start, end)
            else:
                action = action_for(name)
                if action is not None:
                    t.apply_action(name, start, end, action)
                elif name in _KERNEL_WORDS:
                    t.uses_gpu_code = True
        elif group == "inc":
            end = includes.include(t, m.start("inc"), m.end())
            if end < 0:
                pos = m.start("inc") + 1  # a '#' inside a line: go on right after it
                continue
            pos = end
            continue
        elif group == "end":
            break
        else:
            _literal(t, m.start(group or ""), m.group(group or ""))
        pos = m.end()
    if "cooperative_groups" in text and t.target < t.api.warp.tile_vote_since:
        warp.tile_votes(t)
    uses_gpu = t.uses_gpu_code or "<<<" in text or _KERNEL_BUILTIN_RE.search(text)
    if uses_gpu and not t.includes_hip_runtime and includes.relied_on_implicit_runtime(t):
        includes.insert_runtime_include(t)


def _literal(t: Translation, base: int, literal: str) -> None:
    """A string or comment (--translate-strings): the CUDA names inside are renamed too."""
    for word in _WORD_RE.finditer(literal):
        action = t.actions.get(word.group())
        if isinstance(action, Rename):
            start = base + word.start()
            if t.edit(start, start + len(word.group()), action.hip):
                t.change(
                    start,
                    action.family,
                    word.group(),
                    action.hip,
                    CONVERTED,
                    "inside a string or comment (--translate-strings)",
                )


# ------------------------------------------------------------------- what the walk sees


class Candidate(NamedTuple):
    offset: int
    name: str


def candidate_identifiers(text: str, rocm_version: str) -> list[Candidate]:
    """Every identifier the fast walk stops at, in file order.

    The translator looks at nothing else in code, so this is what the tests compare with the
    lexer's own view of the file (same identifiers, none inside comments or literals).
    """
    target = parse_version(rocm_version)
    scanner = _scanner(target, False).match
    out: list[Candidate] = []
    pos = 0
    n = len(text)
    while pos <= n:
        m = scanner(text, pos)
        if m is None:
            pos = _step_over_stuck(text, pos, target, False)
            continue
        if m.lastgroup == "end":
            break
        if m.lastgroup == "id":
            out.append(Candidate(m.start("id"), m.group("id")))
        elif m.lastgroup == "inc":
            if not starts_line(text, m.start("inc")):
                pos = m.start("inc") + 1
                continue
            header = HEADER_RE.match(text, m.end())
            pos = header.end() if header else m.end()
            continue
        pos = m.end()
    return out


def is_candidate_name(name: str, rocm_version: str) -> bool:
    """Would the walk stop at an identifier spelled ``name``?"""
    target = parse_version(rocm_version)
    if name.startswith(CANDIDATE_PREFIXES):
        return True
    return (
        name in names.CLASH_FUNCTIONS
        or name == "operator"
        or (name in actions(target) and not name.startswith(CANDIDATE_PREFIXES))
    )
