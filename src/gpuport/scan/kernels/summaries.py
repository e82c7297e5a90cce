"""Once-per-file summaries: the most frequent names of a kind, and a library's use counted over a file."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from gpuport.findings import Finding
from gpuport.kb.kernels import KernelLibrary
from gpuport.rules import Rule
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.words import anchored, inside_other_namespace, words

# An include guard's name (`CUDNN_ATT_H`, `CUBLASLT_UTILS_HPP_`), which only looks like the
# library's own constants.
_INCLUDE_GUARD_RE = re.compile(r"\w+_(?:H|HH|HPP|HXX|CUH|INC|INCLUDED|HEADER)_*")


def top(counter: Counter[str], n: int = 3) -> str:
    """The ``n`` most frequent names, with their counts: ``cudaMemcpy x2, cudaMalloc, …``."""
    parts = [f"{name} x{count}" if count > 1 else name for name, count in counter.most_common(n)]
    if len(counter) > n:
        parts.append("…")
    return ", ".join(parts)


def library_use(src: KernelSource, rule: Rule, library: KernelLibrary) -> Iterator[Finding]:
    """One finding of ``rule`` at the first use of ``library``, counting every use in the file."""
    if not src.mentions(rule):
        return
    skip_prefixes = library.skip_prefixes
    first: int | None = None
    names: Counter[str] = Counter()
    headers: list[str] = []
    if library.headers is not None:
        for header, offset in src.includes:
            if library.headers.search(header) and not src.project_header(header, offset):
                headers.append(header)
                first = offset if first is None else min(first, offset)
    if library.identifiers is not None:
        # names the project maps to the HIP library for ROCm (bitsandbytes' `#define
        # cublasLtHandle_t hipblasLtHandle_t` under BUILD_HIP) are ported already
        aliased = _rocm_defined(src) if library.identifiers.search(src.body) else frozenset()
        for m in words(library.identifiers, src.body):
            if inside_other_namespace(src.body, m.start()):
                continue  # thrust::cuda::par is Thrust's, not libcu++
            name = m.group()
            if name in library.skip or name.startswith(skip_prefixes) or name in aliased:
                continue
            if _INCLUDE_GUARD_RE.fullmatch(name):
                continue  # `#ifndef CUDNN_ATT_H`: a header's include guard, not the library
            names[name] += 1
            first = m.start() if first is None else min(first, m.start())
    if first is None:
        return
    parts: list[str] = []
    total = sum(names.values())
    if total:
        parts.append(f"{total} reference{'s' if total != 1 else ''} ({top(names)})")
    if headers:
        shown = ", ".join(f"<{h}>" for h in headers[:3]) + (", …" if len(headers) > 3 else "")
        parts.append(f"#include {shown}")
    yield src.finding(
        rule,
        first,
        message=f"{library.label} in this file: {' and '.join(parts)}; {library.advice}",
    )


def _rocm_defined(src: KernelSource) -> frozenset[str]:
    """Names the file, or a project header it includes, ``#define``s in a branch only ROCm
    compiles (any name: library types like ``cublasLtHandle_t`` too)."""
    found = src.conditions
    local = (
        frozenset(d.name for d in found.defines if d.rocm_branch and d.compiled is not False)
        if found is not None
        else frozenset()
    )
    return local | src.rocm_aliases()


def names_once_per_line(
    src: KernelSource, pattern: re.Pattern[str], anchors: tuple[str, ...]
) -> Iterator[tuple[re.Match[str], str]]:
    """The first match of ``pattern`` on each line of the code (``#include`` lines blanked),
    found at the names containing one of ``anchors``, with the name shortened for a message."""
    body = src.body
    if not any(map(body.__contains__, anchors)):
        return
    for m in src.once_per_line(anchored(pattern, body, anchors)):
        name = " ".join(m.group().rstrip(";,( ").split())
        if len(name) > 60:
            name = name[:57] + "…"
        yield m, name
