"""Argument-level rewrites (kb/hip_signatures.toml) and guarded clashes with HIP's definitions:
the call HIP takes, or a report naming the fix; never a renamed call that cannot compile."""

from __future__ import annotations

from gpuport.port.model import Change, ChangeStatus, FileResult
from gpuport.port.translate import translate_source

# .cpp: no hip_runtime.h is added, so the lines stay where they were
CONVERTED = ChangeStatus.CONVERTED
NEEDS_REVIEW = ChangeStatus.NEEDS_REVIEW
UNCONVERTED = ChangeStatus.UNCONVERTED
GUARD = "#if !defined(__HIP_PLATFORM_AMD__)"


def port(text: str, version: str = "6.4", rel: str = "k.cpp") -> FileResult:
    return translate_source(rel, text, version, diagnostics=False)


def out(result: FileResult) -> str:
    return result.translated if result.translated is not None else result.original


def reports(result: FileResult) -> list[Change]:
    return [c for c in result.changes if c.status is not ChangeStatus.CONVERTED]


def test_two_argument_event_create_is_hip_event_create_with_flags() -> None:
    r = port(
        "void f(cudaEvent_t* e) {\n  cudaEventCreate(e, cudaEventDisableTiming);\n"
        "  cudaEventCreate(e);\n}\n"
    )
    assert out(r).splitlines()[1:3] == [
        "  hipEventCreateWithFlags(e, hipEventDisableTiming);",
        "  hipEventCreate(e);",
    ]
    first = next(c for c in r.changes if c.line == 2 and c.before == "cudaEventCreate")
    assert first.after == "hipEventCreateWithFlags" and first.status is CONVERTED
    assert "hipEventCreateWithFlags" in first.note


def test_occupancy_drops_a_null_callback_and_reports_a_real_one() -> None:
    src = (
        "void f(CUfunction k, int* g, int* b) {\n"
        "  cuOccupancyMaxPotentialBlockSize(g, b, k, 0, 64, 0);\n"
        "  cuOccupancyMaxPotentialBlockSizeWithFlags(g, b, k, NULL, 64, 256, 0);\n"
        "  cuOccupancyMaxPotentialBlockSize(g, b, k, smem_for, 0, 0);\n"
        "}\n"
    )
    r = port(src)
    lines = out(r).splitlines()
    assert lines[1] == "  hipModuleOccupancyMaxPotentialBlockSize(g, b, k, 64, 0);"
    assert lines[2] == "  hipModuleOccupancyMaxPotentialBlockSizeWithFlags(g, b, k, 64, 256, 0);"
    assert lines[3] == "  cuOccupancyMaxPotentialBlockSize(g, b, k, smem_for, 0, 0);"
    [report] = reports(r)
    assert report.line == 4 and report.status is UNCONVERTED
    assert "CUoccupancyB2DSize" in report.note and "smem_for" in report.note
    assert "dynSharedMemPerBlk" in report.note


def test_spsm_solve_takes_the_buffer_given_to_analysis() -> None:
    src = (
        "void f() {\n"
        "  cusparseSpSM_analysis(h, o, o, &a, A, B, C, CUDA_R_32F, alg, descr, work);\n"
        "  cusparseSpSM_analysis(h, o, o, &a, A, B, C, CUDA_R_32F, alg, other, spare);\n"
        "  cusparseSpSM_solve(h, o, o, &a, A, B, C, CUDA_R_32F, alg, descr);\n"
        "  cusparseSpSM_solve(h, o, o, &a, A, B, C, CUDA_R_32F, alg, unknown);\n"
        "}\n"
    )
    r = port(src)
    lines = out(r).splitlines()
    assert lines[3] == "  hipsparseSpSM_solve(h, o, o, &a, A, B, C, HIP_R_32F, alg, descr, work);"
    assert lines[4].endswith("alg, unknown, nullptr);")
    [review] = reports(r)
    assert review.line == 5 and review.status is NEEDS_REVIEW
    assert "hipsparseSpSM_analysis" in review.note


