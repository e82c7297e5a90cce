"""``gpuport port --check``: nvcc on the originals, hipcc on the translations, one verdict each."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuport.port.check import CheckOptions, _Outcome, _verdict, check_project, hipcc_version
from gpuport.port.model import CheckStatus
from gpuport.port.project import port_project

HAVE_NVCC = shutil.which("nvcc") is not None
HAVE_HIPCC = shutil.which("hipcc") is not None
needs_compilers = pytest.mark.skipif(
    not (HAVE_NVCC and HAVE_HIPCC), reason="needs nvcc and hipcc on PATH"
)

COMMON = """\
#pragma once
#define BLOCK 128
__device__ inline float twice(float x) { return 2.0f * x; }
"""
GOOD = """\
#include <cuda_runtime.h>
#include "../include/common.cuh"
__global__ void scale(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = twice(p[i]);
}
int launch(float* p, int n) {
  scale<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(p, n);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
"""
# HIP has no counterpart for this call: the translation keeps it and hipcc stops there.
NO_COUNTERPART = """\
#include <cuda_runtime.h>
int reset() { return cudaCtxResetPersistingL2Cache() == cudaSuccess; }
"""
BROKEN_BOTH = """\
#include <cuda_runtime.h>
int broken( { return cudaSuccess; }
"""
LIBRARY = """\
#include <cublas_v2.h>
int make() { cublasHandle_t h; return cublasCreate(&h); }
"""


def test_verdicts_from_both_outcomes() -> None:
    ok = _Outcome(True)
    fails = _Outcome(False, "x.cu:1:1: error: bad")
    lib = _Outcome(False, "fatal", missing_header="hipfft/hipfft.h")
    project_header = _Outcome(False, "fatal", missing_header="mine.h")
    absent = _Outcome(False, not_run="nvcc not found")
    assert _verdict("a", ok, ok).status is CheckStatus.BOTH_COMPILE
    assert _verdict("a", ok, fails).status is CheckStatus.TRANSLATION_FAILS
    assert _verdict("a", ok, fails).translation_error == "x.cu:1:1: error: bad"
    assert _verdict("a", fails, fails).status is CheckStatus.ORIGINAL_FAILS
    assert _verdict("a", fails, ok).status is CheckStatus.ORIGINAL_FAILS
    assert _verdict("a", ok, lib).status is CheckStatus.NOT_COMPILED
    assert "header hipfft/hipfft.h unavailable" in _verdict("a", ok, lib).detail
    # a project header the translation cannot find is the translation's problem
    assert _verdict("a", ok, project_header).status is CheckStatus.TRANSLATION_FAILS
    missing_nvcc = _verdict("a", absent, ok)
    assert missing_nvcc.status is CheckStatus.NOT_COMPILED
    assert "nvcc not found" in missing_nvcc.detail and "translation compiles" in missing_nvcc.detail
    assert _verdict("a", absent, fails).status is CheckStatus.TRANSLATION_FAILS


def test_missing_compilers_are_said_clearly(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(GOOD.replace('#include "../include/common.cuh"\n', ""))
    result = port_project(tmp_path, "5.2")
    options = CheckOptions(nvcc="no-such-nvcc-here", hipcc="no-such-hipcc-here")
    (check,) = check_project(tmp_path, result, options)
    assert check.status is CheckStatus.NOT_COMPILED
    assert "no-such-nvcc-here not found" in check.detail
    assert "no-such-hipcc-here not found" in check.detail


@needs_compilers
@pytest.mark.compilers
def test_compile_check_on_real_compilers(tmp_path: Path) -> None:
    files = {
        "include/common.cuh": COMMON,
        "src/good.cu": GOOD,
        "src/no_counterpart.cu": NO_COUNTERPART,
        "src/broken.cu": BROKEN_BOTH,
        "src/library.cu": LIBRARY,
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # ROCm 5.2 is the HIP installed on the test machines (Debian's hipcc)
    result = port_project(tmp_path, "5.2", diagnostics=False)
    checks = {c.path: c for c in check_project(tmp_path, result, CheckOptions(jobs=2))}
    assert set(checks) == {
        "src/good.cu",
        "src/no_counterpart.cu",
        "src/broken.cu",
        "src/library.cu",
    }
    # relative includes resolve, and the header was translated with the source
    assert checks["src/good.cu"].status is CheckStatus.BOTH_COMPILE, checks["src/good.cu"]
    failing = checks["src/no_counterpart.cu"]
    assert failing.status is CheckStatus.TRANSLATION_FAILS, failing
    assert "cudaCtxResetPersistingL2Cache" in failing.translation_error
    assert failing.original_error == ""
    broken = checks["src/broken.cu"]
    assert broken.status is CheckStatus.ORIGINAL_FAILS, broken
    assert broken.original_error and broken.translation_error
    library = checks["src/library.cu"]
    if shutil.which("nvcc") and not Path("/usr/include/hipblas/hipblas.h").exists():
        assert library.status is CheckStatus.NOT_COMPILED, library
        assert "header hipblas/hipblas.h unavailable" in library.detail


@pytest.mark.skipif(not HAVE_HIPCC, reason="needs hipcc on PATH")
def test_hipcc_reports_its_hip_version() -> None:
    version = hipcc_version()
    assert version is not None and version >= (1, 0)
    assert hipcc_version("no-such-hipcc-here") is None


def test_a_header_neither_compiler_finds_is_not_the_translations_fault() -> None:
    original = _Outcome(False, "fatal", missing_header="softmax.cuh")
    translation = _Outcome(False, "fatal", missing_header="softmax.cuh")
    check = _verdict("a.cu", original, translation)
    assert check.status is CheckStatus.NOT_COMPILED
    assert "softmax.cuh not found by either compiler" in check.detail


@needs_compilers
@pytest.mark.compilers
def test_include_dirs_reach_both_compilers(tmp_path: Path) -> None:
    # a header found only through the build's -Iheaders (not a folder named include/)
    (tmp_path / "headers").mkdir()
    (tmp_path / "headers" / "common.cuh").write_text(COMMON)
    (tmp_path / "src").mkdir()
    source = GOOD.replace('"../include/common.cuh"', '"common.cuh"')
    (tmp_path / "src" / "good.cu").write_text(source)
    result = port_project(tmp_path, "5.2", diagnostics=False)
    (without,) = check_project(tmp_path, result, CheckOptions(jobs=1))
    assert without.status is CheckStatus.NOT_COMPILED, without
    assert "common.cuh not found by either compiler" in without.detail
    options = CheckOptions(jobs=1, include_dirs=("headers",))
    (with_dirs,) = check_project(tmp_path, result, options)
    assert with_dirs.status is CheckStatus.BOTH_COMPILE, with_dirs
