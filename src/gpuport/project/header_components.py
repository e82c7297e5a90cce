"""Headers only NVIDIA-only code includes: an NVIDIA-only component of their own.

bitsandbytes' ``gemm_4bit_mma.cuh`` is included only by ``gemm_4bit_sm75.cu`` and
``gemm_4bit_sm80.cu``, which CMake compiles only in its CUDA branch, and ``gemm_4bit_sm75.cuh``
also by ``gemm_4bit.cu``, under ``#if defined(BNB_HAS_GEMM4BIT_SM75)``, a macro only that CUDA
branch defines. No ROCm compilation reaches them: their findings belong with the NVIDIA-only
files, under one GP601 line each. Conservative: a header counts only when every project file
that includes it was read (within the source budget) and each include is inside an NVIDIA-only
component, in a region ROCm never compiles (read with the project-wide macros only), or in
another such header; a header nothing includes is left alone.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from gpuport.files import resolve_include
from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.survey import Survey
from gpuport.project.texts import SOURCE_BUDGET, SOURCE_BYTES, ProjectTexts
from gpuport.syntax.preprocessor import can_matter, conditions

_INCLUDE_RE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\r\n]+)[>\"]", re.MULTILINE)
_MAX_HEADERS = 16  # an NVIDIA-only header tree larger than this is a folder's job


def unreached_headers(
    texts: ProjectTexts,
    found: Survey,
    components: list[Component],
    rocm_macros: frozenset[str],
    cuda_only: frozenset[str],
    own: Callable[[str], bool] = lambda rel: True,
) -> list[Component]:
    """Project headers that only NVIDIA-only files, or includes ROCm never compiles, reach.
    ``own``: the project's product files (vendored copies and tests are never a component)."""
    nvidia_only = [c for c in components if c.status is ComponentStatus.NVIDIA_ONLY]
    if not nvidia_only and not cuda_only:
        return []
    by_name: dict[str, list[str]] = {}
    for rel in filter(own, found.headers):
        by_name.setdefault(posixpath.basename(rel), []).append(rel)
    # header -> [(includer, line, reached on ROCm)]
    includers: dict[str, list[tuple[str, int, bool]]] = {}
    spent = 0
    for rel in [*found.sources, *found.hip_sources, *found.headers]:
        data = texts.data(rel, SOURCE_BYTES)
        if data is None:
            return []  # not read: an include of it may be missed
        spent += len(data)
        if spent > 2 * SOURCE_BUDGET:
            return []
        text = data.decode("utf-8", "replace")
        if "include" not in text:
            continue
        inside = any(c.contains(rel) for c in nvidia_only)
        dead = None
        for m in _INCLUDE_RE.finditer(text):
            same_name = by_name.get(posixpath.basename(m.group(1).strip()))
            target = resolve_include(rel, m.group(1), same_name) if same_name else None
            if target is None or target == rel:
                continue
            reached = not inside
            if reached:
                if dead is None:
                    code = texts.code(text)
                    found_conditions = (
                        conditions(code, rocm_macros, cuda_only)
                        if can_matter(code, rocm_macros | cuda_only)
                        else None
                    )
                    dead = found_conditions.is_dead if found_conditions else (lambda _o: False)
                reached = not dead(m.start())
            line = text.count("\n", 0, m.start()) + 1
            includers.setdefault(target, []).append((rel, line, reached))
    unreached: set[str] = set()
    changed = True
    while changed:  # a header only unreached headers include is unreached too
        changed = False
        for header, sites in includers.items():
            if header in unreached or any(c.contains(header) for c in nvidia_only):
                continue
            if all(not reached or rel in unreached for rel, _line, reached in sites):
                unreached.add(header)
                changed = True
    if not unreached or len(unreached) > _MAX_HEADERS:
        return []
    out: list[Component] = []
    for header in sorted(unreached):
        sites = includers[header]
        rel, line, _reached = sites[0]
        names = ", ".join(f"{r}:{n}" for r, n, _ in sites[:4])
        why = f"included only where no ROCm compilation reaches ({names})"
        alternative = next(
            (
                c.rocm_alternative
                for c in nvidia_only
                if c.rocm_alternative and any(c.contains(r) for r, _n, _ in sites)
            ),
            "",
        )
        out.append(
            Component(header, ComponentStatus.NVIDIA_ONLY, (Evidence(rel, line, why),), alternative)
        )
    return out
