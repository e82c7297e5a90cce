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

HIP_RUNTIME_HEADER = "hip/hip_runtime.h"

# The CUDA toolkit's headers: an #include <...> of one gpuport cannot map is reported, while a
# project's own headers (even ones named cuda_utils.h) are left alone.
_TOOLKIT_HEADER_RE = translation_facts().toolkit_header_re
_HAS_INCLUDE_RE = re.compile(r"\s*\(\s*(<[^>\r\n]*>|\"[^\"\r\n]*\")\s*\)")


def include(t: Translation, match: re.Match[str]) -> bool:
    """Handle an ``#include`` the walk stopped at; False when the '#' does not start its line."""
    hash_pos = match.start("inc")
    if not starts_line(t.text, hash_pos):
        return False
    start, end = match.span("hdr")
    token = match.group("hdr")
    path = token[1:-1].strip()
    entry = t.api.header(path)
    if entry is None:
        if path == HIP_RUNTIME_HEADER:
            t.includes_hip_runtime = True
        elif token.startswith("<"):
            _unknown_header(t, start, path)
        return True
    if entry.keep:
        return True
    if entry.drop:
        first = line_start(t.text, hash_pos)
        last = t.line_end(end)
        if t.edit(first, last, ""):
            t.change(
                first,
                "header",
                t.text[first:last].strip(),
                "",
                CONVERTED,
                f"removed: {entry.note}" if entry.note else "removed",
                whole_line=True,
            )
        return True
    new_path = _header_path(t, entry, path, start)
    if new_path is None:
        return True
    if new_path == HIP_RUNTIME_HEADER:
        t.includes_hip_runtime = True
    elif entry.needs_runtime and not t.includes_hip_runtime:
        first = line_start(t.text, hash_pos)
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
    return True


def _header_path(t: Translation, entry: HeaderEntry, path: str, pos: int) -> str | None:
    """The HIP path for ``entry`` on the target, or None (after reporting why)."""
    if not entry.hip:
        t.change(pos, "header", path, path, UNCONVERTED, entry.note)
        return None
    if entry.since is not None and entry.since > t.target:
        note = (
            f"{entry.hip} is not available before ROCm {version_text(entry.since)} "
            f"(target {version_text(t.target)})"
        )
        if entry.note:
            note += f"; {entry.note}"
        t.change(pos, "header", path, path, UNCONVERTED, note)
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
    t.change(pos, "header", path, path, UNCONVERTED, note)


def _library_advice(header: str) -> str:
    """What the knowledge base says of the CUDA library that ``header`` belongs to."""
    library = kb.library_for_header(header)
    if library is None:
        return ""
    counterpart = f"AMD counterpart: {library.amd_counterpart}" if library.amd_counterpart else ""
    return "; ".join(x for x in (counterpart, library.notes) if x)


def has_include(t: Translation, name: str, start: int, end: int) -> None:
    """``__has_include(<cuda_fp16.h>)``: the header inside takes the #include mapping."""
    m = _HAS_INCLUDE_RE.match(t.text, end)
    if not m:
        return
    token = m.group(1)
    entry = t.api.header(token[1:-1].strip())
    if entry is None or entry.keep or entry.drop or not entry.hip:
        return
    if entry.since is not None and entry.since > t.target:
        return
    new_token = token[0] + entry.path_for(t.target) + token[-1]
    start = m.start(1)
    if t.edit(start, m.end(1), new_token):
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
