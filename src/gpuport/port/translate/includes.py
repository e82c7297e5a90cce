"""Headers: each ``#include`` and ``__has_include`` of a CUDA header gets its HIP path (in the
library include style asked for), a second include of the same HIP header goes, and a file
that relied on nvcc's implicit ``cuda_runtime.h`` gets ``hip/hip_runtime.h``. The project's
own headers (a "cuda/util.cuh" of its own) stay as they are."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import NamedTuple

from gpuport import kb
from gpuport.files import FileKind
from gpuport.port.apimap import HeaderEntry, version_text
from gpuport.port.knowledge import translation_facts
from gpuport.port.translate.syntax import line_start, line_tokens, starts_line
from gpuport.port.translate.translation import CONVERTED, UNCONVERTED, Translation
from gpuport.syntax.cxx import HEADER_RE, Kind, tokenize

HIP_RUNTIME_HEADER = "hip/hip_runtime.h"
# Library headers: "nested" (hipblas/hipblas.h, ROCm 5.2 on), "flat" (hipblas.h, before 5.2
# and, deprecated, until 6.0), "auto" (the one the target release has: see [[header]] moved).
INCLUDE_STYLES = ("auto", "nested", "flat")

# The CUDA toolkit's headers: an #include of one gpuport cannot map is reported, while a
# project's own headers (even ones named cuda_utils.h) are left alone.
_TOOLKIT_HEADER_RE = translation_facts().toolkit_header_re
_HAS_INCLUDE_OPEN_RE = re.compile(r"\s*+\(\s*+(?=[<\"])")
_CLOSE_PAREN_RE = re.compile(r"\s*+\)")
_LINE_BREAK_AFTER_RE = re.compile(r"[\r\n]")
# A conditional directive between two includes of the same header: the later one may be the
# only one compiled, so it stays.
_CONDITIONAL_RE = re.compile(r"^[ \t]*+#[ \t]*+(?:if|elif|else|endif)", re.MULTILINE)
# C and C++ headers (by name): one that uses GPU code without including the runtime relied on
# the .cu file including it, which nvcc had given cuda_runtime.h first.
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".ipp", ".tcc")


def project_files(paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The project's files (paths relative to its root) by file name, for
    :class:`~.translation.Translation`'s ``project_files``."""
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    return {name: tuple(found) for name, found in by_name.items()}


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
    quoted = token[0] == '"'
    entry = t.api.header(path)
    if entry is None:
        if _TOOLKIT_HEADER_RE.match(path) is None:
            t.hip_headers.setdefault(path, end)  # a HIP header (or any other) already there
            if path == HIP_RUNTIME_HEADER:
                t.includes_hip_runtime = True
        elif not _is_project_header(t, path, quoted, mapped=False):
            _unknown_header(t, start, path)
        return
    mapped = bool(entry.hip or entry.drop)
    if entry.keep or _is_project_header(t, path, quoted, mapped=mapped):
        return
    if entry.drop:
        if not _remove(t, hash_pos, end, f"removed: {entry.note}" if entry.note else "removed"):
            t.report(start, "header", path, UNCONVERTED, "not removed: code follows it on its line")
        return
    new_path = _header_path(t, entry, path, start)
    if new_path is None:
        return
    first = t.hip_headers.get(new_path)
    if (
        first is not None
        and _CONDITIONAL_RE.search(t.text, first, hash_pos) is None
        and _remove(t, hash_pos, end, f"removed: {new_path} is included above already")
    ):
        return  # else code follows it on its line: translated in place, a harmless repeat
    if new_path == HIP_RUNTIME_HEADER:
        t.includes_hip_runtime = True
    elif entry.needs_runtime and not t.includes_hip_runtime:
        first = _line_start_if_blank_before(t.text, hash_pos)
        runtime = f"#include <{HIP_RUNTIME_HEADER}>"
        if t.edit(first, first, runtime + t.newline()):
            t.includes_hip_runtime = True
            t.hip_headers.setdefault(HIP_RUNTIME_HEADER, first)
            t.change(
                first,
                "header",
                "",
                runtime,
                CONVERTED,
                f"added: {entry.hip} needs hip/hip_runtime.h before it",
                whole_line=True,
            )
    t.hip_headers.setdefault(new_path, end)
    new_token = token[0] + new_path + token[-1]
    if t.edit(start, end, new_token):
        t.change(start, "header", token, new_token, CONVERTED, entry.note)


