"""Headers: each ``#include`` and ``__has_include`` of a CUDA header gets its HIP path, and a
.cu file that uses GPU code gets the ``hip/hip_runtime.h`` that nvcc would have included."""

from __future__ import annotations

import re
from typing import NamedTuple

from gpuport import kb
from gpuport.port.apimap import HeaderEntry, version_text
from gpuport.port.knowledge import translation_facts
from gpuport.port.translate.syntax import line_start, line_tokens, starts_line
from gpuport.port.translate.translation import CONVERTED, UNCONVERTED, Translation
from gpuport.syntax.cxx import HEADER_RE

HIP_RUNTIME_HEADER = "hip/hip_runtime.h"

# The CUDA toolkit's headers: an #include <...> of one gpuport cannot map is reported, while a
# project's own headers (even ones named cuda_utils.h) are left alone.
_TOOLKIT_HEADER_RE = translation_facts().toolkit_header_re
_HAS_INCLUDE_OPEN_RE = re.compile(r"\s*+\(\s*+(?=[<\"])")
_CLOSE_PAREN_RE = re.compile(r"\s*+\)")
_LINE_BREAK_AFTER_RE = re.compile(r"[\r\n]")


def include(t: Translation, hash_pos: int, header_pos: int) -> int:
    """Handle the ``#include`` whose '#' is at ``hash_pos`` and whose header name would start
    at ``header_pos``: where the walk goes on, or -1 when the '#' does not start its line."""
    # a comment before the '#' (blank in t.code) leaves it a directive, as the lexer reads it
    if not (starts_line(t.text, hash_pos) or starts_line(t.code, hash_pos)):
        return -1
    header = HEADER_RE.match(t.text, header_pos)
    if header is None:
        return header_pos  # `#include <` with no '>' on its line: code, as the lexer reads it
    start, end = header.span()
    _header(t, hash_pos, start, end)
    return end


def _header(t: Translation, hash_pos: int, start: int, end: int) -> None:
    token = t.text[start:end]
    path = token[1:-1].strip()
    entry = t.api.header(path)
    if entry is None:
        if path == HIP_RUNTIME_HEADER:
            t.includes_hip_runtime = True
        elif token.startswith("<"):
            _unknown_header(t, start, path)
        return
    if entry.keep:
        return
    if entry.drop:
        first, last = _directive_cut(t.text, hash_pos, end)
        if t.edit(first, last, ""):
            t.change(
                hash_pos,
                "header",
                t.text[hash_pos:end],
                "",
                CONVERTED,
                f"removed: {entry.note}" if entry.note else "removed",
                whole_line=True,
            )
        return
    new_path = _header_path(t, entry, path, start)
    if new_path is None:
        return
    if new_path == HIP_RUNTIME_HEADER:
        t.includes_hip_runtime = True
    elif entry.needs_runtime and not t.includes_hip_runtime:
        first = _line_start_if_blank_before(t.text, hash_pos)
        runtime = f"#include <{HIP_RUNTIME_HEADER}>"
        if t.edit(first, first, runtime + t.newline()):
            t.includes_hip_runtime = True
            t.change(
                first,
                "header",
                "",
                runtime,
                CONVERTED,
                f"added: {entry.hip} needs hip/hip_runtime.h before it",
                whole_line=True,
            )
    new_token = token[0] + new_path + token[-1]
    if t.edit(start, end, new_token):
        t.change(start, "header", token, new_token, CONVERTED, entry.note)
    return


_BLANKS_RE = re.compile(r"[ \t]*+")
_BLANKS_TO_END_RE = re.compile(r"[ \t]*+\Z")
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n|\Z")


def _line_start_if_blank_before(text: str, hash_pos: int) -> int:
    """The start of the line holding the '#' at ``hash_pos`` when only blanks come before it
    there, else ``hash_pos``: what comes before may be the end of a block comment."""
    first = line_start(text, hash_pos)
    return first if _BLANKS_TO_END_RE.match(text, first, hash_pos) else hash_pos


def _directive_cut(text: str, hash_pos: int, header_end: int) -> tuple[int, int]:
    """What to delete to drop the ``#include`` from ``hash_pos`` to ``header_end``: its whole
    line (newline included) when nothing else is on it; else the directive and the blanks
    after it only, so that a comment before or after it (one that opens a block comment, say)
    and any other bytes on the line stay as they were."""
    after = _BLANKS_RE.match(text, header_end)
    stop = after.end() if after else header_end
    line_break = _LINE_BREAK_RE.match(text, stop)
    if line_break is None:
        return hash_pos, stop  # a comment or anything else follows on the line
    first = line_start(text, hash_pos)
    if _BLANKS_TO_END_RE.match(text, first, hash_pos):
        return first, line_break.end()  # alone on its line
    return hash_pos, stop  # after a comment's end on its line: the line break stays


