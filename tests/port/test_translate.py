"""The CUDA → HIP translator, case by case: what it changes, what it leaves, what it reports."""

from __future__ import annotations

import csv
import datetime
import importlib.util
import io
import re
import tomllib
from pathlib import Path

import pytest

from gpuport.port.apimap import load_api_map, parse_version, version_text
from gpuport.port.model import Change, ChangeStatus, FileResult
from gpuport.port.translate import translate_source

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "src" / "gpuport" / "kb"
SHARED_TABLE = ROOT.parent / "shared" / "data" / "cuda_hip_api_map.tsv"

CONVERTED = ChangeStatus.CONVERTED
NEEDS_REVIEW = ChangeStatus.NEEDS_REVIEW
UNCONVERTED = ChangeStatus.UNCONVERTED


def port(
    text: str,
    version: str = "6.4",
    rel: str = "k.cu",
    *,
    fix: bool = False,
    strings: bool = False,
    diagnostics: bool = False,
) -> FileResult:
    return translate_source(
        rel,
        text,
        version,
        fix_warp_masks=fix,
        translate_strings=strings,
        diagnostics=diagnostics,
    )


def out(result: FileResult) -> str:
    return result.translated if result.translated is not None else result.original


def find(result: FileResult, before: str) -> Change:
    hits = [c for c in result.changes if c.before == before]
    assert len(hits) == 1, (before, result.changes)
    return hits[0]


# --------------------------------------------------------------------------- renames


def test_runtime_names_become_hip_with_locations() -> None:
    src = "#include <cuda_runtime.h>\nvoid f(float** p) {\n  cudaMalloc(p, 4);  cudaDeviceSynchronize();\n}\n"
    r = port(src)
    assert out(r) == (
        "#include <hip/hip_runtime.h>\nvoid f(float** p) {\n  hipMalloc(p, 4);  hipDeviceSynchronize();\n}\n"
    )
    malloc = find(r, "cudaMalloc")
    assert (malloc.line, malloc.column, malloc.family, malloc.after, malloc.status) == (
        3,
        3,
        "runtime",
        "hipMalloc",
        CONVERTED,
    )
    sync = find(r, "cudaDeviceSynchronize")
    assert (sync.line, sync.column) == (3, 22)


def test_library_names_take_their_family() -> None:
    r = port("cublasHandle_t h; cublasCreate(&h); curandState s; cufftHandle plan;\n")
    assert out(r) == "hipblasHandle_t h; hipblasCreate(&h); hiprandState s; hipfftHandle plan;\n"
    assert {c.family for c in r.changes} == {"cublas", "curand", "cufft"}


def test_parts_of_names_are_never_touched() -> None:
    src = (
        "int mycudaMalloc = 0; int cudaMalloc_count = 1; int x_cudaFree;\n"
        "void cudaMallocWrapper();\n"
    )
    r = port(src, rel="a.cpp")
    assert r.translated is None
    assert r.changes == []


def test_strings_and_comments_are_left_alone() -> None:
    src = (
        '// cudaMalloc here is prose\nconst char* s = "cudaMalloc failed";\n'
        "/* cudaFree\n   cudaMemcpy */ char c = 'c';\n"
        'auto raw = R"(cudaMalloc " inside)";\nvoid g() { cudaFree(0); }\n'
    )
    r = port(src, rel="a.cpp")
    assert out(r) == src.replace("cudaFree(0)", "hipFree(0)")


def test_translate_strings_renames_inside_literals_and_comments() -> None:
    src = '// uses cudaMalloc\nconst char* s = "cudaMalloc failed";\n'
    r = port(src, rel="a.cpp", strings=True)
    assert out(r) == '// uses hipMalloc\nconst char* s = "hipMalloc failed";\n'
    assert all("--translate-strings" in c.note for c in r.changes)


def test_members_and_foreign_namespaces_are_not_cuda_names() -> None:
    src = "a.cudaMalloc(p); b->cudaFree(p); mylib::cudaMalloc(p); ::cudaFree(p);\n"
    r = port(src, rel="a.cpp")
    assert out(r) == "a.cudaMalloc(p); b->cudaFree(p); mylib::cudaMalloc(p); ::hipFree(p);\n"


def test_kernel_launches_stay_as_they_are() -> None:
    src = "void f(hipStream_t st) { k<<<grid, block, 0, st>>>(x, y); }\n"
    r = port("#include <hip/hip_runtime.h>\n" + src)
    assert r.translated is None


def test_digit_separators_do_not_hide_code() -> None:
    src = "int n = 1'000'000; cudaMalloc(&p, 'a');\n"
    r = port(src, rel="a.cpp")
    assert out(r) == "int n = 1'000'000; hipMalloc(&p, 'a');\n"


# ----------------------------------------------------------------------- versions


def test_names_missing_from_the_target_rocm_are_reported_not_used() -> None:
    src = "cudaMallocAsync(&p, n, s);\n"
    old = port(src, "5.0", rel="a.cpp")
    assert old.translated is None
    change = find(old, "cudaMallocAsync")
    assert change.status is UNCONVERTED
    assert "not in ROCm 5.0" in change.note and "added in 5.2" in change.note
    new = port(src, "5.2", rel="a.cpp")
    assert out(new) == "hipMallocAsync(&p, n, s);\n"


def test_same_name_functions_are_gated_too() -> None:
    r = port("__half m = __hmax(a, b);\n", "5.2", rel="a.cu")
    change = find(r, "__hmax")
    assert change.status is UNCONVERTED and "added in 5.5" in change.note
    assert not [
        c for c in port("__half m = __hmax(a, b);\n", "6.0").changes if c.before == "__hmax"
    ]


