"""The default target and the translation's version differences (kb/rocm_versions.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport import kb
from gpuport.kb import loader
from gpuport.port.apimap import (
    EXTRA_TOML,
    VERSIONS_TOML,
    load_api_map,
    parse_version,
    version_facts,
)
from gpuport.port.model import ChangeStatus, FileResult
from gpuport.port.translate import translate_source

NEEDS_REVIEW = ChangeStatus.NEEDS_REVIEW
UNCONVERTED = ChangeStatus.UNCONVERTED


def port(text: str, version: str) -> FileResult:
    return translate_source("k.cu", text, version, diagnostics=False)


def out(result: FileResult) -> str:
    return result.translated if result.translated is not None else result.original


# ------------------------------------------------------------------------- the default


def test_the_default_target_is_the_newest_rocm_7_release_with_a_pytorch_index() -> None:
    default = parse_version(kb.DEFAULT_ROCM_VERSION)
    assert default == (7, 2, 0)
    published = [parse_version(v) for v in kb.pytorch_rocm_versions()]
    assert default in published
    # newer published indexes (7.10+) are technology previews, not production releases
    assert all(v[1] >= 10 for v in published if v > default)


def test_every_difference_lies_at_or_below_the_default() -> None:
    default = parse_version(kb.DEFAULT_ROCM_VERSION)
    assert all(d.since <= default for d in version_facts().differences)


# ---------------------------------------------------------------- the data agrees with itself


def test_the_differences_name_the_versions_of_the_tables_that_drive_them() -> None:
    facts = version_facts()
    by_id = {d.id: d for d in facts.differences}
    warp = load_api_map().warp
    assert by_id["warp-masks"].since == warp.sync_default_since
    assert by_id["syncwarp"].since == warp.syncwarp_since
    assert by_id["warpsize-constant"].since == facts.warp_size_not_constant_since
    assert {f.since for f in facts.location_forms.values()} == {by_id["memory-location"].since}
    extra = loader.load_toml(EXTRA_TOML)
    (dropped,) = [d for d in extra["dropped_suffix"] if d["suffix"] == "_v2"]
    assert by_id["hipblas-v2"].since == parse_version(dropped["since"])


# The keys each table of rocm_versions.toml may hold: a typo would otherwise be ignored.
_KEYS = {
    "difference": {"id", "since", "data", "what", "older", "sources", "checked"},
    "location_form": {
        "cuda",
        "hip",
        "since",
        "location_argument",
        "location_counts",
        "older",
        "sources",
        "checked",
    },
    "context_params": {
        "cuda",
        "hip",
        "since",
        "arguments",
        "params_argument",
        "unsupported",
        "sources",
        "checked",
    },
    "name": {"cuda", "hip", "since", "family", "note", "sources", "checked"},
    "warp_size": {"not_constant_since", "fix", "sources", "checked"},
    "meta": {"checked"},
}


def test_rocm_versions_toml_holds_only_known_tables_and_keys() -> None:
    data = loader.load_toml(VERSIONS_TOML)
    assert set(data) == set(_KEYS)
    for table, value in data.items():
        for item in value if isinstance(value, list) else [value]:
            assert set(item) <= _KEYS[table], (table, set(item) - _KEYS[table])


def test_every_difference_names_the_table_that_drives_it() -> None:
    data = loader.load_toml(VERSIONS_TOML)
    for item in data["difference"]:
        filename, _, table = item["data"].partition(" ")
        assert table.split()[0].strip("[]") in loader.load_toml(filename), item["id"]


def test_between_lists_what_an_older_target_changes() -> None:
    facts = version_facts()
    ids = [d.id for d in facts.between((5, 2, 0), (7, 2, 0))]
    assert ids == ["warp-masks", "hipblas-v2", "memory-location", "syncwarp", "warpsize-constant"]
    assert [d.id for d in facts.between((6, 4, 0), (7, 2, 0))] == ids[1:]
    assert facts.between((7, 0, 0), (7, 2, 0)) == ()


# -------------------------------------------------------------------------- hipBLAS 3

BLAS = (
    "#include <cublas_v2.h>\nvoid f(cublasHandle_t h, float* a) {\n"
    "  cublasCreate_v2(&h);\n"
    "  cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, a, a, 1, a, 1, a, a, 1);\n"
    "  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, a, a, CUDA_R_32F, 1, a, CUDA_R_32F,"
    " 1, a, a, CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);\n}\n"
)


@pytest.mark.parametrize(
    ("version", "gemm_ex"),
    [("7.2", "hipblasGemmEx("), ("7.0", "hipblasGemmEx("), ("6.4", "hipblasGemmEx_v2(")],
)
def test_hipblas_3_drops_the_v2_names(version: str, gemm_ex: str) -> None:
    text = out(port(BLAS, version))
    # cuBLAS's own _v2 names are hipBLAS's plain names on every release
    assert "hipblasCreate(&h)" in text and "hipblasSgemm(h," in text
    assert gemm_ex in text and "_v2" not in text.replace(gemm_ex, "")


# ------------------------------------------------------------------ memory locations

MANAGED = (
    "#include <cuda_runtime.h>\n"
    "void f(float* p, size_t n, cudaStream_t s, int dev) {\n"
    "  cudaMemLocation loc{cudaMemLocationTypeDevice, 0};\n"
    "  cudaMemAdvise(p, n, cudaMemAdviseSetPreferredLocation, loc);\n"
    "  cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, dev);\n"
    "  cudaMemPrefetchAsync(p, n, loc, 0, s);\n"
    "  cudaMemPrefetchAsync(p, n, dev, s);\n"
    "  cudaMemPrefetchAsync_v2(p, n, {cudaMemLocationTypeDevice, dev}, 0);\n"
    "  cudaMemAdvise_v2(p, n, cudaMemAdviseSetAccessedBy, loc);\n"
    "}\n"
)


def test_rocm_7_takes_the_location_forms_as_hip_v2_functions() -> None:
    r = port(MANAGED, "7.2")
    lines = out(r).splitlines()
    assert lines[3] == "  hipMemAdvise_v2(p, n, hipMemAdviseSetPreferredLocation, loc);"
    assert lines[4] == "  hipMemAdvise(p, n, hipMemAdviseSetReadMostly, dev);"
    assert lines[5] == "  hipMemPrefetchAsync_v2(p, n, loc, 0, s);"
    assert lines[6] == "  hipMemPrefetchAsync(p, n, dev, s);"
    assert lines[7] == "  hipMemPrefetchAsync_v2(p, n, {hipMemLocationTypeDevice, dev}, 0);"
    assert lines[8] == "  hipMemAdvise_v2(p, n, hipMemAdviseSetAccessedBy, loc);"
    assert not [c for c in r.changes if c.status is UNCONVERTED]


def test_older_targets_report_each_location_form_with_the_device_id_fix() -> None:
    r = port(MANAGED, "6.4")
    text = out(r)
    assert "hipMemAdvise(p, n, hipMemAdviseSetReadMostly, dev);" in text
    assert "hipMemPrefetchAsync(p, n, dev, s);" in text
    reported = [(c.line, c.before) for c in r.changes if c.status is UNCONVERTED]
    assert reported == [
        (4, "cudaMemAdvise"),
        (6, "cudaMemPrefetchAsync"),
        (8, "cudaMemPrefetchAsync_v2"),
        (9, "cudaMemAdvise_v2"),
    ]
    first = next(c for c in r.changes if c.before == "cudaMemAdvise")
    assert "hipMemAdvise_v2, which is not in ROCm 6.4 (added in 7.0)" in first.note
    assert "device id" in first.note
    assert "cudaMemAdvise(p, n, hipMemAdviseSetPreferredLocation, loc)" in text


def test_the_host_location_type_exists_from_rocm_7() -> None:
    src = "#include <cuda_runtime.h>\ncudaMemLocation l{cudaMemLocationTypeHost, 0};\n"
    assert "hipMemLocationTypeHost" in out(port(src, "7.2"))
    old = port(src, "6.4")
    assert "cudaMemLocationTypeHost" in out(old)
    assert any(
        c.before == "cudaMemLocationTypeHost" and "added in 7.0" in c.note for c in old.changes
    )


# ------------------------------------------------------------------------- cuCtxCreate


@pytest.mark.parametrize("version", ["7.2", "5.2"])
def test_cuda_13_cu_ctx_create_with_null_params_is_the_three_argument_hip_call(
    version: str,
) -> None:
    src = (
        "#include <cuda.h>\nvoid f(CUdevice d) {\n  CUcontext c;\n"
        "  cuCtxCreate(&c, nullptr, 0, d);\n  cuCtxCreate(&c, 0, d);\n"
        "  cuCtxCreate_v4(&c, NULL, CU_CTX_SCHED_AUTO, d);\n}\n"
    )
    r = port(src, version)
    lines = out(r).splitlines()
    assert lines[3:6] == [
        "  hipCtxCreate(&c, 0, d);",
        "  hipCtxCreate(&c, 0, d);",
        "  hipCtxCreate(&c, hipDeviceScheduleAuto, d);",
    ]
    assert not [c for c in r.changes if c.status is UNCONVERTED]


def test_cu_ctx_create_with_params_is_reported_with_the_fix() -> None:
    src = "#include <cuda.h>\nvoid f(CUdevice d, CUctxCreateParams* p, CUcontext c) {\n  cuCtxCreate(&c, p, 0, d);\n}\n"
    r = port(src, "7.2")
    assert "cuCtxCreate(&c, p, 0, d);" in out(r)
    (call,) = [c for c in r.changes if c.before == "cuCtxCreate"]
    assert call.status is UNCONVERTED and call.line == 3
    assert "hipCtxCreate(&ctx, flags, dev)" in call.note and "primary context" in call.note


# --------------------------------------------------------------------------- warpSize

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_warp_size_constants_do_not_compile_from_rocm_7_and_say_so() -> None:
    text = (CORPUS / "rocm7_warpsize_shared.cu").read_text(encoding="utf-8")
    for version, status, said in (
        ("7.2", UNCONVERTED, "does not compile for ROCm 7.2"),
        ("7.0", UNCONVERTED, "does not compile for ROCm 7.0"),
        ("6.4", NEEDS_REVIEW, "compiles for ROCm 6.4 (warpSize is a constant there"),
    ):
        r = translate_source("rocm7_warpsize_shared.cu", text, version)
        found = [(c.line, c.before, c.status) for c in r.changes if c.rule_id == "GP306"]
        assert found == [(14, "WARPS_PER_BLOCK", status), (15, "WARP_SIZE", status)], version
        notes = [c.note for c in r.changes if c.rule_id == "GP306"]
        assert all(n.startswith(said) and "template parameter" in n for n in notes), notes


def test_a_rocm_only_warp_size_macro_without_uses_stays_a_review() -> None:
    header = (
        "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define WARP_SIZE warpSize\n"
        "#else\n#define WARP_SIZE 32\n#endif\n"
    )
    r = translate_source("compat.cuh", header, "7.2")
    (found,) = [c for c in r.changes if c.rule_id == "GP306"]
    assert found.status is NEEDS_REVIEW and found.note.startswith("does not compile")


# ------------------------------------------------------------------------- warp masks


@pytest.mark.parametrize(
    ("mask", "after"),
    [
        ("uint32_t(-1)", "0xffffffffffffffffULL"),  # causal-conv1d's spelling
        ("unsigned(0xffffffff)", "0xffffffffffffffffULL"),
        ("uint64_t(-1)", "uint64_t(-1)"),  # all 64 lanes already
    ],
)
def test_functional_cast_masks_are_read_like_c_casts(mask: str, after: str) -> None:
    src = f"#include <hip/hip_runtime.h>\n__device__ int f(int v) {{ return __shfl_xor_sync({mask}, v, 1); }}\n"
    r = port(src, "7.2")
    assert out(r) == src.replace(mask, after)
    assert not [c for c in r.changes if c.status is not ChangeStatus.CONVERTED]


def test_an_unknown_function_of_minus_one_is_not_taken_for_a_mask() -> None:
    src = "#include <hip/hip_runtime.h>\n__device__ int f(int v) { return __shfl_sync(lanes(-1), v, 0); }\n"
    r = port(src, "7.2")
    assert out(r) == src
    (review,) = r.changes
    assert review.status is NEEDS_REVIEW and "64-bit mask" in review.note


def test_a_32_bit_mask_constant_is_made_64_bit_type_and_value() -> None:
    # apex's group_norm_v2: `constexpr unsigned FINAL_MASK = 0xffffffff;`
    src = (
        "#include <hip/hip_runtime.h>\nconstexpr unsigned FINAL_MASK = 0xffffffff;\n"
        "__device__ int f(int v) { v += __shfl_xor_sync(FINAL_MASK, v, 1);"
        " return __shfl_sync(FINAL_MASK, v, 0); }\n"
    )
    r = port(src, "7.2")
    assert (
        out(r).splitlines()[1] == "constexpr unsigned long long FINAL_MASK = 0xffffffffffffffffULL;"
    )
    assert [(c.line, c.before, c.status) for c in r.changes] == [
        (2, "unsigned", NEEDS_REVIEW),
        (2, "0xffffffff", NEEDS_REVIEW),
    ]
    assert "check its other uses" in r.changes[0].note


def test_a_mask_constant_of_a_type_gpuport_cannot_widen_is_reported() -> None:
    src = (
        "#include <hip/hip_runtime.h>\nconst auto FULL = 0xffffffffu;\n"
        "__device__ int f(int v) { return __shfl_sync(FULL, v, 0); }\n"
    )
    r = port(src, "7.2")
    assert out(r) == src
    (call,) = r.changes
    assert call.status is UNCONVERTED and "declare it `unsigned long long FULL" in call.note