def _remove(t: Translation, hash_pos: int, end: int, note: str) -> bool:
    """Delete the ``#include`` from ``hash_pos`` to ``end`` (see :func:`_directive_cut`);
    False when it cannot be deleted alone."""
    cut = _directive_cut(t.text, hash_pos, end)
    if cut is None:
        return False
    first, last = cut
    if t.edit(first, last, ""):
        t.change(hash_pos, "header", t.text[hash_pos:end], "", CONVERTED, note, whole_line=True)
    return True


def _is_project_header(t: Translation, path: str, quoted: bool, *, mapped: bool) -> bool:
    """Does ``#include "path"`` (or ``<path>``) name one of the project's own files?

    A quoted name is looked for beside the including file (the compiler's first place), then
    as the tail of a project path (an include directory). A name in angle brackets is the
    project's only where gpuport would otherwise raise an alarm (no HIP counterpart, not
    ``mapped``) and it has a folder and a file extension, as a project's headers have and
    libcu++'s do not (``<cuda/util.cuh>`` may be the project's, ``<cuda/std/atomic>`` and a
    vendored ``<cub/cub.cuh>`` are still the toolkit's)."""
    name = path.replace("\\", "/")
    base = posixpath.basename(name)
    found = t.project_files.get(base)
    if not found or name.startswith("/"):
        return False
    if quoted:
        beside = posixpath.normpath(posixpath.join(posixpath.dirname(t.rel), name))
        if beside in found:
            return True
    elif mapped or "/" not in name or "." not in base:
        return False
    tail = posixpath.normpath(name)
    while tail.startswith("../"):
        tail = tail[3:]
    return any(p == tail or p.endswith("/" + tail) for p in found)


_BLANKS_RE = re.compile(r"[ \t]*+")
_BLANKS_TO_END_RE = re.compile(r"[ \t]*+\Z")
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n|\Z")


def _line_start_if_blank_before(text: str, hash_pos: int) -> int:
    """The start of the line holding the '#' at ``hash_pos`` when only blanks come before it
    there, else ``hash_pos``: what comes before may be the end of a block comment."""
    first = line_start(text, hash_pos)
    return first if _BLANKS_TO_END_RE.match(text, first, hash_pos) else hash_pos


def _directive_cut(text: str, hash_pos: int, header_end: int) -> tuple[int, int] | None:
    """What to delete to drop the ``#include`` from ``hash_pos`` to ``header_end``: its whole
    line (newline included) when nothing else is on it; else the directive and the blanks
    after it only, so that a comment before or after it (one that opens a block comment, say)
    stays as it was. None when code follows it on its line: that code would start the line
    once the directive is gone (a second ``#include`` there would become a directive)."""
    after = _BLANKS_RE.match(text, header_end)
    stop = after.end() if after else header_end
    line_break = _LINE_BREAK_RE.match(text, stop)
    if line_break is None:
        if not text.startswith(("//", "/*"), stop):
            return None
        return hash_pos, stop  # a comment follows on the line
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
    return _styled_path(t, entry)


def _styled_path(t: Translation, entry: HeaderEntry) -> str:
    """The path of ``entry`` in the include style asked for (--include-style)."""
    style = t.options.include_style
    if style == "flat" and entry.flat:
        return entry.flat
    if style == "nested":
        return entry.hip
    return entry.path_for(t.target)


def _unknown_header(t: Translation, pos: int, path: str) -> None:
    """Report a CUDA toolkit header gpuport has no counterpart for (whatever its quotes)."""
    note = "a CUDA toolkit header with no HIP counterpart known to gpuport"
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
    path = token[1:-1].strip()
    entry = t.api.header(path)
    if entry is None or entry.keep or entry.drop or not entry.hip:
        return
    if entry.since is not None and entry.since > t.target:
        return
    if _is_project_header(t, path, token[0] == '"', mapped=True):
        return
    new_token = token[0] + _styled_path(t, entry) + token[-1]
    start = header.start()
    if t.edit(start, header.end(), new_token):
        t.change(start, "header", token, new_token, CONVERTED, entry.note)