def test_names_without_counterpart_are_unconverted_with_advice() -> None:
    r = port("cudnnHandle_t h; cudnnCreate(&h);\n", rel="a.cpp")
    create = find(r, "cudnnCreate")
    assert create.status is UNCONVERTED
    assert "MIOpen: miopenCreate" in create.note


def test_bad_version_is_refused() -> None:
    with pytest.raises(ValueError, match="not a ROCm version"):
        translate_source("a.cu", "", "six")


# ------------------------------------------------------------------------ headers


@pytest.mark.parametrize(
    ("header", "version", "expected"),
    [
        ("<cuda_runtime.h>", "6.4", "<hip/hip_runtime.h>"),
        ('"cuda_runtime.h"', "6.4", '"hip/hip_runtime.h"'),
        ("<cuda.h>", "6.4", "<hip/hip_runtime.h>"),
        ("<cublas_v2.h>", "6.4", "<hipblas/hipblas.h>"),
        ("<cublas_v2.h>", "5.1", "<hipblas.h>"),
        ("<curand_kernel.h>", "6.4", "<hiprand/hiprand_kernel.h>"),
        ("<cufft.h>", "6.4", "<hipfft/hipfft.h>"),
        ("<cusparse.h>", "6.4", "<hipsparse/hipsparse.h>"),
        ("<cusolverDn.h>", "6.4", "<hipsolver/hipsolver.h>"),
        ("<cub/cub.cuh>", "6.4", "<hipcub/hipcub.hpp>"),
        ("<cuComplex.h>", "6.4", "<hip/hip_complex.h>"),
        ("<cuda_fp16.h>", "6.4", "<hip/hip_fp16.h>"),
        ("<cuda_bf16.h>", "6.0", "<hip/hip_bf16.h>"),
        ("<cuda_fp8.h>", "6.2", "<hip/hip_fp8.h>"),
        ("<nccl.h>", "6.4", "<rccl/rccl.h>"),
        ("<nccl.h>", "5.0", "<rccl.h>"),
        ("<cooperative_groups.h>", "6.4", "<hip/hip_cooperative_groups.h>"),
        ("<nvrtc.h>", "6.4", "<hip/hiprtc.h>"),
        ("<nvtx3/nvToolsExt.h>", "6.4", "<roctracer/roctx.h>"),
    ],
)
def test_headers_map_to_their_real_paths(header: str, version: str, expected: str) -> None:
    r = port(f"#include {header}\n", version, rel="a.cpp")
    assert out(r).endswith(f"#include {expected}\n")
    assert out(r).count("\n") == (2 if "cooperative" in header else 1)
    assert all(c.family == "header" and c.status is CONVERTED for c in r.changes)


@pytest.mark.parametrize(
    ("header", "version", "why"),
    [
        ("cuda_bf16.h", "5.7", "not available before ROCm 6.0"),
        ("cuda_fp8.h", "6.1", "not available before ROCm 6.2"),
        ("cooperative_groups/reduce.h", "6.4", "no cg::reduce"),
        ("cudnn.h", "6.4", "MIOpen"),
        ("mma.h", "6.4", "rocWMMA"),
        ("cuda/std/atomic", "6.4", "libcu++"),
    ],
)
def test_headers_without_counterpart_are_reported(header: str, version: str, why: str) -> None:
    r = port(f"#include <{header}>\n", version, rel="a.cpp")
    assert r.translated is None
    assert r.changes[0].status is UNCONVERTED and why in r.changes[0].note


def test_thrust_stays_and_device_launch_parameters_goes() -> None:
    src = "#include <thrust/device_vector.h>\n#include <device_launch_parameters.h>\nint x;\n"
    r = port(src, rel="a.cpp")
    assert out(r) == "#include <thrust/device_vector.h>\nint x;\n"


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        # a block comment opened after the directive stays open: the code in it stays dead
        (
            "#include <device_launch_parameters.h> /* start of comment\nint dead;\n*/\n",
            "/* start of comment\nint dead;\n*/\n",
        ),
        # a trailing comment, CRLF and undecodable bytes stay
        (
            "  #include <device_launch_parameters.h>  // note \udcff\r\nint x;\r\n",
            "  // note \udcff\r\nint x;\r\n",
        ),
        # after the end of a block comment: the comment's end stays
        (
            "/* a\n b */ #include <device_launch_parameters.h>\nint x;\n",
            "/* a\n b */ \nint x;\n",
        ),
        ("#include <device_launch_parameters.h>", ""),
        ("\t#include <device_launch_parameters.h> \r\nint x;", "int x;"),
    ],
)
def test_dropped_include_takes_only_the_directive(src: str, expected: str) -> None:
    r = port(src, rel="a.cpp")
    assert r.translated == expected
    assert [c.before for c in r.changes] == ["#include <device_launch_parameters.h>"]


def test_runtime_include_goes_after_a_comment_ending_on_the_line() -> None:
    src = "/* a\n b */ #include <cooperative_groups.h>\n"
    r = port(src, "6.4", rel="a.cpp")
    assert (
        out(r)
        == "/* a\n b */ #include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n"
    )


def test_unknown_toolkit_header_is_reported_but_project_headers_are_not() -> None:
    r = port(
        '#include <cusparseLt.h>\n#include "cuda_helpers.h"\n#include <my/lib.h>\n', rel="a.cpp"
    )
    assert [c.before for c in r.changes] == ["cusparseLt.h"]
    assert r.changes[0].status is UNCONVERTED


def test_has_include_takes_the_header_mapping() -> None:
    r = port("#if __has_include(<cuda_fp16.h>)\n#endif\n", rel="a.cpp")
    assert out(r) == "#if __has_include(<hip/hip_fp16.h>)\n#endif\n"


