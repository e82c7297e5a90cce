"""An opt-in CUDA-only CMake sub-build (TransformerEngine's NVSHMEM helper library, added only
under an option that is OFF by default) is one GP601 line, not a finding per line (issue 9)."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

TOP = """\
cmake_minimum_required(VERSION 3.21)
project(engine LANGUAGES CUDA CXX)
add_library(engine SHARED src/gemm.cu)
option(ENABLE_SHMEM "Compile with the NVSHMEM library" OFF)
option(ENABLE_EXTRA "Always wanted" ON)
if (ENABLE_SHMEM)
    add_subdirectory(shmem_api)
endif()
if (ENABLE_EXTRA)
    add_subdirectory(extra)
endif()
if (ENABLE_SHMEM AND UNIX)
    add_subdirectory(mixed)
endif()
"""
# The markers say what the scan lists: the sub-build's lines fold into the GP601 line.
SHMEM = """\
cmake_minimum_required(VERSION 3.18)  # ok: GP501
project(shmemapi LANGUAGES CXX CUDA)  # ok: GP501
find_package(CUDAToolkit REQUIRED)  # ok: GP503
add_library(shmemapi STATIC waitkernel.cu)  # ok: GP507
target_link_libraries(shmemapi PUBLIC nvshmem_device CUDA::cuda_driver)  # ok: GP505, GP510
"""
SUB = "cmake_minimum_required(VERSION 3.18)\nproject(sub LANGUAGES CXX CUDA)\n"


def test_an_opt_in_cuda_sub_build_folds_into_one_line(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "CMakeLists.txt": TOP,
            "src/gemm.cu": "__global__ void k() {}\n",
            "shmem_api/CMakeLists.txt": SHMEM,
            "shmem_api/waitkernel.cu": "__global__ void wait() {}\n",
            # ON by default: part of the build
            "extra/CMakeLists.txt": SUB,
            # under another test as well: left alone
            "mixed/CMakeLists.txt": SUB,
        },
    )
    assert [c.path for c in build_model(root).components] == ["shmem_api"]
    result = scan_path(root, ScanOptions(jobs=1))
    mine = [f for f in result.findings if f.location.path == "shmem_api/CMakeLists.txt"]
    check_findings(SHMEM, mine, "shmem_api/CMakeLists.txt")
    (line,) = [f for f in result.findings if f.rule_id == "GP601"]
    assert (line.location.path, line.location.line) == ("CMakeLists.txt", 7)
    assert line.message.startswith(
        "shmem_api/ is NVIDIA-only: an opt-in part of the build that only CUDA compiles"
    )
    assert "ENABLE_SHMEM, OFF by default (CMakeLists.txt:4)" in line.message
    assert line.fix is not None and "leave its option off" in line.fix.text


def test_a_sub_build_that_knows_hip_is_not_folded(tmp_path: Path) -> None:
    hip = SHMEM.replace("CXX CUDA)", "CXX HIP)")
    root = write(tmp_path, {"CMakeLists.txt": TOP, "shmem_api/CMakeLists.txt": hip})
    assert build_model(root).components == ()
