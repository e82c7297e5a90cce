"""Whether torch's own hipify renames a project's CUDA names when it builds for ROCm.

``torch.utils.cpp_extension.CUDAExtension`` and ``load()`` run torch's hipify over an
extension's sources (and the project headers they include) by themselves when PyTorch is a ROCm
build: ``cudaStream_t`` becomes ``hipStream_t`` at build time, with nothing to do by hand
(https://github.com/ROCm/pytorch/wiki/Enabling-PyTorch-CUDA-extensions-for-ROCm, read
2026-11-25: "Invoked for ROCm builds automatically under-the-hood by CUDAExtension class";
``CppExtension`` does not hipify). A project whose build files build CUDA extensions that way
gets its GP300 renames done by the build, except in folders a CMake build compiles as CUDA
itself (TransformerEngine's core library, bitsandbytes), which torch never hipifies.

A project whose build files build their torch extensions only as ``CppExtension`` (no
``CUDAExtension``, no ``load()``) gets no hipify from torch: its CUDA names stay work (GP300's
plain rename finding, project/triage.py), whatever headers its files include.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.project.model import Evidence
from gpuport.project.survey import Survey
from gpuport.project.texts import ProjectTexts

# A torch CUDA extension: CUDAExtension (imported or called), load()/load_inline() of
# torch.utils.cpp_extension (exllamav2's and DeepSpeed's JIT builds).
_TORCH_CUDA_BUILD_RE = re.compile(
    r"\bCUDAExtension\b|\bload_inline\b|cpp_extension\s+import\s+[^\n]*\bload\b"
    r"|cpp_extension\.load\s*\("
)
# A torch C++ extension: torch.utils.cpp_extension.CppExtension called (not only imported).
_TORCH_CPP_BUILD_RE = re.compile(r"\bCppExtension\s*\(")
# CMake compiling CUDA itself: the CUDA language, or nvcc-era cuda_add_library.
_CMAKE_CUDA_RE = re.compile(
    r"enable_language\s*\(\s*CUDA\b|project\s*\([^)]*\bCUDA\b|LANGUAGES\s+[^)]*\bCUDA\b"
    r"|cuda_add_library\s*\(",
    re.IGNORECASE,
)


def torch_hipify_evidence(texts: ProjectTexts, found: Survey) -> list[Evidence]:
    """Where the project builds a CUDA extension through torch (at most one per file)."""
    out: list[Evidence] = []
    for rel, lines in _build_scripts(texts, found, _TORCH_CUDA_BUILD_RE):
        for number, line in lines:
            match = _TORCH_CUDA_BUILD_RE.search(line)
            if match:
                what = (
                    f"builds a CUDA extension through torch.utils.cpp_extension "
                    f"({match.group().strip()}), which hipifies its sources on a ROCm PyTorch"
                )
                out.append(Evidence(rel, number, what))
                break
    return out


def _build_scripts(
    texts: ProjectTexts, found: Survey, pattern: re.Pattern[str]
) -> Iterator[tuple[str, Iterator[tuple[int, str]]]]:
    """Each Python build file (setup.py, build helpers) that ``pattern`` finds something in,
    with its numbered lines, comment lines left out (a line's match is one in the whole text:
    one search rules out most of DeepSpeed's 21 op builders, read twice line by line before)."""
    for rel in [*found.setup_pys, *found.build_helpers]:
        if not rel.endswith(".py"):
            continue
        text = texts.text(rel)
        if text is not None and pattern.search(text) is not None:
            yield (
                rel,
                (
                    (number, line)
                    for number, line in enumerate(text.splitlines(), 1)
                    if not line.lstrip().startswith("#")
                ),
            )


def cpp_extension_only_evidence(
    texts: ProjectTexts, found: Survey, hipified: bool | None = None
) -> list[Evidence]:
    """Where the project builds a torch extension as ``CppExtension``, when that is the only
    way its build files build torch extensions (at most one per file); empty when any build
    file builds a CUDA extension through torch (:func:`torch_hipify_evidence`; ``hipified``:
    whether it found any, when the caller has asked already)."""
    if torch_hipify_evidence(texts, found) if hipified is None else hipified:
        return []
    out: list[Evidence] = []
    for rel, lines in _build_scripts(texts, found, _TORCH_CPP_BUILD_RE):
        for number, line in lines:
            if _TORCH_CPP_BUILD_RE.search(line):
                what = (
                    "builds its PyTorch extension as a CppExtension, which torch does not "
                    "hipify (only CUDAExtension and load() do)"
                )
                out.append(Evidence(rel, number, what))
                break
    return out


def native_cuda_dirs(texts: ProjectTexts, found: Survey) -> list[str]:
    """Folders a CMakeLists.txt compiles as CUDA itself ("" for the project root)."""
    dirs: list[str] = []
    for rel in found.cmake_files:
        if not rel.lower().endswith("cmakelists.txt"):
            continue
        text = texts.text(rel)
        if text is not None and _CMAKE_CUDA_RE.search(text):
            dirs.append(rel.rpartition("/")[0])
    return sorted(dirs)