def test_cub_namespace_becomes_hipcub() -> None:
    src = "#include <cub/cub.cuh>\nusing namespace cub;\ncub::DeviceReduce::Sum(a, b, c, d, n);\nint cub = 0;\n"
    r = port(src, rel="a.cpp")
    assert out(r) == (
        "#include <hipcub/hipcub.hpp>\nusing namespace hipcub;\n"
        "hipcub::DeviceReduce::Sum(a, b, c, d, n);\nint cub = 0;\n"
    )


def test_a_projects_own_cub_alias_is_left_as_it_is() -> None:
    # causal-conv1d's ROCm branch: renaming its left side gave `namespace hipcub = hipcub;`
    src = (
        "#ifdef USE_ROCM\nnamespace cub = hipcub;\n#endif\nvoid f() { cub::WarpReduce<float> w; }\n"
    )
    assert out(port(src, rel="a.cpp")) == src.replace("{ cub::", "{ hipcub::")


# ------------------------------------------------------------------ implicit include

KERNEL = "__global__ void k(float* p) { p[threadIdx.x] = 0; }\n"


def test_runtime_include_goes_after_leading_comments() -> None:
    src = "// Copyright\n/* licence\n   text */\n\n#include <cstdio>\n" + KERNEL
    r = port(src)
    assert out(r) == (
        "// Copyright\n/* licence\n   text */\n\n#include <hip/hip_runtime.h>\n#include <cstdio>\n"
        + KERNEL
    )
    added = find(r, "")
    assert (added.line, added.column, added.status) == (5, 0, CONVERTED)


def test_runtime_include_goes_after_pragma_once() -> None:
    src = "// header\n#pragma once\n#include <cstdio>\n" + KERNEL
    assert out(port(src, rel="k.cuh")) == (
        "// header\n#pragma once\n#include <hip/hip_runtime.h>\n#include <cstdio>\n" + KERNEL
    )


def test_runtime_include_goes_inside_an_include_guard() -> None:
    src = "#ifndef K_CUH\n#define K_CUH\n" + KERNEL + "#endif\n"
    assert out(port(src, rel="k.cuh")) == (
        "#ifndef K_CUH\n#define K_CUH\n#include <hip/hip_runtime.h>\n" + KERNEL + "#endif\n"
    )


def test_runtime_include_keeps_crlf() -> None:
    src = "// c\r\n" + KERNEL.replace("\n", "\r\n")
    assert out(port(src)) == "// c\r\n#include <hip/hip_runtime.h>\r\n" + KERNEL.replace(
        "\n", "\r\n"
    )


def test_no_runtime_include_when_present_or_not_needed() -> None:
    assert port("#include <cuda_runtime.h>\n" + KERNEL).changes[0].before == "<cuda_runtime.h>"
    assert port("int add(int a, int b) { return a + b; }\n").translated is None
    # a C++ file had to include the runtime itself: nothing is added there
    assert (
        port("void f() { cudaFree(0); }\n", rel="a.cpp").translated == "void f() { hipFree(0); }\n"
    )
    # host-only runtime calls in a .cu file need the header too
    assert out(port("void f() { cudaFree(0); }\n")).startswith("#include <hip/hip_runtime.h>\n")


# ------------------------------------------------------------------------------ warps

WARP = (
    "__device__ float sum(float v, unsigned m) {\n"
    "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
    "  v += __shfl_down_sync(0xFFFFFFFFu, v, 2, 16);\n"
    "  unsigned long long b = __ballot_sync(0xffffffff, v > 0);\n"
    "  if (__any_sync(0xffffffff, v > 1) && __all_sync(~0u, v < 9)) v = __shfl_sync(m, v, 0);\n"
    "  auto a = __activemask();\n"
    "  __syncwarp();\n"
    "  return v;\n"
    "}\n"
)


def test_before_rocm_6_4_warp_functions_lose_their_mask() -> None:
    r = port("#include <hip/hip_runtime.h>\n" + WARP, "6.1")
    assert out(r) == "#include <hip/hip_runtime.h>\n" + (
        "__device__ float sum(float v, unsigned m) {\n"
        "  v += __shfl_xor(v, 1);\n"
        "  v += __shfl_down(v, 2, 16);\n"
        "  unsigned long long b = __ballot(v > 0);\n"
        "  if (__any(v > 1) && __all(v < 9)) v = __shfl(v, 0);\n"
        "  auto a = __ballot(1);\n"
        "  __builtin_amdgcn_wave_barrier();\n"
        "  return v;\n"
        "}\n"
    )
    statuses = {c.before.split("(")[0]: c.status for c in r.changes if c.family == "warp"}
    assert statuses["__shfl_xor_sync"] is CONVERTED
    assert statuses["__shfl_sync"] is NEEDS_REVIEW  # `m` may be a partial mask
    assert statuses["__syncwarp"] is NEEDS_REVIEW
    ballot = next(c for c in r.changes if c.before.startswith("__ballot_sync"))
    assert "64-bit" in ballot.note