def test_driver_entry_points_get_the_hip_version_flags_and_names() -> None:
    src = (
        "void f(void** fn, cudaDriverEntryPointQueryResult* q, CUdriverProcAddressQueryResult* r) {\n"
        '  cudaGetDriverEntryPoint("cuMemAlloc", fn, cudaEnableDefault, q);\n'
        '  cuGetProcAddress("cuDeviceGetCount", fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, r);\n'
        '  cuGetProcAddress("cuInit", fn, 11040, 0);\n'
        "}\n"
    )
    r = port(src, "6.4")
    lines = out(r).splitlines()
    assert lines[1] == (
        '  hipGetProcAddress("hipMalloc", fn, 604, HIP_GET_PROC_ADDRESS_DEFAULT, q);'
    )
    assert lines[2] == (
        '  hipGetProcAddress("hipGetDeviceCount", fn, 604, HIP_GET_PROC_ADDRESS_DEFAULT, r);'
    )
    assert lines[3] == '  hipGetProcAddress("hipInit", fn, 604, 0, nullptr);'
    assert not reports(r), reports(r)
    assert '"hipMalloc", fn, 702,' in out(port(src, "7.2"))


def test_entry_points_before_rocm_6_2_are_reported_not_rewritten() -> None:
    src = 'void f(void** fn) { cudaGetDriverEntryPoint("cuInit", fn, 0, nullptr); }\n'
    r = port(src, "6.1")
    assert out(r) == src
    assert any(c.before == "cudaGetDriverEntryPoint" and "6.2" in c.note for c in reports(r)), (
        r.changes
    )


def test_legacy_cublas_calls_are_reported_not_renamed() -> None:
    src = (
        "#include <cublas.h>\n"
        "void f(float* x, float* y) {\n"
        "  cublasSaxpy(16, 2.f, x, 1, y, 1);\n"
        "  float n = cublasSnrm2(16, y, 1);\n"
        "}\n"
    )
    r = port(src)
    body = out(r).splitlines()[2:4]
    assert body == ["  cublasSaxpy(16, 2.f, x, 1, y, 1);", "  float n = cublasSnrm2(16, y, 1);"]
    legacy = [c for c in reports(r) if c.family == "cublas"]
    assert [c.before for c in legacy] == ["cublasSaxpy", "cublasSnrm2"]
    assert all("legacy cuBLAS (v1" in c.note and "cublas_v2.h" in c.note for c in legacy)


def test_cublas_v2_calls_are_renamed_even_beside_the_legacy_header() -> None:
    src = "#include <cublas.h>\n#include <cublas_v2.h>\nvoid f() { cublasSaxpy(h, n, &a, x, 1, y, 1); }\n"
    assert "hipblasSaxpy(h, n, &a, x, 1, y, 1)" in out(port(src))
    commented = "// #include <cublas.h>\nvoid f() { cublasSaxpy(h, n, &a, x, 1, y, 1); }\n"
    assert "hipblasSaxpy(" in out(port(commented))


def test_symbol_calls_stay_plain_renames() -> None:
    # HIP's template overloads take the symbol itself (HIP_SYMBOL(x) is x on AMD)
    r = port("void f(float* h) { cudaMemcpyToSymbol(coeffs, h, 16); }\n")
    assert "hipMemcpyToSymbol(coeffs, h, 16)" in out(r)


def test_leading_global_namespace_cub_is_renamed() -> None:
    r = port("void f() { ::cub::DeviceReduce::Sum(t, n, i, o, 4); }\n")
    assert "::hipcub::DeviceReduce::Sum" in out(r)


def test_rewrites_keep_line_breaks_between_arguments() -> None:
    src = "void f() {\n  cudaEventCreate(&e,\n                  flags);\n}\n"
    assert "hipEventCreateWithFlags(&e,\n                  flags);" in out(port(src))


# ------------------------------------------------------------------------------- clashes


