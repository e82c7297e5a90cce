"""``__CUDA_ARCH__``: a device-code guard becomes ``__HIP_DEVICE_COMPILE__``; a compute
capability's number has no AMD equivalent and is reported."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from gpuport.port.translate.syntax import CodeIndex, significant_after, tokens_before
from gpuport.port.translate.translation import (
    CONVERTED,
    NEEDS_REVIEW,
    UNCONVERTED,
    Translation,
)


@dataclass(frozen=True, slots=True)
class ArchUse:
    """What one ``__CUDA_ARCH__`` does: ``guard`` (a device-code test: defined(), #ifdef,
    a bare #if), ``define`` (#define/#undef of it), ``value`` (its number, in a directive)
    or ``code`` (its number, in C++ code); ``rewrite`` for a guard that may become
    __HIP_DEVICE_COMPILE__, else ``because``: the position of the value use that stops it."""

    kind: str
    rewrite: bool = False
    because: int = -1


_ARCH_RE = re.compile(r"(?<![\w$])__CUDA_ARCH__(?![\w$])")
_CONDITIONAL_RE = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)(?![\w$])", re.MULTILINE
)


_DIRECTIVE_WORD_RE = re.compile(r"[ \t]*#\s*(\w*)")


def _use_kind(index: CodeIndex, text: str, start: int, end: int) -> str:
    """How the ``__CUDA_ARCH__`` at ``start`` is used (see ArchUse.kind)."""
    line_start = index.lines.start(start)
    directive = _DIRECTIVE_WORD_RE.match(text, line_start, start)
    if directive is None:
        return "code"
    word = directive.group(1)
    # the two tokens before it in the directive (read back: each use on a long line costs
    # what it reads, not the line)
    before = tokens_before(index.code, start, 2, floor=line_start)
    if word in ("define", "undef") and before[-1:] == [word]:
        return "define"
    if word not in ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef"):
        return "value"  # a #define body or another directive: its number is used
    after = significant_after(text, end)
    is_defined_test = (
        word in ("ifdef", "ifndef", "elifdef", "elifndef")
        or (before[-1:] == ["defined"])
        or (before[-2:] == ["defined", "("] and after[:1] == [")"])
    )
    if is_defined_test or (word in ("if", "elif") and _is_bare_condition(before, after)):
        return "guard"
    return "value"


def _is_bare_condition(before: list[str], after: list[str]) -> bool:
    """``#if __CUDA_ARCH__`` or ``#if !__CUDA_ARCH__``, with && / || around it."""
    prev = before[-1] if before else ""
    nxt = after[0] if after else ""
    ok_before = prev in ("if", "elif", "!", "&&", "||", "(")
    ok_after = nxt in ("", "&&", "||", ")")
    return ok_before and ok_after


def arch_plan(index: CodeIndex, text: str) -> dict[int, ArchUse]:
    """Every ``__CUDA_ARCH__`` of the file and what to do with it, deciding each
    conditional as a unit. A guard becomes ``__HIP_DEVICE_COMPILE__`` only when neither
    its own condition nor the conditional it opens or continues (down to its #endif)
    uses ``__CUDA_ARCH__``'s number: HIP leaves the macro undefined, so such a use reads
    0 in a directive or fails to compile in code, and a rewritten guard would send HIP's
    device pass into code written for a compute capability (e.g. the redefinition of a
    pre-sm_60 double atomicAdd)."""
    code = index.code
    kinds = {m.start(): _use_kind(index, text, m.start(), m.end()) for m in _ARCH_RE.finditer(code)}
    values = sorted(pos for pos, kind in kinds.items() if kind in ("value", "code"))
    # the span each conditional directive governs: from its line to the matching #endif
    region_end: dict[int, int] = {}
    open_groups: list[list[int]] = []
    for m in _CONDITIONAL_RE.finditer(code):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            open_groups.append([m.start()])
        elif word == "endif":
            if open_groups:
                for line in open_groups.pop():
                    region_end[line] = m.end()
        elif open_groups:
            open_groups[-1].append(m.start())
    plan: dict[int, ArchUse] = {}
    for pos, kind in kinds.items():
        if kind != "guard":
            plan[pos] = ArchUse(kind)
            continue
        line = index.lines.start(pos)
        # the first value use on its line or in its region (bisected: a guard per line of
        # a long conditional would each read every value use)
        stop = max(index.lines.end(pos), region_end.get(line, len(text)))
        first = bisect.bisect_left(values, line)
        because = values[first] if first < len(values) and values[first] < stop else -1
        plan[pos] = ArchUse(kind, because < 0, because)
    return plan


# What a person must do about each use that stays, by its kind.
_UNCONVERTED_NOTES = {
    "code": "the NVIDIA compute capability has no AMD equivalent: use "
    "__HIP_DEVICE_COMPILE__ to test for device code, or the gfx target macros",
    "define": "defines __CUDA_ARCH__ itself: decide what it should mean for AMD targets",
    "value": "compares the NVIDIA compute capability, which has no AMD equivalent; HIP leaves "
    "__CUDA_ARCH__ undefined (so this reads as 0): test the gfx target macros "
    "(e.g. __gfx90a__, __gfx942__) or features (__AMDGCN_WAVEFRONT_SIZE) instead",
}


def cuda_arch(t: Translation, name: str, start: int, end: int) -> None:
    """One ``__CUDA_ARCH__``, as the file's plan decided."""
    if t.arch_plan is None:
        t.arch_plan = arch_plan(t.index, t.text)
    use = t.arch_plan.get(start) or ArchUse(_use_kind(t.index, t.text, start, end))
    if use.kind != "guard":
        t.report(start, "arch", name, UNCONVERTED, _UNCONVERTED_NOTES[use.kind])
        return
    if use.rewrite:
        new = "__HIP_DEVICE_COMPILE__"
        if t.edit(start, end, new):
            t.change(
                start,
                "arch",
                name,
                new,
                CONVERTED,
                "both are defined only while device code is compiled",
            )
        return
    where = (
        "this condition also compares __CUDA_ARCH__'s value"
        if use.because < t.index.lines.end(start)
        else f"the code under this test uses __CUDA_ARCH__'s value (line "
        f"{t.line_col(use.because)[0]})"
    )
    t.report(
        start,
        "arch",
        name,
        NEEDS_REVIEW,
        f"kept: {where}, so the test stays whole; HIP leaves __CUDA_ARCH__ undefined, so "
        "on ROCm it is false in device code too. To give AMD a device path, replace the "
        "value uses with the gfx target macros, then test __HIP_DEVICE_COMPILE__",
    )
