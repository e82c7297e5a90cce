"""Which project device functions HIP compiles a call of: the facts one file gives the index.

A ``__device__`` helper whose every call site in the project sits where HIP never compiles it
(inside ``#if __CUDA_ARCH__ >= 1000``, ``#if CUDA_VERSION >= 12080``, the CUDA arm of
``#ifdef USE_ROCM``), or that nothing calls at all, is never emitted on ROCm: its inline PTX and
error-trap fallbacks are not porting work (project/triage.py says which findings of such a
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
import re

from gpuport.findings import CallFacts, DeviceHelper
from gpuport.scan.kernels.source import KernelSource
from gpuport.syntax.cxx import code_only

_NAME_RE = re.compile(r"\b[A-Za-z_]\w*")
_CONDITIONAL_RE = re.compile(r"#[ \t]*(?:if|elif)")
# The head of a device function definition: `__device__ ... name(` (never a __global__ kernel,
# which the host launches).
_DEVICE_DEF_RE = re.compile(
    r"\b__device__\b(?![^;{}()]*\b__global__\b)[^;{}()=]*?\b([A-Za-z_]\w*)\s*\("
)
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


def _head(code: str, start: int, name_end: int) -> str:
    """The declaration around ``__device__`` at ``start``: from the last ``;``/``{``/``}``
    before it (a template head included) to its name."""
    window = code[max(0, start - _HEAD_WINDOW) : start]
    cut = 0
    for m in _HEAD_END_RE.finditer(window):
        cut = m.end()
    return window[cut:] + code[start:name_end]


def call_facts(src: KernelSource, helpers: bool = True) -> CallFacts:
    """``src``'s part of the index; with ``helpers`` False (a file no rule's needle matched,
    so no finding of it can be set aside) its device bodies count as plain compiled code."""
    code = src.code
    # no `#if`/`#elif`: no branch ROCm skips, and no need to read the conditions
    found = src.conditions if _CONDITIONAL_RE.search(code) else None
    dead = [] if found is None else sorted(found.dead)
    functions: list[DeviceHelper] = []
    bodies: list[tuple[int, int]] = []
    if helpers and "__device__" in code:
        brackets = src.brackets
        for m in _DEVICE_DEF_RE.finditer(code):
            close = brackets.closing(m.end() - 1, m.end() - 1 + 4000)
            if close < 0:
                continue
            opened = _BODY_OPEN_RE.match(code, close + 1)
            if opened is None:
                continue  # a declaration
            brace = opened.end() - 1
            end = brackets.closing(brace, brace + 200_000)
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
    live = set(_NAME_RE.findall(_outside(code, 0, len(code), spans)))
    dead_names = set(_NAME_RE.findall("\n".join(code[a:b] for a, b in dead))) - live
    return CallFacts(src.rel, frozenset(live), frozenset(dead_names), tuple(functions))


def facts_of(rel: str, text: str) -> CallFacts:
    return call_facts(KernelSource(rel, text, code_only(text)))