def test_user_atomics_with_hip_s_signature_are_guarded() -> None:
    src = (
        "__device__ __forceinline__ double\n"
        "atomicMax(double* address, double val) {\n  return val;\n}\n"
        "__device__ int atomicMax(int* a, int b, int c) { return 0; }\n"
        "__device__ float atomicMin(float* p, float v);\n"
    )
    r = port(src)
    lines = out(r).splitlines()
    assert lines[0] == GUARD and lines[5] == "#endif"
    assert lines[7] == GUARD and lines[9] == "#endif"  # a declaration is guarded too
    assert lines[6].startswith("__device__ int atomicMax(int* a")  # not HIP's: left alone
    clash = [
        (c.line, c.before, "wrapped in #if" in c.note) for c in r.changes if c.family == "clash"
    ]
    # the three-argument atomicMax is not HIP's signature: reported as before, not guarded
    assert clash == [(2, "atomicMax", True), (5, "atomicMax", False), (6, "atomicMin", True)]
    assert all(c.status is NEEDS_REVIEW for c in r.changes if c.family == "clash")


def test_vector_operators_hip_defines_are_guarded_others_stay() -> None:
    src = (
        "inline __device__ float4 operator+(const float4& a, const float4& b) { return a; }\n"
        "inline __device__ float3 operator*(const float2& a, const float3& b) { return b; }\n"
        "struct M { float4 operator+(const float4& b) const { return b; } };\n"
        "namespace n {\ninline __device__ float2 operator-(float2 a, float2 b) { return a; }\n}\n"
    )
    r = port(src)
    lines = out(r).splitlines()
    assert lines[:3] == [GUARD, src.splitlines()[0], "#endif"]
    assert lines[3:] == src.splitlines()[1:]
    clash = [(c.line, c.before, "wrapped" in c.note) for c in r.changes if c.family == "clash"]
    # mixed vector types: no clash at all; a member or a namespace's operator: reported
    assert clash == [(1, "operator+", True), (3, "operator+", False), (5, "operator-", False)]


def test_guarding_twice_changes_nothing() -> None:
    src = "__device__ float atomicMin(float* p, float v) { return v; }\n"
    once = out(port(src))
    assert once.startswith(GUARD)
    assert out(port(once)) == once


def test_guards_keep_crlf() -> None:
    src = "__device__ float atomicMin(float* p, float v) { return v; }\r\nint x;\r\n"
    assert out(port(src)) == f"{GUARD}\r\n" + src.replace("int x;", "#endif\r\nint x;")


def test_cuda_12_graph_exec_update_is_reported_with_the_fix() -> None:
    src = "void f() {\n  cudaGraphExecUpdate(exec, g, &info);\n  cudaGraphExecUpdate(exec, g, &n, &r);\n}\n"
    r = port(src)
    assert out(r).splitlines()[1:3] == [
        "  cudaGraphExecUpdate(exec, g, &info);",
        "  hipGraphExecUpdate(exec, g, &n, &r);",
    ]
    [report] = reports(r)
    assert report.line == 2 and report.status is UNCONVERTED
    assert "hipGraphExecUpdateResult" in report.note


def test_device_printf_takes_built_in_coordinates_cast() -> None:
    src = (
        "__global__ void k() {\n"
        '  printf("%d %d %u\\n", blockIdx.x, threadIdx . y, blockDim.x * 2);\n'
        '  std::printf("%d", gridDim.z);\n'
        "}\n"
    )
    once = out(port(src))
    assert once.splitlines()[1] == (
        '  printf("%d %d %u\\n", (unsigned int)blockIdx.x, (unsigned int)threadIdx . y,'
        " blockDim.x * 2);"
    )
    assert once.splitlines()[2] == '  std::printf("%d", gridDim.z);'  # a host call: left
    assert out(port(once)) == once


def test_an_include_port_adds_stays_outside_the_guard() -> None:
    src = "#pragma once\ninline float4 operator+(float4 a, float4 b) { return a; }\n"
    guarded = translate_source("v.cu", src + "__global__ void k() {}\n", "6.4").translated
    assert guarded is not None
    assert guarded.startswith(f"#pragma once\n#include <hip/hip_runtime.h>\n{GUARD}\ninline")
    assert translate_source("v.cu", guarded, "6.4").translated is None  # nothing left to do


def test_a_guard_closes_on_its_own_line_at_the_end_of_a_file() -> None:
    src = "__device__ float atomicMin(float* p, float v);// no newline at the end "
    assert out(port(src)) == f"{GUARD}\n{src}\n#endif"
    assert port(out(port(src))).translated is None
