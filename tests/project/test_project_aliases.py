"""CUDA names a project's compat header maps for ROCm, read with a small directive walk."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.aliases import header_aliases
from gpuport.project.build import build_model

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

BNB_STYLE = """\
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#define BNB_HIP 1
#else
#define BNB_HIP 0
#endif

#if BNB_HIP
#define __syncwarp() \\
    do { } while (0)
#else // CUDA
#define cudaOnCudaOnly 1
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
#define warpSize_alias 1
#define warpSize 64
#endif
"""


def test_aliases_in_a_rocm_branch_only() -> None:
    assert header_aliases(EXLLAMA_STYLE) == {"__shfl_xor_sync", "cudaStream_t"}


def test_a_switch_a_rocm_branch_defines_counts_as_rocm() -> None:
    assert header_aliases(BNB_STYLE) == {"__syncwarp"}


def test_ifndef_else_elif_and_cuda_only_branches() -> None:
    # HIP_VERSION_MAJOR is a ROCm name: taken as 1, so `< 6` holds and #elif is not taken
    assert header_aliases(IFNDEF_ELSE) == {"__ballot_sync", "cudaOldHip"}


def test_the_projects_own_rocm_macro_opens_a_branch() -> None:
    text = "#ifdef WITH_AMD_GPU\n#define cudaMalloc hipMalloc\n#endif\n"
    assert header_aliases(text) == frozenset()
    assert header_aliases(text, {"WITH_AMD_GPU"}) == {"cudaMalloc"}


def test_an_unreadable_condition_is_not_taken() -> None:
    text = "#if defined(USE_ROCM) && __has_include(<hip/hip_runtime.h>)\n#define cudaX y\n#endif\n"
    assert header_aliases(text) == frozenset()


def test_the_model_reads_only_headers_that_define_a_cuda_name(tmp_path: Path) -> None:
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "compat.cuh").write_text(EXLLAMA_STYLE)
    (tmp_path / "csrc" / "plain.h").write_text("#pragma once\nint f();\n")
    model = build_model(tmp_path)
    assert model.facts.rocm_aliases == {"__shfl_xor_sync", "cudaStream_t"}
