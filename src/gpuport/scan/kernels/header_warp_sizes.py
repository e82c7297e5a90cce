"""Warp-size constants of 32: where a file defines one, and which of a project's headers' ones
every reader uses only as a size (GP305).

A ``#define WARP_SIZE 32`` in a header is reported by GP305 unless every read of it, in the
header and in each project file that includes it (directly or through other headers), sizes
something the code chose (a tile width, a launch shape, an array extent, a loop step, a
static_assert): then the 32 is a logical group, which a 64-lane wavefront runs the same. The
project model asks this once per scan, with the texts of the project's headers and sources
(project/build.py); the rule reads the answer from the project's facts.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping

from gpuport.files import resolve_include
from gpuport.scan.kernels.lane_groups import at_file_level, header_size_read
from gpuport.scan.kernels.source import KernelSource, directive_line_start
from gpuport.scan.kernels.words import words
from gpuport.syntax.cxx import code_only

# Starts at the '#' (see source._INCLUDE_RE); the line start is found by directive_line_start.
_DEFINE_32_RE = re.compile(r"#[ \t]*define[ \t]+(\w+)[ \t]+\(?[ \t]*32[uU]?[ \t]*\)?[ \t]*$", re.M)
_VALUE_32_RE = re.compile(r"(?:=\s*\(?\s*32[uU]?\s*\)?\s*(?=[;,>})])|\{\s*32[uU]?\s*\})")
NAME_BEFORE_RE = re.compile(r"([A-Za-z_]\w*)\s*$")
_ASSIGNMENT_OPERATOR_CHARS = "=!<>+-*/%&|^"
WARP_NAME_RE = re.compile(
    r"warp_?(?:size|sz|width|threads|lanes)|threads_?per_?warp|lanes_?per_?warp", re.I
)
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")


def warp_32_hits(code: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each definition of a name as 32 (``#define``, ``= 32``, ``{32}``),
    in file order; the caller keeps the warp-size names."""
    hits: list[tuple[int, int, str]] = []
    if "define" in code:
        for m in _DEFINE_32_RE.finditer(code):
            line_start = directive_line_start(code, m.start())
            if line_start >= 0:
                hits.append((line_start, m.end(), m.group(1)))
    for m in _values_32(code):
        is_operator = m.start() > 0 and code[m.start() - 1] in _ASSIGNMENT_OPERATOR_CHARS
        if m.group().startswith("=") and is_operator:
            continue  # ==, <=, += …
        before = NAME_BEFORE_RE.search(code, max(0, m.start() - 80), m.start())
        if before is not None:
            hits.append((before.start(1), m.end(), before.group(1)))
    return sorted(hits)


def _values_32(code: str) -> Iterator[re.Match[str]]:
    """``_VALUE_32_RE.finditer(code)``, tried only where a "32" follows ``=`` or ``{``.

    '=' and '{' are everywhere in C++, and trying the pattern at each costs more than
    finding each "32" and looking back over the spaces and the one '(' the pattern allows.
    Matches cannot overlap (each holds one '=' or '{', at its start), so none is lost.
    """
    at = code.find("32")
    while at >= 0:
        start = at - 1
        while start >= 0 and code[start].isspace():
            start -= 1
        if start >= 0 and code[start] == "(":
            start -= 1
            while start >= 0 and code[start].isspace():
                start -= 1
        if start >= 0 and code[start] in "={":
            m = _VALUE_32_RE.match(code, start)
            if m is not None:
                yield m
        at = code.find("32", at + 2)


_INCLUDE_LINE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\r\n]+)[>"]', re.M)
# A read on one of these directive lines defines or tests the name; it sizes and indexes nothing.
_DEFINING_DIRECTIVE_RE = re.compile(r"[ \t]*#[ \t]*(?:define|undef|ifn?def)\b")


def size_only_header_constants(texts: Mapping[str, str]) -> frozenset[str]:
    """``"header:NAME"`` for each header's file-level warp-size constant of 32 whose every read,
    in the header and in the project files that include it (directly or through other
    headers), is a size the code chose: none at all, a cooperative-groups tile width, a tile
    number where lanes exchange only through tiles, a launch shape, an array extent, a loop
    step or a static_assert (:func:`header_size_read`). ``texts``: the project's C/C++/CUDA
    sources and headers, by path relative to the root.

    A header no project file includes is left out (its readers are elsewhere: an installed
    API), and so is a header under an ``include/`` folder (a library's public headers). One
    read that may reach a lane exchange (a shuffle width or offset, a mask, a lane index
    beside a raw shuffle) keeps the constant reported: a port must choose its width."""
    headers = [rel for rel in texts if rel.endswith(HEADER_SUFFIXES)]
    candidates: list[tuple[str, str, int, int]] = []  # (header, name, definition start, end)
    codes: dict[str, str] = {}
    for rel in headers:
        text = texts[rel]
        if "32" not in text or WARP_NAME_RE.search(text) is None:
            continue
        if "include" in rel.split("/")[:-1]:
            continue
        code = codes.setdefault(rel, code_only(text))
        for start, end, name in warp_32_hits(code):
            if WARP_NAME_RE.search(name) and at_file_level(code, end):
                candidates.append((rel, name, start, end))
    if not candidates:
        return frozenset()
    by_name: dict[str, list[str]] = {}
    for rel in headers:
        by_name.setdefault(posixpath.basename(rel), []).append(rel)
    includers: dict[str, set[str]] = {}
    for rel, text in texts.items():
        if "include" not in text:
            continue
        for m in _INCLUDE_LINE_RE.finditer(text):
            same_name = by_name.get(posixpath.basename(m.group(1).strip()))
            target = resolve_include(rel, m.group(1), same_name) if same_name else None
            if target is not None and target != rel:
                includers.setdefault(target, set()).add(rel)
    sources: dict[str, KernelSource] = {}
    judged: set[str] = set()
    for header, name, start, end in candidates:
        reached, todo = {header}, [header]
        while todo:
            for rel in includers.get(todo.pop(), ()):
                if rel not in reached:
                    reached.add(rel)
                    todo.append(rel)
        if len(reached) == 1:
            continue  # nothing in the project includes it: its reads are not here
        pattern = re.compile(re.escape(name) + r"\b")
        if all(
            _reads_are_sizes(rel, texts[rel], codes, sources, pattern, header, start, end)
            for rel in sorted(reached)
            if name in texts[rel]
        ):
            judged.add(f"{header}:{name}")
    return frozenset(judged)


def _reads_are_sizes(
    rel: str,
    text: str,
    codes: dict[str, str],
    sources: dict[str, KernelSource],
    pattern: re.Pattern[str],
    header: str,
    start: int,
    end: int,
) -> bool:
    if rel not in sources:
        sources[rel] = KernelSource(rel, text, codes.get(rel) or code_only(text))
    src = sources[rel]
    code = src.code
    own = {h[0] for h in warp_32_hits(code)}
    for read in words(pattern, code):
        if rel == header and start <= read.start() < end:
            continue  # the definition itself
        line_start = code.rfind("\n", 0, read.start()) + 1
        if _DEFINING_DIRECTIVE_RE.match(code, line_start) or read.start() in own:
            continue  # `#ifndef WARP_SIZE`, another definition of the name
        if not header_size_read(src, read.start(), read.end(), read.group()):
            return False
    return True