# ----------------------------------------------------------------- the implicit runtime


def relied_on_implicit_runtime(t: Translation) -> bool:
    """Could the file have used GPU code without including the runtime? A .cu/.cuh file (nvcc
    includes cuda_runtime.h in it) or a header (included from one), not a .cpp file, which had
    to include the runtime itself."""
    return t.kind is FileKind.CUDA or (
        t.kind is FileKind.CXX and t.rel.lower().endswith(_HEADER_SUFFIXES)
    )


def insert_runtime_include(t: Translation) -> None:
    """Add the ``#include <hip/hip_runtime.h>`` that nvcc's implicit one stood for: in a
    header written for other compilers too (it tests ``__CUDACC__``), under ``#ifdef
    __HIPCC__``, as nvcc included the runtime only where it compiled the code itself."""
    place = _runtime_include_place(t.text)
    pos = place.offset
    nl = t.newline()
    line = f"#include <{HIP_RUNTIME_HEADER}>"
    header = t.kind is not FileKind.CUDA or t.rel.lower().endswith(".cuh")
    guarded = header and _HOST_COMPILER_TEST_RE.search(t.text) is not None
    new = f"#ifdef __HIPCC__{nl}{line}{nl}#endif{nl}" if guarded else line + nl
    if place.after_directive and pos == len(t.text) and not t.text.endswith(("\n", "\r")):
        new = nl + new
    if t.edit(pos, pos, new):
        t.includes_hip_runtime = True
        note = _HEADER_NOTE if header else _IMPLICIT_NOTE
        if guarded:
            note += "; under #ifdef __HIPCC__, as the header is compiled without nvcc too"
        t.change(pos, "header", "", line, CONVERTED, note, whole_line=True)


_IMPLICIT_NOTE = "added: nvcc includes cuda_runtime.h in every .cu file by itself, hipcc does not"
_HEADER_NOTE = (
    "added: this header uses GPU code without including the runtime, which nvcc had included "
    "in the .cu files that include it; hipcc does not"
)
# A header that tests for nvcc is also compiled by host compilers, which lack hip_runtime.h's
# platform macros: its runtime include is only for hipcc.
_HOST_COMPILER_TEST_RE = re.compile(r"(?<![A-Za-z0-9_$])__(?:CUDACC|NVCC)__(?![A-Za-z0-9_$])")


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
    directive_at = 0  # where the `#pragma once` line starts
    for line in line_tokens(text):
        if not line.significant:
            continue  # blank or comment-only line
        words = [tok.text for tok in line.significant]
        if words[0] == "#" and len(words) >= 2:
            if state == "start" and words[1:3] == ["pragma", "once"]:
                pos, after_directive, state = line.end, True, "pragma"
                directive_at = line.start
                continue
            if state in ("start", "pragma") and words[1] == "ifndef" and len(words) == 3:
                guard, guard_line, state = words[2], line.start, "ifndef"
                continue
            if state == "ifndef" and words[1] == "define" and words[2:3] == [guard]:
                return _IncludePlace(line.end, True)
        if state == "ifndef":
            return _IncludePlace(guard_line, False)  # an #ifndef that guards nothing: go before it
        return _IncludePlace(pos if after_directive else line.start, after_directive)
    if after_directive and pos == len(text) and _ends_in_open_comment(text[directive_at:]):
        # `#pragma once /* …` to the end of the file: a line put after it would be inside the
        # comment, where no compiler sees it (and the next translation would add it again)
        return _IncludePlace(0, False)
    return _IncludePlace(pos, after_directive)


def _ends_in_open_comment(text: str) -> bool:
    """Whether ``text`` (from the start of a line outside any comment) ends inside a block
    comment that never closes."""
    last = next(reversed(list(tokenize(text))), None)
    return (
        last is not None
        and last.kind is Kind.COMMENT
        and last.text.startswith("/*")
        and (len(last.text) < 4 or not last.text.endswith("*/"))
    )