def test_from_rocm_6_4_sync_functions_stay_and_32_bit_masks_are_widened() -> None:
    # HIP's _sync functions static_assert a 64-bit mask: a 32-bit full mask would not compile,
    # so it is widened without --fix-warp-masks (kb/rocm_versions.toml "warp-masks")
    r = port("#include <hip/hip_runtime.h>\n" + WARP, "6.4")
    text = out(r)
    assert "__shfl_xor_sync(0xffffffffffffffffULL, v, 1)" in text and "__activemask()" in text
    assert "__all_sync(0xffffffffffffffffULL, v < 9)" in text
    masks = [c for c in r.changes if c.family == "warp" and c.before.startswith(("0", "~"))]
    assert [c.before for c in masks] == [
        "0xffffffff",
        "0xFFFFFFFFu",
        "0xffffffff",
        "0xffffffff",
        "~0u",
    ]
    assert all(c.status is CONVERTED and c.after == "0xffffffffffffffffULL" for c in masks)
    assert masks[0].line == 3 and masks[0].column == 24
    assert "static_assert a 64-bit mask" in masks[0].note
    unknown = find(r, "__shfl_sync")
    assert unknown.status is NEEDS_REVIEW and "64-bit" in unknown.note


def test_a_64_bit_mask_holding_32_lanes_is_reported_unless_fix_warp_masks() -> None:
    src = "#include <hip/hip_runtime.h>\nx = __shfl_sync(0xffffffffULL, v, 0);\n"
    plain = port(src, "7.2")
    assert out(plain) == src
    half = find(plain, "0xffffffffULL")
    assert half.status is NEEDS_REVIEW and "--fix-warp-masks" in half.note
    fixed = port(src, "7.2", fix=True)
    assert out(fixed) == src.replace("0xffffffffULL", "0xffffffffffffffffULL")


def test_fix_warp_masks_widens_full_masks() -> None:
    r = port("#include <hip/hip_runtime.h>\n" + WARP, "6.4", fix=True)
    text = out(r)
    assert "__shfl_xor_sync(0xffffffffffffffffULL, v, 1)" in text
    assert "__shfl_down_sync(0xffffffffffffffffULL, v, 2, 16)" in text
    assert "__all_sync(0xffffffffffffffffULL, v < 9)" in text
    assert "__shfl_sync(m, v, 0)" in text  # an unknown mask is never guessed at
    assert not [c for c in r.changes if c.status is UNCONVERTED]


def test_a_32_bit_mask_macro_is_widened_once() -> None:
    src = (
        "#include <hip/hip_runtime.h>\n#define FULL_MASK 0xffffffff\n"
        "__device__ float f(float v) {\n"
        "  v += __shfl_xor_sync(FULL_MASK, v, 1);\n  return __shfl_sync(FULL_MASK, v, 0);\n}\n"
    )
    for fix in (False, True):
        fixed = port(src, "6.4", fix=fix)
        assert out(fixed) == src.replace("FULL_MASK 0xffffffff", "FULL_MASK 0xffffffffffffffffULL")
        widened = find(fixed, "0xffffffff")
        assert (widened.line, widened.status) == (2, NEEDS_REVIEW)
        assert len(fixed.changes) == 1
    half = src.replace("0xffffffff", "0xffffffffULL")
    plain = port(half, "6.4")
    assert [c.status for c in plain.changes] == [NEEDS_REVIEW, NEEDS_REVIEW]
    assert "FULL_MASK is defined on line 2" in plain.changes[0].note
    assert out(port(half, "6.4", fix=True)) == src.replace(
        "FULL_MASK 0xffffffff", "FULL_MASK 0xffffffffffffffffULL"
    )


def test_64_bit_masks_are_fine_and_half_masks_are_flagged() -> None:
    ok = port("#include <hip/hip_runtime.h>\nx = __shfl_sync(0xffffffffffffffffULL, v, 0);\n")
    assert ok.changes == []
    half = port("#include <hip/hip_runtime.h>\nx = __shfl_sync(0xffffffffull, v, 0);\n")
    assert half.changes[0].status is NEEDS_REVIEW
    assert "32 of a wave64's lanes" in half.changes[0].note


def test_match_functions_depend_on_the_version() -> None:
    src = "#include <hip/hip_runtime.h>\nx = __match_any_sync(0xffffffff, v);\n"
    assert "before ROCm 6.2" in port(src, "6.0").changes[0].note
    assert "HIP_ENABLE_WARP_SYNC_BUILTINS" in port(src, "6.2").changes[0].note
    assert port(src, "6.4").changes[0].before == "0xffffffff"


def test_syncwarp_is_kept_from_rocm_7() -> None:
    src = "#include <hip/hip_runtime.h>\n__device__ void f() { __syncwarp(); }\n"
    assert port(src, "7.0").translated is None


# --------------------------------------------------------------- macros and arches


def test_cuda_arch_guards_become_device_compile_guards() -> None:
    src = (
        "#ifdef __CUDA_ARCH__\n#endif\n#ifndef __CUDA_ARCH__\n#endif\n"
        "#if defined(__CUDA_ARCH__)\n#endif\n#if __CUDA_ARCH__\n#endif\n"
        "#if defined __CUDA_ARCH__ && !defined(__CUDACC_RTC__)\n#endif\n"
    )
    r = port(src, rel="a.cpp")
    assert out(r) == src.replace("__CUDA_ARCH__", "__HIP_DEVICE_COMPILE__").replace(
        "__CUDACC_RTC__", "__HIPCC_RTC__"
    )


def test_cuda_arch_comparisons_are_reported_and_keep_their_condition_whole() -> None:
    # rewriting defined() alone would make the condition true in HIP's device pass
    src = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n#endif\nint a = __CUDA_ARCH__;\n"
    r = port(src, rel="a.cpp")
    assert out(r) == src
    unconverted = [c for c in r.changes if c.status is UNCONVERTED]
    assert [(c.line, c.column) for c in unconverted] == [(1, 31), (3, 9)]
    assert "gfx" in unconverted[0].note
    kept = find_at(r, 1, 13)
    assert kept.status is NEEDS_REVIEW and "this condition also compares" in kept.note


