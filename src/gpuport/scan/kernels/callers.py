"""Which project device functions HIP compiles a call of: the facts one file gives the index.

A ``__device__`` helper whose every call site in the project sits where HIP never compiles it
(inside ``#if __CUDA_ARCH__ >= 1000``, ``#if CUDA_VERSION >= 12080``, the CUDA arm of
``#ifdef USE_ROCM``) is never instantiated on ROCm: its inline PTX, 32-bit masks and error-trap
fallbacks are not porting work. Each CUDA file reports, once, the names it calls in code ROCm
compiles and in code it never compiles, and where its device functions are; triage
(project/triage.py) then sets aside findings inside a helper no compiled code calls.
Conservative: names are read as plain identifiers before ``(`` (or ``<...>(``), so a helper
named anywhere ROCm compiles — called, passed as a pointer, named in a macro body — counts as
reached there.
"""

from __future__ import annotations

import re

from gpuport.findings import CallFacts
from gpuport.scan.kernels.source import KernelSource
from gpuport.syntax.cxx import code_only

# A name as it is called or named: `foo(`, `ptx::foo<T>(`; any identifier is kept, so a name
# also counts where it is only passed along (a pointer, a macro argument).
_NAME_RE = re.compile(r"\b([A-Za-z_]\w*)\b")
# The head of a device function definition: `__device__ ... name(` (never a __global__ kernel,
# which the host launches).
_DEVICE_DEF_RE = re.compile(
    r"\b__device__\b(?![^;{}()]*\b__global__\b)[^;{}()=]*?\b([A-Za-z_]\w*)\s*\("
)
# A template head right before the definition: HIP instantiates such a helper only from a call.
_TEMPLATE_HEAD_RE = re.compile(r"\btemplate\s*<[^;{}]*>\s*$")
_BODY_OPEN_RE = re.compile(r"\s*(?:const\b|noexcept\b|->[^{;]*)?\s*\{")


def call_facts(src: KernelSource) -> CallFacts:
    code = src.code
    found = src.conditions
    spans = [] if found is None else found.dead
    pieces: list[str] = []
    dead_pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces.append(code[at:start])
        dead_pieces.append(code[start:end])
        at = end
    pieces.append(code[at:])
    functions: list[tuple[str, int, int, frozenset[str], bool]] = []
    bodies: list[tuple[int, int]] = []
    if "__device__" in code:
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
            body = code[brace:end]
            names = (
                frozenset(
                    n.group(1)
                    for n in _NAME_RE.finditer(body)
                    if src.compiled_on_rocm(brace + n.start())
                )
                if found is not None
                else frozenset(_NAME_RE.findall(body))
            )
            template = _TEMPLATE_HEAD_RE.search(code, max(0, m.start() - 400), m.start())
            functions.append(
                (m.group(1), src.line_of(m.start()), src.line_of(end), names, template is not None)
            )
            bodies.append((m.start(), end))  # the head too: its own name is no call
    # names outside device bodies (they count only through their function) and outside
    # branches ROCm never compiles: cut both kinds of span by position, not by name
    outside: list[str] = []
    at = 0
    for start, end in sorted([*spans, *bodies]):
        if end <= at:
            continue
        outside.append(code[at : max(at, start)])
        at = end
    outside.append(code[at:])
    live = set(_NAME_RE.findall("\n".join(outside)))
    dead = set(_NAME_RE.findall("\n".join(dead_pieces))) - live
    return CallFacts(src.rel, frozenset(live), frozenset(dead), tuple(functions))


def facts_of(rel: str, text: str) -> CallFacts:
    return call_facts(KernelSource(rel, text, code_only(text)))
