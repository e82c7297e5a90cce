"""CUDA libraries and header families (cuda_libraries.toml) and their AMD counterparts."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from gpuport.kb.loader import keyed, load_toml


class LibraryStatus(StrEnum):
    """How far a CUDA library's AMD counterpart goes."""

    EQUIVALENT = "equivalent"  # a HIP/ROCm library with the same shape; hipify maps the names
    PARTIAL = "partial"  # a counterpart exists but covers less, or names differ in places
    DIFFERENT_API = "different-api"  # a counterpart exists with another API: a rewrite
    NOT_NEEDED = "not-needed"  # the HIP toolchain already provides it (headers, built-ins)
    NONE = "none"  # no AMD counterpart


@dataclass(frozen=True, slots=True)
class CudaLibrary:
    """A CUDA library (or header family) and its AMD counterpart."""

    name: str
    headers: tuple[str, ...]  # as written in #include, e.g. "cublas_v2.h", "cub/cub.cuh"
    link_names: tuple[str, ...]  # -l names / library files without lib prefix, e.g. "cublas"
    cmake_targets: tuple[str, ...]  # e.g. "CUDA::cublas"
    amd_counterpart: str  # e.g. "hipBLAS (on rocBLAS)"
    status: LibraryStatus
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    amd_headers: tuple[str, ...] = ()  # e.g. "hipblas/hipblas.h"
    amd_link_names: tuple[str, ...] = ()  # e.g. "hipblas"
    amd_cmake_targets: tuple[str, ...] = ()  # e.g. "roc::hipblas"
    amd_find_package: str = ""  # the CMake package to find, e.g. "hipblas"


@functools.cache
def cuda_libraries() -> Mapping[str, CudaLibrary]:
    """Every CUDA library entry, keyed by name."""
    data = load_toml("cuda_libraries.toml")
    return keyed(
        data,
        "library",
        "cuda_libraries.toml",
        "name",
        "duplicate library name",
        lambda entry, name: CudaLibrary(
            name=name,
            headers=entry.texts("headers"),
            link_names=entry.texts("link_names"),
            cmake_targets=entry.texts("cmake_targets"),
            amd_counterpart=entry.text("amd_counterpart"),
            status=entry.member("status", LibraryStatus),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
            checked=entry.date(),
            amd_headers=entry.texts("amd_headers"),
            amd_link_names=entry.texts("amd_link_names"),
            amd_cmake_targets=entry.texts("amd_cmake_targets"),
            amd_find_package=entry.text("amd_find_package", ""),
        ),
    )


def _normalize_header(header: str) -> str:
    return header.strip().strip('<>"').replace("\\", "/")


@functools.cache
def _libraries_by(attribute: str) -> Mapping[str, CudaLibrary]:
    result: dict[str, CudaLibrary] = {}
    for library in cuda_libraries().values():
        for key in getattr(library, attribute):
            folded = key if attribute == "headers" else key.lower()
            result.setdefault(folded, library)
    return MappingProxyType(result)


def library_for_header(header: str) -> CudaLibrary | None:
    """The library that ``#include <header>`` belongs to.

    Matches the exact path first, then a directory prefix (``cub/block/block_reduce.cuh``
    belongs to ``cub/``), then the file name alone.
    """
    wanted = _normalize_header(header)
    by_header = _libraries_by("headers")
    if wanted in by_header:
        return by_header[wanted]
    parts = wanted.split("/")
    for length in range(len(parts) - 1, 0, -1):
        found = by_header.get("/".join(parts[:length]) + "/")
        if found is not None:
            return found
    return None


def library_for_link_name(name: str) -> CudaLibrary | None:
    """The library for a linker name: ``cublas``, ``-lcublas``, ``libcublas.so``, ``cublas_static``."""
    wanted = name.strip().lower().removeprefix("-l")
    wanted = re.sub(r"\.(so(\.\d+)*|a|lib|dll)$", "", wanted).removeprefix("lib")
    return _libraries_by("link_names").get(wanted)


def library_for_cmake_target(target: str) -> CudaLibrary | None:
    """The library for a CMake target such as ``CUDA::cublas`` (case-insensitive)."""
    return _libraries_by("cmake_targets").get(target.strip().lower())
