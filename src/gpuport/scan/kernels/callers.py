"""Which project device functions HIP compiles a call of: the facts one file gives the index.

A ``__device__`` helper whose every call site in the project sits where HIP never compiles it
(inside ``#if __CUDA_ARCH__ >= 1000``, ``#if CUDA_VERSION >= 12080``, the CUDA arm of
``#ifdef USE_ROCM``), or that nothing calls at all, is never emitted on ROCm: its inline PTX and
error-trap fallbacks are not porting work (project/unreached_helpers.py says which findings of such a
helper still are). Each CUDA file reports, once, the names it holds in code ROCm compiles and in
code it never compiles, and where its device functions are; triage then sets aside findings
inside a helper no compiled code calls, under one GP603 line per file.
Conservative: any identifier counts as a call (``foo(``, ``ptx::foo<T>(``, a pointer passed as a
template argument, a macro argument), so a helper named anywhere ROCm compiles is reached.
Cheap: one regex pass over the code outside dead spans; the helpers' heads and bodies are read
only in files some rule's needle matched (only those hold findings to set aside), with the
bracket index the rules already built.
"""

from __future__ import annotations

import bisect
import functools
import re

from gpuport.files import SourceText
from gpuport.findings import CallFacts, DeviceHelper
from gpuport.scan.kernels.source import KernelSource
from gpuport.syntax.cxx import code_only

# An identifier, without `\b` and with ASCII classes: three times faster than `\b[A-Za-z_]\w*`
# over a file, and the tail of a number it also reads (`x1f` of `0x1f`) is harmless.
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# At a line's start, and no `<` inside the name: `#include <` repeated on one line made the
# unanchored form try every start and run to the line's end from each (quadratic).
_INCLUDED_RE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^<>\"\r\n]+)[>\"]", re.MULTILINE)
_CONDITIONAL_RE = re.compile(r"#[ \t]*(?:if|elif)")
# The head of a device function definition: `__device__ ... name(` (never a __global__ kernel,
# which the host launches).
# Starts at the literal (a leading `\b` makes the engine try every offset: ten times slower);
# that it opens a word is checked in the loop.
_DEVICE_DEF_RE = re.compile(
    r"__device__\b(?![^;{}()]*\b__global__\b)[^;{}()=]*?\b([A-Za-z_]\w*)\s*\("
)
_WORD_CHAR_RE = re.compile(r"\w")
_BODY_OPEN_RE = re.compile(r"\s*(?:const\b|noexcept\b|->[^{;]*)?\s*\{")
_HEAD_END_RE = re.compile(r"[;{}]")
# In the declaration's head (from the end of the statement before it to its name):
_TEMPLATE_RE = re.compile(r"\btemplate\s*<")
_INLINE_RE = re.compile(r"\b(?:inline|__forceinline__|__inline__|static)\b")
_HOST_RE = re.compile(r"\b__host__\b")
_HEAD_WINDOW = 600  # a template head with many parameters still fits