def test_cuda_arch_guard_stays_when_the_code_it_guards_uses_the_value() -> None:
    src = (
        "__host__ __device__ int arch() {\n#ifdef __CUDA_ARCH__\n  return __CUDA_ARCH__;\n"
        "#else\n  return 0;\n#endif\n}\n"
        "#if defined(__CUDA_ARCH__)\n#if __CUDA_ARCH__ >= 800\n#define N 8\n#endif\n#endif\n"
        "#ifndef __CUDA_ARCH__\n#define HOST 1\n#elif 1\n#define ARCH __CUDA_ARCH__\n#endif\n"
        "#if __CUDA_ARCH__ >= 700\n#elif defined(__CUDA_ARCH__)\n#define GENERIC 1\n#endif\n"
        "#ifdef __CUDA_ARCH__\n#define DEVICE 1\n#endif\n"
    )
    r = port(src, rel="a.h")
    # a header with __device__ code and no runtime include relied on nvcc's implicit one
    head, *lines = out(r).splitlines()
    assert head == "#include <hip/hip_runtime.h>"
    assert lines[1] == "#ifdef __CUDA_ARCH__"  # `return __CUDA_ARCH__` below
    assert lines[7] == "#if defined(__CUDA_ARCH__)"  # the nested comparison
    assert lines[12] == "#ifndef __CUDA_ARCH__"  # the #define in its #elif branch
    # an #elif governs only its own branches: nothing below it reads the value
    assert lines[18] == "#elif defined(__HIP_DEVICE_COMPILE__)"
    assert lines[21] == "#ifdef __HIP_DEVICE_COMPILE__"
    kept = find_at(r, 2, 8)
    assert kept.status is NEEDS_REVIEW and "(line 3)" in kept.note
    assert find_at(r, 3, 10).status is UNCONVERTED


def find_at(result: FileResult, line: int, column: int) -> Change:
    hits = [c for c in result.changes if (c.line, c.column) == (line, column)]
    assert len(hits) == 1, (line, column, result.changes)
    return hits[0]


def test_compiler_macros() -> None:
    r = port("#ifdef __CUDACC__\n#endif\n#if CUDART_VERSION >= 11000\n#endif\n", rel="a.h")
    assert out(r).startswith("#ifdef __HIPCC__\n")
    version = find(r, "CUDART_VERSION")
    assert version.status is UNCONVERTED and "HIP_VERSION" in version.note


def test_bfloat16_and_fp8_types() -> None:
    src = "__nv_bfloat16 a; nv_bfloat162 b; __nv_fp8_e4m3 c; float f = __bfloat162float(a);\n"
    r = port(src, "6.4", rel="a.cu")
    assert out(r).endswith(
        "__hip_bfloat16 a; __hip_bfloat162 b; __hip_fp8_e4m3 c; float f = __bfloat162float(a);\n"
    )
    old = port(src, "5.7", rel="a.cpp")
    assert {c.before for c in old.changes if c.status is UNCONVERTED} == {
        "__nv_bfloat16",
        "nv_bfloat162",
        "__nv_fp8_e4m3",
        "__bfloat162float",
    }


# ----------------------------------------------------------------------- clashes


def test_operators_on_hip_vector_types_are_flagged() -> None:
    src = (
        "inline __host__ __device__ float4 operator+(const float4& a, const float4& b) {\n"
        "  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);\n}\n"
        "__device__ float3 operator*(float3 a, float s) { return a; }\n"
        "std::ostream& operator<<(std::ostream& os, const float4& v) { return os; }\n"
        "bool operator==(const Mine& a, const Mine& b);\n"
    )
    r = port(src, rel="helper_math.h")
    flagged = [(c.line, c.before) for c in r.changes if c.family == "clash"]
    assert flagged == [(1, "operator+"), (4, "operator*")]
    # (the first change is the runtime include the header relied on nvcc for)
    first = next(c for c in r.changes if c.family == "clash")
    assert first.status is NEEDS_REVIEW and "hip_vector_types.h" in first.note
    assert first.column == 35


def test_definitions_of_hip_builtins_are_flagged_but_calls_are_not() -> None:
    src = (
        "__device__ float atomicMax(float* address, float val) {\n  return val;\n}\n"
        "__device__ __forceinline__ double\natomicAdd(double* p, double v) { return v; }\n"
        "#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)\n"
        "__device__ void use(float* p) {\n"
        "  atomicMax(p, 1.0f);\n  float x = 2 * atomicAdd(p, 1.0f);\n  float4 v = make_float4(0, 0, 0, 0);\n"
        "  return atomicMin(p, 0);\n}\n"
    )
    r = port(src, rel="a.cu")
    flagged = [(c.line, c.before) for c in r.changes if c.family == "clash"]
    assert flagged == [(1, "atomicMax"), (5, "atomicAdd"), (6, "__shfl_xor_sync")]


def test_a_directive_on_the_line_before_does_not_make_a_call_a_definition() -> None:
    # `once` reads like a return type; a directive's words end with its line, so the
    # translation is the same on a second pass (found by the idempotence property test)
    after_pragma = port(
        "#pragma once\n__shfl_xor_sync(0xffffffff, v, 1);\n", rel="a.cu", version="5.2"
    )
    assert [c.family for c in after_pragma.changes if c.family == "clash"] == []
    assert "__shfl_xor(v, 1)" in out(after_pragma)
    for breaks in ("\r\n", "\r"):  # CRLF and lone CR files too
        crlf = port(
            f"#pragma once{breaks}__shfl_xor_sync(0xffffffff, v, 1);{breaks}",
            rel="a.cu",
            version="5.2",
        )
        assert "__shfl_xor(v, 1)" in out(crlf)
    soup = (
        "cudaMalloc\rcudaMalloc\n__shfl_xor_sync(0xffffffff, v, 1) "  # found by the property test
    )
    once = out(port(soup, rel="a.cu", version="5.2"))
    assert port(once, rel="a.cu", version="5.2").translated is None  # nothing left to change
    after_type = port("int\n__shfl_xor_sync(int m, int v, int d) { return v; }\n", rel="a.cu")
    assert [c.before for c in after_type.changes if c.family == "clash"] == ["__shfl_xor_sync"]


