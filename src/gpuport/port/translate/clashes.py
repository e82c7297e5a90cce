"""A user's definition that HIP's headers already make, guarded so that HIP's is used on AMD.

CUDA lacks ``atomicMin(float*, float)`` and arithmetic on ``float4``, so CUDA code defines them;
HIP defines the same (amd_hip_atomic.h, amd_hip_vector_types.h), and a second definition is a
redefinition error or makes calls ambiguous. Where the user's signature is exactly one of HIP's
(kb/hip_signatures.toml [clash_guard]), the definition is wrapped in ``#if
!defined(__HIP_PLATFORM_AMD__)`` … ``#endif`` and the change is left for review (HIP's must
compute the same); anything else stays a report with the fix (:mod:`.names`).
"""

from __future__ import annotations

import re

from gpuport.port.knowledge import translation_facts
from gpuport.port.translate.signatures import signature_facts
from gpuport.port.translate.syntax import Span, line_start
from gpuport.port.translate.translation import NEEDS_REVIEW, Translation

VECTOR_TYPES = translation_facts().vector_types
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[*&]")
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "restrict"})
_DECLARATION_LINES = 4  # lines a declaration may span before its name (template, qualifiers)
_LINE_END = re.compile(r"\r\n?|\n")
_BODY_LOOKAHEAD = 50_000  # characters a guarded function body may span


def _parameter_types(t: Translation, params: list[Span]) -> list[tuple[str, ...]]:
    """Each parameter's type as tokens, its name and qualifiers left out: ``float *p`` →
    ``("float", "*")``."""
    types = []
    for span in params:
        tokens = [
            x for x in _TOKEN_RE.findall(t.code[span.start : span.end]) if x not in _QUALIFIERS
        ]
        if len(tokens) >= 2 and tokens[-1] not in "*&":
            tokens.pop()  # the parameter's name
        types.append(tuple(tokens))
    return types


def guard_atomic(t: Translation, name: str, start: int, end: int) -> bool:
    """``atomicMin(float* address, float val)`` defined at ``end``: guarded when HIP has it."""
    guard = signature_facts().clash_guard
    call = t.call_arguments(end)
    if name not in guard.atomics or call is None or len(call.args) != 2:
        return False
    first, second = _parameter_types(t, list(call.args))
    if len(second) != 1 or second[0] not in guard.atomic_types or first != (second[0], "*"):
        return False
    return _guard(
        t,
        name,
        start,
        call.close_paren,
        f"defines {name}, which HIP already provides with this signature ({second[0]}*, "
        f"{second[0]}) in amd_hip_atomic.h",
    )


def guard_operator(t: Translation, op: str, start: int, params: Span, vector: str) -> str:
    """``float4 operator+(const float4&, const float4&)``: "guarded" when HIP's vector types
    define it too (two vectors of one type, or a vector and a scalar), "unrelated" when HIP
    defines nothing like it (two different vector types: no clash), else "report"."""
    guard = signature_facts().clash_guard
    call = t.call_arguments(params.start)
    if call is None or len(call.args) != 2:
        return "report"
    types = _parameter_types(t, list(call.args))
    bases = [tuple(x for x in tokens if x not in "&") for tokens in types]
    vectors = {b[0] for b in bases if len(b) == 1 and b[0] in VECTOR_TYPES}
    if len(vectors) > 1:
        return "unrelated"  # HIP_vector_type's operators take one vector type
    if op not in guard.vector_operators or vector not in vectors:
        return "report"
    if not all(len(b) == 1 and (b[0] == vector or b[0] in guard.scalar_types) for b in bases):
        return "report"
    why = f"defines operator{op} on {vector}, which HIP's hip_vector_types.h already defines"
    return "guarded" if _guard(t, f"operator{op}", start, call.close_paren, why) else "report"


def _guard(t: Translation, name: str, start: int, params_close: int, why: str) -> bool:
    """Wrap the definition of the name at ``start``, whose parameter list closes at
    ``params_close``, in the guard."""
    code = t.code
    guard = signature_facts().clash_guard.guard
    begin = _declaration_start(t, start)
    if begin < 0 or code.count("{", 0, begin) != code.count("}", 0, begin):
        return False  # inside a class, namespace or function: report it instead
    stop = _definition_end(t, params_close)
    if stop < 0:
        return False
    newline = t.newline()
    # the line above, whatever the file's line ends (a CR-only file is one "line" to rsplit)
    before = _LINE_END.split(code[max(0, begin - 200) : begin].rstrip("\r\n"))[-1].strip()
    if before == f"#if {guard}":
        return True  # guarded already (a translation translated again)
    close = f"#endif{newline}"
    if stop == len(t.text) and not t.text.endswith(("\n", "\r")):
        close = f"{newline}#endif"  # the file ends on the definition's line
    if any(e.start < p < e.end for e in t.edits for p in (begin, stop)):
        return False
    # queued after the walk (insert_guards), so that an #include the walk adds at the same
    # place goes first, outside the guard
    t.pending_inserts.extend([(begin, f"#if {guard}{newline}"), (stop, close)])
    t.report(
        start,
        "clash",
        name,
        NEEDS_REVIEW,
        f"{why}: wrapped in #if {guard} so that HIP's own is used on AMD (a second definition "
        "does not compile or makes calls ambiguous); check that HIP's computes the same",
    )
    return True


def _declaration_start(t: Translation, pos: int) -> int:
    """Start of the line where the declaration holding ``pos`` begins: the name's line and the
    lines before it that are part of it (``template <...>``, ``__device__ float``)."""
    code = t.code
    begin = line_start(code, pos)
    for _ in range(_DECLARATION_LINES):
        if begin == 0:
            break
        previous = line_start(code, begin - 1)
        text = code[previous:begin].strip()
        if not text or text.startswith("#") or text[-1] in ";{}":
            break
        begin = previous
    return begin


def _definition_end(t: Translation, params_close: int) -> int:
    """After the line where the definition (body or ``;``) ends, or -1 when that line holds
    more than the definition."""
    code = t.code
    match = re.compile(r"[{;]").search(code, params_close, params_close + 400)
    if match is None:
        return -1
    end = match.end()
    if match.group() == "{":
        close = t.index.brackets.closing(match.start(), match.start() + _BODY_LOOKAHEAD)
        if close < 0:
            return -1
        end = close + 1
    line_end = re.compile(r"[ \t]*(?:\r\n|\r|\n|$)").match(code, end)
    if line_end is None:
        return -1
    if t.text[end : line_end.end()].rstrip("\r\n").endswith("\\"):
        return -1  # a comment continued by a backslash: the next line is still this one
    return line_end.end()


def insert_guards(t: Translation) -> None:
    """Queue the guards :func:`_guard` decided on, after every edit of the walk."""
    for pos, text in t.pending_inserts:
        t.edit(pos, pos, text)