def _outside(code: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """``code[start:end]`` less the (sorted) ``spans``."""
    pieces: list[str] = []
    at = start
    for a, b in spans[max(0, bisect.bisect_left(spans, (start, start)) - 1) :]:
        if a >= end:
            break
        if b <= at:
            continue
        pieces.append(code[at : max(at, a)])
        at = b
    if at < end:
        pieces.append(code[at:end])
    return "\n".join(pieces)


_PAIRS = {"(": re.compile(r"[()]"), "{": re.compile(r"[{}]")}


def _closing(code: str, at: int, limit: int) -> int:
    """Where the bracket opened at ``at`` closes (-1: not before ``limit``), counting that
    bracket kind only: for one helper of a file with no bracket index."""
    opener = code[at]
    depth = 0
    for m in _PAIRS[opener].finditer(code, at, limit):
        depth += 1 if m.group() == opener else -1
        if depth == 0:
            return m.start()
    return -1


def _dead_names(code: str, dead: list[tuple[int, int]], live: frozenset[str]) -> frozenset[str]:
    if not dead:
        return frozenset()
    return frozenset(_NAME_RE.findall("\n".join(code[a:b] for a, b in dead))) - live


def _head(code: str, start: int, name_end: int) -> str:
    """The declaration around ``__device__`` at ``start``: from the last ``;``/``{``/``}``
    before it (a template head included) to its name."""
    window = code[max(0, start - _HEAD_WINDOW) : start]
    cut = 0
    for m in _HEAD_END_RE.finditer(window):
        cut = m.end()
    return window[cut:] + code[start:name_end]


def call_facts(src: KernelSource, indexed: bool = True) -> CallFacts:
    """``src``'s part of the index: the names in its code, and its device helpers. With
    ``indexed`` False (no rule needed the file's bracket index: no kernel finding fell in it)
    each helper's brackets are paired on their own rather than the whole file's."""
    code = src.code
    # no `#if`/`#elif`: no branch ROCm skips, and no need to read the conditions
    found = src.conditions if _CONDITIONAL_RE.search(code) else None
    dead = [] if found is None else sorted(found.dead)
    functions: list[DeviceHelper] = []
    bodies: list[tuple[int, int]] = []
    if "__device__" in code:
        closing = src.brackets.closing if indexed else functools.partial(_closing, code)
        for m in _DEVICE_DEF_RE.finditer(code):
            if m.start() and _WORD_CHAR_RE.match(code, m.start() - 1):
                continue
            close = closing(m.end() - 1, m.end() - 1 + 4000)
            if close < 0:
                continue
            opened = _BODY_OPEN_RE.match(code, close + 1)
            if opened is None:
                continue  # a declaration
            brace = opened.end() - 1
            end = closing(brace, brace + 200_000)
            if end < 0 or not src.compiled_on_rocm(m.start()):
                continue
            head = _head(code, m.start(), m.end())
            functions.append(
                DeviceHelper(
                    name=m.group(1),
                    first=src.line_of(m.start()),
                    last=src.line_of(end),
                    calls=frozenset(_NAME_RE.findall(_outside(code, brace, end, dead))),
                    template=_TEMPLATE_RE.search(head) is not None,
                    inline=_INLINE_RE.search(head) is not None,
                    host=_HOST_RE.search(head) is not None,
                )
            )
            bodies.append((m.start(), end))  # the head too: its own name is no call
    # names outside device bodies (they count only through their function) and outside
    # branches ROCm never compiles: both kinds of span cut by position, not by name
    spans = sorted([*dead, *bodies]) if bodies else dead
    live = frozenset(_NAME_RE.findall(_outside(code, 0, len(code), spans)))
    dead_names = _dead_names(code, dead, live)
    included = frozenset(name.rsplit("/", 1)[-1] for name, _at in src.includes)
    return CallFacts(src.rel, live, dead_names, tuple(functions), included)


def names_only(source: SourceText) -> CallFacts:
    """The part of a file no rule's needle matched (no finding of it can be set aside): the
    names it holds, its helpers' bodies counted as compiled code. With no ``#if``/``#elif``,
    read from the text itself (a name in a comment counts: conservative), no code pass."""
    text, file = source.text, source.file
    included = frozenset(m.rsplit("/", 1)[-1] for m in _INCLUDED_RE.findall(text))
    if not _CONDITIONAL_RE.search(text):
        return CallFacts(file.rel, frozenset(_NAME_RE.findall(text)), frozenset(), (), included)
    code = code_only(text)
    root = file.root if file.confined else None
    found = KernelSource(file.rel, text, code, source.facts, path=file.path, root=root).conditions
    dead = [] if found is None else sorted(found.dead)
    live = frozenset(_NAME_RE.findall(_outside(code, 0, len(code), dead)))
    return CallFacts(file.rel, live, _dead_names(code, dead, live), (), included)


def facts_of(rel: str, text: str) -> CallFacts:
    return call_facts(KernelSource(rel, text, code_only(text)))
