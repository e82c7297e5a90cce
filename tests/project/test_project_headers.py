"""What the project's own headers bring into the files that include them (aliases, CUDA-only
macros), read with the kernel scanner's preprocessor and carried through the include map."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.files import HeaderFacts, ProjectFacts, resolve_include
from gpuport.project import headers as headers_module
from gpuport.project.build import build_model
from gpuport.project.headers import header_facts
from gpuport.project.survey import survey
from gpuport.project.texts import ProjectTexts
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

EXLLAMA_STYLE = """\
#ifndef _compat_cuh
#define _compat_cuh
#if defined(USE_ROCM)
#define __shfl_xor_sync(mask, var, laneMask) __shfl_xor(var, laneMask)
#define cudaStream_t hipStream_t
#endif
#define cudaNotAnAlias 1
#endif
"""

IFNDEF_ELSE = """\
#ifndef USE_ROCM
#define cudaKeptForCuda 1
#else
#define __ballot_sync(mask, p) __ballot(p)
#endif
#ifdef __CUDA_ARCH__
#define __activemask() 0
#endif
#if defined(__HIP_PLATFORM_AMD__) && HIP_VERSION_MAJOR < 6
#define cudaOldHip 1
#elif defined(__HIP_PLATFORM_AMD__)
#define warpSize 64
#endif
"""

# DeepSpeed's ds_kernel_utils.h pattern: a feature macro defined only for NVIDIA architectures.
PTX_HEADER = """\
#pragma once
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
#define PTX_AVAILABLE
#endif
"""
PTX_KERNEL = """\
{include}
__device__ int f(const int* p) {{
  int v = *p;
#ifdef PTX_AVAILABLE
  asm volatile("ld.global.cg.b32 %0, [%1];" : "=r"(v) : "l"(p));
#endif
  return v;
}}
"""


def facts_of(tmp_path: Path, files: dict[str, str]) -> ProjectFacts:
    return build_model(write(tmp_path, files)).facts


def test_a_compat_headers_aliases_reach_only_the_files_that_include_it(tmp_path: Path) -> None:
    facts = facts_of(
        tmp_path,
        {"csrc/compat.cuh": EXLLAMA_STYLE, "csrc/plain.h": "#pragma once\nint f();\n"},
    )
    assert facts.rocm_aliases == frozenset()  # nothing applies project-wide
    assert facts.headers == (
        HeaderFacts("csrc/compat.cuh", frozenset({"__shfl_xor_sync", "cudaStream_t"})),
    )
    assert facts.included("csrc/a.cu", ["compat.cuh"]).rocm_aliases == {
        "__shfl_xor_sync",
        "cudaStream_t",
    }
    assert facts.included("csrc/b.cu", ["plain.h", "cuda_runtime.h"]).rocm_aliases == set()


def test_the_preprocessor_decides_which_branch_is_rocm_only(tmp_path: Path) -> None:
    facts = facts_of(tmp_path, {"inc/compat.h": IFNDEF_ELSE})
    seen = facts.included("src/k.cu", ["compat.h"])
    # HIP_VERSION_MAJOR's value is not known: both the #if and the #elif branch may be ROCm's
    assert seen.rocm_aliases == {"__ballot_sync", "cudaOldHip", "warpSize"}
    # the CUDA-side names are defined only where ROCm never looks
    assert seen.cuda_only_macros == {"cudaKeptForCuda", "__activemask"}


def test_the_projects_own_rocm_macro_opens_a_branch(tmp_path: Path) -> None:
    write(tmp_path, {"compat.h": "#ifdef WITH_GFX_KERNELS\n#define cudaMalloc hipMalloc\n#endif\n"})
    texts, found = ProjectTexts(tmp_path), survey(tmp_path)
    assert header_facts(texts, found, frozenset()) == ()
    assert header_facts(texts, found, frozenset({"WITH_GFX_KERNELS"})) == (
        HeaderFacts("compat.h", frozenset({"cudaMalloc"})),
    )


def test_aliases_travel_through_the_projects_own_headers(tmp_path: Path) -> None:
    facts = facts_of(
        tmp_path,
        {
            "csrc/util/compat.cuh": EXLLAMA_STYLE,
            "csrc/common.h": '#pragma once\n#include "util/compat.cuh"\n',
            "csrc/ops/ops.h": '#pragma once\n#include "../common.h"\n',
            # the same file name elsewhere, mapping nothing: an include of it brings nothing
            "other/compat.cuh": "#pragma once\nint g();\n",
        },
    )
    shfl = {"__shfl_xor_sync", "cudaStream_t"}
    assert facts.included("csrc/ops/k.cu", ["ops.h"]).rocm_aliases == shfl
    assert facts.included("csrc/k.cu", ["common.h"]).rocm_aliases == shfl
    assert facts.included("other/k.cu", ["compat.cuh"]).rocm_aliases == set()
    assert facts.included("csrc/util/k.cu", ["compat.cuh"]).rocm_aliases == shfl
    assert {h.path for h in facts.headers} == {
        "csrc/util/compat.cuh",
        "csrc/common.h",
        "csrc/ops/ops.h",
        "other/compat.cuh",
    }


def test_a_macro_some_header_defines_for_rocm_too_is_not_cuda_only(tmp_path: Path) -> None:
    facts = facts_of(
        tmp_path,
        {"a.h": PTX_HEADER, "b.h": "#pragma once\n#define PTX_AVAILABLE\n", "c.h": PTX_HEADER},
    )
    assert facts.included("k.cu", ["a.h"]).cuda_only_macros == set()
    only = facts_of(tmp_path / "only", {"a.h": PTX_HEADER})
    assert only.included("k.cu", ["a.h"]).cuda_only_macros == {"PTX_AVAILABLE"}


def test_vendored_headers_are_not_read(tmp_path: Path) -> None:
    facts = facts_of(
        tmp_path,
        {
            ".gitmodules": '[submodule "third_party/x"]\n\tpath = third_party/x\n',
            "third_party/x/compat.cuh": EXLLAMA_STYLE,
        },
    )
    assert facts.headers == ()


def test_headers_past_the_byte_budget_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"a/first.h": "#pragma once\n" + "// pad\n" * 20, "b/compat.cuh": EXLLAMA_STYLE}
    assert facts_of(tmp_path / "all", files).headers != ()
    monkeypatch.setattr(headers_module, "HEADER_BUDGET", 50)
    assert facts_of(tmp_path / "some", files).headers == ()


@pytest.mark.parametrize(
    ("including", "include", "expected"),
    [
        ("csrc/a.cu", "compat.cuh", "csrc/compat.cuh"),  # beside the including file
        ("csrc/x/a.cu", "../compat.cuh", "csrc/compat.cuh"),
        ("src/a.cu", "lib/compat.cuh", "include/lib/compat.cuh"),  # through an include path
        ("csrc/x/a.cu", "compat.cuh", "csrc/compat.cuh"),  # the nearest of the same name
        ("tools/a.cu", "compat.cuh", "csrc/compat.cuh"),  # shorter path when none is near
        ("csrc/a.cu", "cuda_runtime.h", None),
        ("csrc/a.cu", "", None),
    ],
)
def test_resolve_include(including: str, include: str, expected: str | None) -> None:
    paths = ["csrc/compat.cuh", "include/lib/compat.cuh", "other/deep/compat.cuh"]
    assert resolve_include(including, include, paths) == expected


def test_a_shuffle_is_fine_only_where_the_compat_header_is_included(tmp_path: Path) -> None:
    kernel = (
        "{include}\n__device__ float s(float v) {{\n"
        "  return __shfl_xor_sync(0xffffffff, v, 1);\n}}\n"
    )
    write(
        tmp_path,
        {
            "csrc/compat.cuh": EXLLAMA_STYLE,
            "csrc/with.cu": kernel.format(include='#include "compat.cuh"'),
            "csrc/without.cu": kernel.format(include=""),
        },
    )
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP303"})))
    assert {f.location.path for f in result.findings} == {"csrc/without.cu"}


def test_a_cuda_only_macro_kills_its_branch_only_where_its_header_is_included(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "csrc/includes/ds_utils.h": PTX_HEADER,
            "csrc/with.cu": PTX_KERNEL.format(include='#include "ds_utils.h"'),
            "csrc/without.cu": PTX_KERNEL.format(include=""),
        },
    )
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP301"})))
    assert {f.location.path for f in result.findings} == {"csrc/without.cu"}


SHUFFLE_HEADER = (
    "#pragma once\n__device__ float s(float v) {\n  return __shfl_xor_sync(0xffffffff, v, 1);\n}\n"
)


def test_a_header_gets_what_every_file_including_it_has_in_effect(tmp_path: Path) -> None:
    # exllamav2's cache.cu: compat.cuh first, then a header that relies on it
    write(
        tmp_path,
        {
            "cuda/compat.cuh": EXLLAMA_STYLE,
            "cuda/cache_q.cuh": SHUFFLE_HEADER,
            "cuda/cache.cu": '#include "compat.cuh"\n#include "cache_q.cuh"\n',
            "cuda/shared.cuh": SHUFFLE_HEADER,
            "cuda/a.cu": '#include "compat.cuh"\n#include "shared.cuh"\n',
            "cuda/b.cu": '#include "shared.cuh"\n',  # no compat header: shared.cuh gets nothing
        },
    )
    facts = build_model(tmp_path).facts
    assert facts.included("cuda/cache_q.cuh", []).rocm_aliases == {
        "__shfl_xor_sync",
        "cudaStream_t",
    }
    assert facts.included("cuda/shared.cuh", []).rocm_aliases == set()
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP303"})))
    assert {f.location.path for f in result.findings} == {"cuda/shared.cuh"}


def test_context_travels_through_headers_and_stops_at_the_source_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "ops/ds_utils.h": PTX_HEADER,
        "ops/middle.h": '#pragma once\n#include "leaf.h"\n',
        "ops/leaf.h": "#pragma once\n#ifdef PTX_AVAILABLE\nint fast();\n#endif\n",
        "ops/k.cu": '#include "ds_utils.h"\n#include "middle.h"\n',
    }
    facts = facts_of(tmp_path / "all", files)
    assert facts.included("ops/leaf.h", []).cuda_only_macros == {"PTX_AVAILABLE"}
    monkeypatch.setattr(headers_module, "SOURCE_BUDGET", 0)
    unread = facts_of(tmp_path / "none", files)
    assert unread.included("ops/leaf.h", []).cuda_only_macros == set()