# --------------------------------------------------------------- bytes and lines


def test_bytes_that_are_not_utf8_come_back_unchanged() -> None:
    raw = b"// caf\xe9 \xff\xfe\nvoid f() { cudaFree(0); } // \xe9t\xe9\n"
    text = raw.decode("utf-8", "surrogateescape")
    r = port(text, rel="a.cpp")
    assert r.translated is not None
    assert r.translated.encode("utf-8", "surrogateescape") == raw.replace(b"cudaFree", b"hipFree")


def test_crlf_and_lone_cr_line_endings_survive() -> None:
    crlf = "#include <cuda_runtime.h>\r\nint main() {\r\n  cudaFree(0);\r\n}\r\n"
    r = port(crlf, rel="a.cpp")
    assert out(r) == crlf.replace("cuda_runtime.h", "hip/hip_runtime.h").replace(
        "cudaFree", "hipFree"
    )
    assert find(r, "cudaFree").line == 3
    cr = "int a;\rvoid f() {\r  cudaFree(0);\r}\r"
    r2 = port(cr, rel="a.cpp")
    assert out(r2) == cr.replace("cudaFree", "hipFree")
    assert (find(r2, "cudaFree").line, find(r2, "cudaFree").column) == (3, 3)


SAMPLE = (
    "// sample\n#include <cuda_runtime.h>\n#include <cublas_v2.h>\n#include <cuda_bf16.h>\n"
    "#define FULL 0xffffffff\n#ifdef __CUDA_ARCH__\n#endif\n"
    + WARP
    + "__device__ float4 operator-(float4 a, float4 b) { return a; }\n"
    "void host(cudaStream_t s) {\n  cublasHandle_t h; cublasCreate(&h);\n"
    "  cudaMallocAsync(&p, 4, s); k<<<1, 2, 0, s>>>(p);\n  x = __shfl_sync(FULL, v, 0);\n}\n"
)


@pytest.mark.parametrize("version", ["5.2", "6.1", "6.2", "6.4", "7.0"])
@pytest.mark.parametrize("fix", [False, True])
def test_translating_a_translation_changes_nothing(version: str, fix: bool) -> None:
    first = port(SAMPLE, version, fix=fix, strings=True)
    assert first.translated is not None
    second = port(first.translated, version, fix=fix, strings=True)
    assert second.translated is None, second.changes


# ------------------------------------------------------------------ diagnostics


@pytest.mark.skipif(
    importlib.util.find_spec("gpuport.scan.kernels") is None, reason="kernel scanner not installed"
)
def test_scanner_findings_become_changes_with_rule_ids() -> None:
    src = (
        "#include <cuda_runtime.h>\n#define WARP_SIZE 32\n"
        "__global__ void k(int* o) { int lane = threadIdx.x & 31; o[lane] = warp_sum(WARP_SIZE); }\n"
    )
    r = port(src, diagnostics=True)
    reviewed = [c for c in r.changes if c.rule_id]
    assert reviewed, r.changes
    assert all(c.rule_id.startswith("GP3") and c.status is not CONVERTED for c in reviewed)
    assert {c.line for c in reviewed} >= {2, 3}
    # the mechanical findings (the renames themselves) are not repeated
    assert not [c for c in reviewed if c.before == "cudaMalloc"]


# ------------------------------------------------------------------- the data


def test_generated_table_names_its_source_commit_and_date() -> None:
    text = (KB / "cuda_hip_api.tsv").read_text(encoding="utf-8")
    head = [line for line in text.splitlines()[:8] if line.startswith("#")]
    assert any("HIPIFY" in line and "MIT" in line for line in head)
    assert any(line.startswith("# source commit: 014177bc") for line in head)
    generated = next(line for line in head if line.startswith("# generated:"))
    datetime.date.fromisoformat(generated.split(":", 1)[1].strip())
    api = load_api_map()
    assert len(api.entries) > 8000
    assert api.entries["cudaMalloc"].hip == "hipMalloc"
    assert api.entries["cudaMallocAsync"].hip_added == (5, 2, 0)


def test_every_row_of_the_table_is_well_formed() -> None:
    text = (KB / "cuda_hip_api.tsv").read_text(encoding="utf-8")
    rows = list(
        csv.DictReader(
            io.StringIO("\n".join(x for x in text.splitlines() if not x.startswith("#"))),
            delimiter="\t",
        )
    )
    families = {"runtime", "driver", "device", "rtc", "cublas", "curand", "cufft", "cusparse"}
    families |= {"cusolver", "cub", "complex", "cudnn"}
    names = set()
    for row in rows:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", row["cuda"]), row
        assert row["cuda"] not in names
        names.add(row["cuda"])
        assert row["family"] in families, row
        for column in ("hip_added", "hip_deprecated", "hip_removed"):
            if row[column]:
                parse_version(row[column])
        if row["hip_added"]:
            assert row["hip"], row


