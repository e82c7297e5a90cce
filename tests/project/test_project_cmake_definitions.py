"""Macros a CMake build defines only in its CUDA branch are undefined on ROCm (bitsandbytes'
``add_compile_definitions(BNB_HAS_GEMM4BIT_SM75)`` under ``if(BUILD_CUDA)``, issue 9)."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

CMAKE = """\
cmake_minimum_required(VERSION 3.22)
project(bnb LANGUAGES CXX)
if(BUILD_CUDA)
  list(APPEND SRC_FILES csrc/gemm.cu)
  add_compile_definitions(HAS_MMA)
  target_compile_definitions(bnb PRIVATE -DFAST_PATH=1)
  add_compile_definitions(BUILD_CUDA)
  add_compile_definitions(SHARED_FLAG HEADER_FLAG)
elseif(BUILD_HIP)
  enable_language(HIP)
  list(APPEND SRC_FILES csrc/gemm.cu)
  add_compile_definitions(BUILD_HIP)
endif()
add_compile_definitions(SHARED_FLAG)
add_library(bnb SHARED ${SRC_FILES})
"""
# The markers say which lines the scan reports: the MMA path is dead on ROCm, the rest is not.
GEMM = """\
#include <cstdint>
#if defined(HAS_MMA)
__device__ void store(uint32_t* p, uint32_t v) {
  asm volatile("st.global.cs.b32 [%0], %1;" :: "l"(p), "r"(v));  // ok: GP301
}
#endif
#if FAST_PATH
__device__ int lane_id() { int l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }  // ok: GP301
#endif
#if BUILD_CUDA || BUILD_HIP
__device__ int pc() { int l; asm("mov.u32 %0, %%clock;" : "=r"(l)); return l; }  // expect: GP301
#endif
#ifdef SHARED_FLAG
__device__ int sm() { int l; asm("mov.u32 %0, %%smid;" : "=r"(l)); return l; }  // expect: GP301
#endif
#ifdef HEADER_FLAG
__device__ int nt() { int l; asm("mov.u32 %0, %%nsmid;" : "=r"(l)); return l; }  // expect: GP301
#endif
"""
PROJECT = {
    "CMakeLists.txt": CMAKE,
    "csrc/gemm.cu": GEMM,
    # a macro a project header defines is not the CMake build's alone
    "csrc/flags.h": "#pragma once\n#define HEADER_FLAG 1\n",
}


def test_cuda_branch_definitions_are_undefined_on_rocm(tmp_path: Path) -> None:
    root = write(tmp_path, PROJECT)
    assert build_model(root).facts.cuda_only_macros == {"HAS_MMA", "FAST_PATH", "BUILD_CUDA"}
    result = scan_path(root, ScanOptions(jobs=1))
    gemm = [f for f in result.findings if f.location.path == "csrc/gemm.cu"]
    check_findings(GEMM, gemm, "csrc/gemm.cu")


def test_a_cmake_build_without_a_rocm_branch_says_nothing(tmp_path: Path) -> None:
    cuda_only = CMAKE.replace("elseif(BUILD_HIP)\n  enable_language(HIP)\n", "else()\n")
    cuda_only = cuda_only.replace("add_compile_definitions(BUILD_HIP)", "message(cpu)")
    root = write(tmp_path, {**PROJECT, "CMakeLists.txt": cuda_only})
    assert build_model(root).facts.cuda_only_macros == frozenset()
    # a setup.py naming the macro may define it for ROCm too
    setup = "from setuptools import setup\nsetup(name='bnb', define_macros=[('HAS_MMA', None)])\n"
    root = write(tmp_path / "b", {**PROJECT, "setup.py": setup})
    assert "HAS_MMA" not in build_model(root).facts.cuda_only_macros


# bitsandbytes' MMA headers: included by a file only the CUDA branch compiles, and by the shared
# dispatch file under a macro only the CUDA branch defines.
HEADERS = {
    "CMakeLists.txt": CMAKE.replace(
        "  add_compile_definitions(HAS_MMA)\n",
        "  list(APPEND SRC_FILES csrc/gemm_sm80.cu)\n  add_compile_definitions(HAS_MMA)\n",
    ),
    "csrc/gemm_sm80.cu": '#include "mma.cuh"\n#include "shared.cuh"\n',
    "csrc/dispatch.cu": (
        '#include "shared.cuh"\n#if defined(HAS_MMA)\n#include "mma.cuh"\n#include "tile.cuh"\n'
        "#endif\n"
    ),
    "csrc/mma.cuh": (
        "#pragma once\n"
        '#include "tile.cuh"\n'
        "__device__ void st(unsigned* p, unsigned v) {\n"
        '  asm volatile("st.global.cs.b32 [%0], %1;" :: "l"(p), "r"(v));  // ok: GP301\n'
        "}\n"
    ),
    # only the MMA header and the dead include reach it: unreached too
    "csrc/tile.cuh": (
        '#pragma once\n__device__ int lane() { int l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); '
        "return l; }  // ok: GP301\n"
    ),
    # the dispatch file includes it where ROCm compiles: reached
    "csrc/shared.cuh": (
        '#pragma once\n__device__ int sm() { int l; asm("mov.u32 %0, %%smid;" : "=r"(l)); '
        "return l; }  // expect: GP301\n"
    ),
}


def test_headers_only_nvidia_only_code_includes_fold_into_gp601(tmp_path: Path) -> None:
    root = write(tmp_path, HEADERS)
    result = scan_path(root, ScanOptions(jobs=1))
    for rel in ("csrc/mma.cuh", "csrc/tile.cuh", "csrc/shared.cuh"):
        mine = [f for f in result.findings if f.location.path == rel]
        check_findings(HEADERS[rel], mine, rel)
    folded = sorted(
        (f.location.path, f.location.line, f.message.split(" is NVIDIA-only", 1)[0])
        for f in result.findings
        if f.rule_id == "GP601" and f.message.startswith("csrc/") and ".cuh is " in f.message
    )
    assert folded == [
        ("csrc/dispatch.cu", 3, "csrc/mma.cuh"),
        ("csrc/dispatch.cu", 4, "csrc/tile.cuh"),
    ]
    set_aside = {(f.location.path, f.rule_id) for f in result.set_aside}
    assert {("csrc/mma.cuh", "GP301"), ("csrc/tile.cuh", "GP301")} <= set_aside
