"""What the project's own headers bring into the files that include them, read with the preprocessor.

One bounded pass reads the project's headers (not vendored copies: CUTLASS, CK), each through
:func:`gpuport.syntax.preprocessor.conditions` as a ROCm build sees it, and notes per header:

- the CUDA names it ``#define``s in a branch only ROCm compiles (exllamav2's compat.cuh maps
  ``__shfl_xor_sync`` to ``__shfl_xor`` under ``USE_ROCM``): its ROCm aliases;
- the macros it defines only in branches ROCm never compiles (DeepSpeed's
  ``#if __CUDA_ARCH__ >= 530`` ``#define PTX_AVAILABLE``), unless some header defines them
  where ROCm looks too: its CUDA-only macros;
- the macros it defines as a test of the CUDA toolkit's version (TransformerEngine's
  ``#define FP4_TYPE_SUPPORTED (CUDA_VERSION >= 12080)``), which are 0 on ROCm, unless some
  header defines them otherwise: its zero macros (``#if FP4_TYPE_SUPPORTED`` is dead on ROCm);
- the headers it includes (quoted or angled, resolved as
  :func:`gpuport.files.resolve_include` says).

The sets are then carried **transitively** through the include map of the headers read: a
header including ``compat.cuh`` (directly or through other project headers) brings its aliases
too. And the other way: a header that every file including it (of the headers and C++/CUDA
sources read, include lines only) includes *after* such a header gets its names as well, since
the compiler sees them first (exllamav2's ``cache.cu`` includes ``compat.cuh``, then
``cache_q.cuh``, whose shuffles rely on it; include order inside a file is not followed). Only
headers whose set is not empty, and those sharing a file name with one (so that an
include of the other is told apart), go into :attr:`ProjectFacts.headers`; a source file gets
a header's facts only when it includes it (the kernel scanner resolves its ``#include`` lines
against them). Headers past the byte budget are not read: their includes are not followed.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict, deque
from collections.abc import Callable

from gpuport.files import HeaderFacts, resolve_include
from gpuport.project.survey import Survey
from gpuport.project.texts import (
    HEADER_BUDGET,
    HEADER_BYTES,
    SOURCE_BUDGET,
    SOURCE_BYTES,
    ProjectTexts,
)
from gpuport.syntax.preprocessor import can_matter, conditions, is_nvidia_only, zero_on_rocm

# How many include folders the model carries: the kernel scanner tries each for a quoted include
# it cannot find beside the including file.
MAX_INCLUDE_DIRS = 32
_INCLUDE_FOLDER_NAMES = frozenset({"include", "includes", "inc"})
# Folders a build file adds to the include path: CMake's include_directories /
# target_include_directories, setup.py's include_dirs=[...] and op builders' include_paths().
_BUILD_INCLUDES_RE = re.compile(
    r"(?:include_directories\s*\(|include_dirs\s*=\s*\[|def\s+include_paths\s*\()([^)\]]{0,2000})"
)
_QUOTED_OR_WORD_RE = re.compile(r"[\"']([^\"'\s]+)[\"']|([\w${}./-]+)")
_INCLUDE_RE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\r\n]+)[>\"]", re.MULTILINE)
_DEFINE_RE = re.compile(rb"#[ \t]*define\b")
_DEFINED_NAME_RE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_]\w*)")
# A #define whose body tests the toolkit's version: read even in a header with no #if ROCm decides.
_VERSION_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+\w+[ \t]+[^\n]*\bCUDA(?:RT)?_VERSION\b")


def header_facts(
    texts: ProjectTexts,
    found: Survey,
    rocm_macros: frozenset[str],
    own: Callable[[str], bool] = lambda rel: True,
) -> tuple[HeaderFacts, ...]:
    """Per project header, the aliases and CUDA-only macros it brings in (see the module)."""
    includes: dict[str, list[str]] = {}
    aliases: dict[str, frozenset[str]] = {}
    cuda_only: dict[str, frozenset[str]] = {}
    zero: dict[str, frozenset[str]] = {}
    live: set[str] = set()  # macros some header defines where ROCm (maybe) compiles
    nonzero: set[str] = set()  # ...and those among them not defined as a toolkit-version test
    spent = 0
    for rel in found.headers:
        if spent >= HEADER_BUDGET:
            break
        if not own(rel):
            continue
        data = texts.data(rel, HEADER_BYTES)
        if data is None:
            continue
        spent += len(data)
        includes[rel] = [m.group(1).decode("utf-8", "replace") for m in _INCLUDE_RE.finditer(data)]
        if not _DEFINE_RE.search(data):
            continue
        code = texts.code(data.decode("utf-8", "replace"))
        if not can_matter(code, rocm_macros) and not _VERSION_DEFINE_RE.search(code):
            names = _DEFINED_NAME_RE.findall(code)  # no branch ROCm skips: all are live
            live.update(names)
            nonzero.update(names)
            continue
        read = conditions(code, rocm_macros)
        live.update(d.name for d in read.defines)
        zeros = {
            d.name
            for d in read.defines
            if d.params is None and d.compiled is True and zero_on_rocm(d.body)
        }
        nonzero.update(d.name for d in read.defines if d.name not in zeros)
        nonzero.update(read.cuda_only_macros)
        if zeros:
            zero[rel] = frozenset(zeros)
        if found_aliases := read.rocm_aliases():
            aliases[rel] = found_aliases
        # NVCC's own macros are undefined on ROCm anyway (a header's fallback #define of one)
        if own_macros := {n for n in read.cuda_only_macros if not is_nvidia_only(n)}:
            cuda_only[rel] = frozenset(own_macros)
    cuda_only = {rel: names - live for rel, names in cuda_only.items() if names - live}
    zero = {rel: names - nonzero for rel, names in zero.items() if names - nonzero}
    if not aliases and not cuda_only and not zero:
        return ()
    by_name: dict[str, list[str]] = defaultdict(list)
    for rel in includes:
        by_name[posixpath.basename(rel)].append(rel)
    included_by: dict[str, set[str]] = defaultdict(set)
    for rel, names in includes.items():
        for target in _resolved(rel, names, by_name):
            included_by[target].add(rel)
    brought_aliases = _spread(aliases, included_by)
    brought_macros = _spread(cuda_only, included_by)
    brought_zero = _spread(zero, included_by)
    # What a file including a header had in effect before: exllamav2's cache.cu includes
    # compat.cuh, then cache_q.cuh, which uses the shuffles without including compat.cuh.
    context = _context(
        _source_includes(texts, found, own, by_name),
        includes,
        (brought_aliases, brought_macros, brought_zero),
    )
    kept = set(brought_aliases) | set(brought_macros) | set(brought_zero) | set(context)
    kept_names = {posixpath.basename(rel) for rel in kept}
    kept |= {rel for rel in includes if posixpath.basename(rel) in kept_names}
    none = frozenset[str]()
    empty: _Names = (none, none, none)
    return tuple(
        HeaderFacts(
            rel,
            brought_aliases.get(rel, none) | context.get(rel, empty)[0],
            brought_macros.get(rel, none) | context.get(rel, empty)[1],
            brought_zero.get(rel, none) | context.get(rel, empty)[2],
        )
        for rel in sorted(kept)
    )


def include_dirs(
    texts: ProjectTexts, found: Survey, own: Callable[[str], bool] = lambda rel: True
) -> tuple[str, ...]:
    """The project's own include folders, where a quoted ``#include`` the compiler does not find
    beside the including file is looked up (DeepSpeed's ``csrc/includes``, which its op
    builders put on the include path): folders holding project headers that are named
    ``include``/``includes``/``inc``, or that a build file adds to the include path. Vendored
    copies are left out; at most :data:`MAX_INCLUDE_DIRS`, the shallowest first."""
    folders = {posixpath.dirname(rel) for rel in found.headers if own(rel)}
    folders.discard("")
    # an include folder, or one above a header's folder (TE's common/include/transformer_engine)
    chosen: set[str] = set()
    for folder in folders:
        parts = folder.split("/")
        chosen.update(
            "/".join(parts[: i + 1]) for i, p in enumerate(parts) if p in _INCLUDE_FOLDER_NAMES
        )
    for rel in [*found.cmake_files, *found.setup_pys, *found.build_helpers]:
        text = texts.text(rel)
        if text is None or "includ" not in text:
            continue
        base = posixpath.dirname(rel)
        for m in _BUILD_INCLUDES_RE.finditer(text):
            for quoted, word in _QUOTED_OR_WORD_RE.findall(m.group(1)):
                named = _include_folder(quoted or word, base, folders)
                if named is not None:
                    chosen.add(named)
    ordered = sorted(chosen, key=lambda f: (f.count("/"), f))
    return tuple(ordered[:MAX_INCLUDE_DIRS])


def _include_folder(written: str, base: str, folders: set[str]) -> str | None:
    """The header folder a build file's include entry names: relative to the build file's
    folder or to the root, after a leading ``${CMAKE_CURRENT_SOURCE_DIR}/``-style variable."""
    path = re.sub(r"^\$\{\w+\}/?", "", written.strip()).rstrip("/")
    if not path or path.startswith(("$", "/", "-")) or ".." in path.split("/"):
        return None
    for candidate in (posixpath.normpath(posixpath.join(base, path)), posixpath.normpath(path)):
        if candidate in folders:
            return candidate
    return None


def _source_includes(
    texts: ProjectTexts,
    found: Survey,
    own: Callable[[str], bool],
    by_name: dict[str, list[str]],
) -> dict[str, list[str]]:
    """The project headers each C++/CUDA source includes (sources read within their budget)."""
    out: dict[str, list[str]] = {}
    spent = 0
    for rel in [*found.sources, *found.hip_sources]:
        if spent >= SOURCE_BUDGET:
            break
        if not own(rel):
            continue
        data = texts.data(rel, SOURCE_BYTES)
        if data is None:
            continue
        spent += len(data)
        names = [m.decode("utf-8", "replace") for m in _INCLUDE_RE.findall(data)]
        out[rel] = _resolved(rel, names, by_name)
    return out


def _resolved(rel: str, names: list[str], by_name: dict[str, list[str]]) -> list[str]:
    """The project headers (of ``by_name``, by file name) that these include names resolve to."""
    targets: list[str] = []
    for name in names:
        same_name = by_name.get(posixpath.basename(name.strip()), [])
        target = resolve_include(rel, name, same_name) if same_name else None
        if target is not None and target != rel:
            targets.append(target)
    return targets


_Names = tuple[frozenset[str], ...]  # (aliases, CUDA-only macros, zero macros)
_CONTEXT_PASSES = 8  # include chains deeper than this carry a header's context no further


def _context(
    sources: dict[str, list[str]],
    header_includes: dict[str, list[str]],
    kinds: tuple[dict[str, frozenset[str]], ...],
) -> dict[str, _Names]:
    """Per header, the names in effect in **every** file that includes it (of those read),
    before it is included: what each includer's own includes bring, and its own context."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for rel in header_includes:
        by_name[posixpath.basename(rel)].append(rel)
    edges = dict(sources)
    for rel, names in header_includes.items():
        edges[rel] = _resolved(rel, names, by_name)
    none = frozenset[str]()
    empty: _Names = tuple(none for _ in kinds)
    brought: dict[str, _Names] = {}
    for rel, targets in edges.items():
        found = tuple(
            frozenset(kind.get(rel, none).union(*(kind.get(t, none) for t in targets)))
            for kind in kinds
        )
        if any(found):
            brought[rel] = found
    context: dict[str, _Names] = {}
    for _ in range(_CONTEXT_PASSES):
        seen: dict[str, _Names] = {}
        for rel, targets in edges.items():
            mine = brought.get(rel, empty)
            around = context.get(rel, empty)
            effect = tuple(a | b for a, b in zip(mine, around, strict=True))
            for target in targets:
                before = seen.get(target)
                seen[target] = (
                    effect
                    if before is None
                    else tuple(a & b for a, b in zip(before, effect, strict=True))
                )
        updated = {rel: names for rel, names in seen.items() if any(names)}
        if updated == context:
            break
        context = updated
    return context


def _spread(
    own: dict[str, frozenset[str]], included_by: dict[str, set[str]]
) -> dict[str, frozenset[str]]:
    """Each header's names plus those of every header it includes, through any depth."""
    out: dict[str, set[str]] = defaultdict(set)
    for source, names in own.items():
        seen = {source}
        queue = deque([source])
        while queue:
            header = queue.popleft()
            out[header] |= names
            for parent in included_by.get(header, ()):
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
    return {rel: frozenset(names) for rel, names in out.items()}