def _header_path(t: Translation, entry: HeaderEntry, path: str, pos: int) -> str | None:
    """The HIP path for ``entry`` on the target, or None (after reporting why)."""
    if not entry.hip:
        t.report(pos, "header", path, UNCONVERTED, entry.note)
        return None
    if entry.since is not None and entry.since > t.target:
        note = (
            f"{entry.hip} is not available before ROCm {version_text(entry.since)} "
            f"(target {version_text(t.target)})"
        )
        if entry.note:
            note += f"; {entry.note}"
        t.report(pos, "header", path, UNCONVERTED, note)
        return None
    return entry.path_for(t.target)


def _unknown_header(t: Translation, pos: int, path: str) -> None:
    """Report a CUDA-looking system header gpuport has no counterpart for."""
    if _TOOLKIT_HEADER_RE.match(path) is None:
        return
    note = "no HIP counterpart known to gpuport"
    advice = _library_advice(path)
    if advice:
        note += f"; {advice}"
    t.report(pos, "header", path, UNCONVERTED, note)


def _library_advice(header: str) -> str:
    """What the knowledge base says of the CUDA library that ``header`` belongs to."""
    library = kb.library_for_header(header)
    if library is None:
        return ""
    counterpart = f"AMD counterpart: {library.amd_counterpart}" if library.amd_counterpart else ""
    return "; ".join(x for x in (counterpart, library.notes) if x)


def has_include(t: Translation, name: str, start: int, end: int) -> None:
    """``__has_include(<cuda_fp16.h>)``: the header inside takes the #include mapping."""
    text = t.text
    opening = _HAS_INCLUDE_OPEN_RE.match(text, end)
    if opening is None:
        return
    angle = text[opening.end()] == "<"
    if angle and opening.end() < t.no_angle_close_before:
        return
    header = HEADER_RE.match(text, opening.end())
    if header is None:
        if angle:
            # no '>' to the line's end: none for any later '<' on the line either (reading
            # again for each made `__has_include(<` repeated quadratic)
            line_break = _LINE_BREAK_AFTER_RE.search(text, opening.end())
            t.no_angle_close_before = line_break.start() if line_break else len(text)
        return
    if _CLOSE_PAREN_RE.match(text, header.end()) is None:
        return
    token = header.group()
    entry = t.api.header(token[1:-1].strip())
    if entry is None or entry.keep or entry.drop or not entry.hip:
        return
    if entry.since is not None and entry.since > t.target:
        return
    new_token = token[0] + entry.path_for(t.target) + token[-1]
    start = header.start()
    if t.edit(start, header.end(), new_token):
        t.change(start, "header", token, new_token, CONVERTED, entry.note)


# ----------------------------------------------------------------- the implicit runtime


def insert_runtime_include(t: Translation) -> None:
    """Add the ``#include <hip/hip_runtime.h>`` that nvcc's implicit one stood for."""
    place = _runtime_include_place(t.text)
    pos = place.offset
    nl = t.newline()
    line = f"#include <{HIP_RUNTIME_HEADER}>"
    new = line + nl
    if place.after_directive and pos == len(t.text) and not t.text.endswith(("\n", "\r")):
        new = nl + line + nl
    if t.edit(pos, pos, new):
        t.includes_hip_runtime = True
        t.change(
            pos,
            "header",
            "",
            line,
            CONVERTED,
            "added: nvcc includes cuda_runtime.h in every .cu file by itself, hipcc does not",
            whole_line=True,
        )


class _IncludePlace(NamedTuple):
    offset: int
    after_directive: bool  # right after `#pragma once` or an include guard's #define


def _runtime_include_place(text: str) -> _IncludePlace:
    """Where nvcc's implicit ``#include`` belongs: after leading comments, ``#pragma once``
    and an include guard; before anything else."""
    pos = 0
    after_directive = False
    state = "start"  # start -> pragma -> ifndef -> (guard found)
    guard = ""
    guard_line = 0
    for line in line_tokens(text):
        if not line.significant:
            continue  # blank or comment-only line
        words = [tok.text for tok in line.significant]
        if words[0] == "#" and len(words) >= 2:
            if state == "start" and words[1:3] == ["pragma", "once"]:
                pos, after_directive, state = line.end, True, "pragma"
                continue
            if state in ("start", "pragma") and words[1] == "ifndef" and len(words) == 3:
                guard, guard_line, state = words[2], line.start, "ifndef"
                continue
            if state == "ifndef" and words[1] == "define" and words[2:3] == [guard]:
                return _IncludePlace(line.end, True)
        if state == "ifndef":
            return _IncludePlace(guard_line, False)  # an #ifndef that guards nothing: go before it
        return _IncludePlace(pos if after_directive else line.start, after_directive)
    return _IncludePlace(pos, after_directive)