def test_every_extra_entry_has_sources_and_a_date() -> None:
    data = tomllib.loads((KB / "cuda_hip_extra.toml").read_text(encoding="utf-8"))
    entries = [*data["header"], *data["header_prefix"], *data["name"], *data["unsupported"]]
    entries += [*data["same_name"], *data["dropped_suffix"], data["warp"]]
    for entry in entries:
        assert entry["sources"] and all(s.startswith(("http", "Debian")) for s in entry["sources"])
        assert isinstance(entry["checked"], datetime.date)
    api = load_api_map()
    assert api.header("cublas_v2.h") is not None and api.header("cub/block/x.cuh") is not None
    assert version_text(api.warp.sync_default_since) == "6.4"


@pytest.mark.skipif(not SHARED_TABLE.is_file(), reason="shared reference data not present")
def test_generator_reproduces_the_shipped_table(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "build_api_map", ROOT / "tools" / "build_api_map.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = tmp_path / "map.tsv"
    assert (
        module.main(["--source", str(SHARED_TABLE), "--out", str(target), "--date", "2000-01-01"])
        == 0
    )
    shipped = (KB / "cuda_hip_api.tsv").read_text(encoding="utf-8").splitlines()
    rebuilt = target.read_text(encoding="utf-8").splitlines()
    strip = [line for line in shipped if not line.startswith("# generated:")]
    assert strip == [line for line in rebuilt if not line.startswith("# generated:")]


# ----------------------------------------------------------- calls that change shape


def test_callback_macro_goes() -> None:
    r = port("static void CUDART_CB done(void* user) {}\n", rel="a.cpp")
    assert out(r) == "static void done(void* user) {}\n"


def test_pointer_arguments_get_the_casts_hip_needs() -> None:
    src = (
        "float* h;\ncudaHostAlloc(&h, n, cudaHostAllocDefault);\n"
        "cudaFuncSetAttribute(window, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);\n"
        "cudaHostAlloc((void**)&h, n, 0);\n"
    )
    assert out(port(src, rel="a.cpp")) == (
        "float* h;\nhipHostAlloc(reinterpret_cast<void**>(&h), n, hipHostMallocDefault);\n"
        "hipFuncSetAttribute(reinterpret_cast<const void*>(window), "
        "hipFuncAttributeMaxDynamicSharedMemorySize, smem);\n"
        "hipHostAlloc((void**)&h, n, 0);\n"
    )


def test_cooperative_groups_get_the_runtime_before_them() -> None:
    src = "#include <cstdio>\n#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n"
    r = port(src, rel="a.cu")
    # the runtime goes before the cooperative groups, and the later include of it goes
    assert out(r) == (
        "#include <cstdio>\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n"
    )
    assert find(r, "#include <cuda_runtime.h>").note == (
        "removed: hip/hip_runtime.h is included above already"
    )
    assert port(out(r), rel="a.cu").translated is None


def test_func_get_attributes_gets_the_cast_hip_needs() -> None:
    src = "cudaFuncAttributes a;\ncudaFuncGetAttributes(&a, scale<float>);\ncudaFuncGetAttributes(&a, (const void*)k);\n"
    r = port(src, rel="a.cpp")
    assert out(r) == (
        "hipFuncAttributes a;\nhipFuncGetAttributes(&a, reinterpret_cast<const void*>(scale<float>));\n"
        "hipFuncGetAttributes(&a, (const void*)k);\n"
    )


def test_three_argument_graph_instantiate_becomes_with_flags() -> None:
    src = "cudaGraphInstantiate(&e, g, 0);\ncudaGraphInstantiate(&e, g, nullptr, nullptr, 0);\n"
    assert out(port(src, rel="a.cpp")) == (
        "hipGraphInstantiateWithFlags(&e, g, 0);\nhipGraphInstantiate(&e, g, nullptr, nullptr, 0);\n"
    )
    old = port(src, "4.5", rel="a.cpp")
    assert [c.status for c in old.changes] == [UNCONVERTED, CONVERTED]  # WithFlags came in 5.0
    assert "added in 5.0" in old.changes[0].note


def test_angle_bracket_project_headers_are_not_taken_for_cuda() -> None:
    r = port("#include <cuda_utils.h>\n#include <nvshmem.h>\n", rel="a.cpp")
    assert [c.before for c in r.changes] == ["nvshmem.h"]


def test_thrust_cuda_policy_becomes_thrust_hip() -> None:
    src = "thrust::sort(thrust::cuda::par.on(stream), v.begin(), v.end());\nint cuda = 1; ns::cuda::f();\n"
    assert out(port(src, rel="a.cpp")) == (
        "thrust::sort(thrust::hip::par.on(stream), v.begin(), v.end());\nint cuda = 1; ns::cuda::f();\n"
    )


def test_block_scoped_atomics_become_device_scoped() -> None:
    src = "__global__ void k(int* c, float* f) { atomicAdd_block(c, 1); atomicMax_block(c, 2); atomicCAS_block(c, 0, 1); atomicAdd_block(f, 1.f); }\n"
    r = port(src, "5.2", rel="a.cpp")
    assert out(r) == src.replace("_block(", "(")
    assert "device scope" in find_at(r, 1, 39).note


def test_hip_data_types_are_there_from_rocm_5_2() -> None:
    src = "cudaDataType t = CUDA_R_32F; int c = CUDA_C_64F; int b = CUDA_R_16BF;\n"
    r = port(src, "5.2", rel="a.cpp")
    assert out(r).startswith("hipDataType t = HIP_R_32F; int c = HIP_C_64F; int b = CUDA_R_16BF;")
    assert find(r, "CUDA_R_16BF").status is UNCONVERTED  # the bf16 value came later
    assert find(port(src, "5.1", rel="a.cpp"), "CUDA_R_32F").status is UNCONVERTED


def test_a_renamed_enumerator_takes_the_spelling_of_the_release() -> None:
    src = "auto order = CUSPARSE_ORDER_COL;\n"
    old = port(src, "5.2", rel="a.cpp")
    assert out(old) == "auto order = HIPSPARSE_ORDER_COLUMN;\n"
    assert "HIPSPARSE_ORDER_COL from ROCm 5.4" in find(old, "CUSPARSE_ORDER_COL").note
    assert out(port(src, "5.4", rel="a.cpp")) == "auto order = HIPSPARSE_ORDER_COL;\n"
    assert find(port(src, "4.0", rel="a.cpp"), "CUSPARSE_ORDER_COL").status is UNCONVERTED


def test_hipblas_v2_names_lose_their_suffix_from_rocm_7() -> None:
    src = "cublasGemmEx(h, a, b); cublasCgemm(h); cublasSgemm(h);\n"
    assert out(port(src, "6.4", rel="a.cpp")) == (
        "hipblasGemmEx_v2(h, a, b); hipblasCgemm_v2(h); hipblasSgemm(h);\n"
    )
    assert out(port(src, "7.0", rel="a.cpp")) == (
        "hipblasGemmEx(h, a, b); hipblasCgemm(h); hipblasSgemm(h);\n"
    )
    assert find(port(src, "5.7", rel="a.cpp"), "cublasGemmEx").status is UNCONVERTED
    api = load_api_map()
    v2 = [e for e in api.entries.values() if e.family == "cublas" and e.hip.endswith("_v2")]
    assert not v2  # every _v2 name of the table got its ROCm 7 spelling


def test_trap_becomes_the_clang_builtin() -> None:
    r = port("__device__ void fail() { __trap(); }\n", "5.2", rel="a.cpp")
    assert out(r) == "__device__ void fail() { __builtin_trap(); }\n"


def test_tile_votes_are_reported_before_rocm_6_2() -> None:
    src = (
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "__device__ int f(cg::thread_block_tile<32> tile, std::bitset<4> bits, float v) {\n"
        "  auto octet = cg::tiled_partition<8>(cg::this_thread_block());\n"
        "  cg::coalesced_group active = cg::coalesced_threads();\n"
        "  return tile.any(v > 0) + octet.ballot(v < 0) + active.all(1) + bits.any();\n}\n"
    )
    r = port(src, "5.2", rel="a.cu")
    reported = [(c.line, c.before) for c in r.changes if c.family == "device"]
    assert reported == [(6, "tile.any"), (6, "octet.ballot"), (6, "active.all")]
    assert "added in 6.2" in find(r, "tile.any").note
    assert not [c for c in port(src, "6.2", rel="a.cu").changes if c.family == "device"]


def test_a_new_make_overload_is_not_a_clash() -> None:
    src = (
        "__host__ __device__ float3 make_float3(const float4& v) { return {v.x, v.y, v.z}; }\n"
        "__host__ __device__ float2 make_float2(float x, float y) { return {x, y}; }\n"
    )
    r = port(src, rel="a.cu")
    assert [(c.line, c.before) for c in r.changes if c.family == "clash"] == [(2, "make_float2")]


# ----------------------------------------------------------- adversarial and long lines


def test_call_arguments_skip_comments_literals_and_continuations() -> None:
    src = (
        "#include <hip/hip_runtime.h>\n#define FULL 0xffffffffULL\n"
        "x = __shfl_sync( /* a, b */ FULL // c, d\n , f(\",\", ','), \\\n 0 /* e */);\n"
    )
    r = port(src, "6.4")
    mask = find(r, "FULL")
    assert (mask.line, mask.column, mask.status) == (3, 29, NEEDS_REVIEW)
    assert "FULL is defined on line 2" in mask.note


def test_unclosed_calls_on_one_line_are_each_reported_at_their_column() -> None:
    r = port("#include <hip/hip_runtime.h>\n" + "__shfl_sync(0xffffffff," * 40, "6.2")
    columns = [c.column for c in r.changes if c.before == "__shfl_sync"]
    assert columns == [1 + 23 * i for i in range(40)]
    assert all("could not read the call's arguments" in c.note for c in r.changes)


def test_many_names_on_one_line_keep_their_columns() -> None:
    src = "int x; " + "cudaFree(p); " * 30 + "\r\nint y; cudaFree(q);"
    r = port(src, rel="a.cpp")
    frees = [(c.line, c.column) for c in r.changes if c.before == "cudaFree"]
    assert frees == [(1, 8 + 13 * i) for i in range(30)] + [(2, 8)]


def test_many_mask_macros_defined_after_their_use_are_each_read() -> None:
    # past a few names the definitions are read in one pass: the same answers
    calls = "".join(f"x = __shfl_sync(M{i}, v, 1);\n" for i in range(12))
    defines = "".join(
        f"#define M{i} {'0xffffffffffffffffULL' if i % 2 else '0xffffffffULL'}\n" for i in range(12)
    )
    r = port("#include <hip/hip_runtime.h>\n" + calls + defines, "6.4")
    flagged = [c.before for c in r.changes if c.family == "warp"]
    assert flagged == [f"M{i}" for i in range(0, 12, 2)]
    assert "M10 is defined on line 24" in find(r, "M10").note


def test_arch_uses_on_one_long_directive_line() -> None:
    src = "#if " + "defined(__CUDA_ARCH__) && " * 20 + "__CUDA_ARCH__ >= 700\n#endif\n"
    r = port(src, rel="a.cpp")
    kinds = [c.status for c in r.changes if c.family == "arch"]
    assert kinds == [NEEDS_REVIEW] * 20 + [UNCONVERTED]
    assert all("also compares __CUDA_ARCH__'s value" in c.note for c in r.changes[:20])
