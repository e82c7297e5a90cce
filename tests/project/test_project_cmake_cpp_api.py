"""A CUDA-only CMake build beside a setup.py that builds the package for ROCm is a second build
(pytorch_scatter's and pytorch_sparse's C++ API): one GP601 line, not a finding per CMake line."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

# pytorch_scatter's setup.py: one CUDAExtension per op, built for ROCm when torch.version.hip.
SETUP = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, BuildExtension
WITH_CUDA = torch.cuda.is_available() or torch.version.hip
define_macros = []
if torch.version.hip:
    define_macros += [('USE_ROCM', None)]
ext = CUDAExtension('scatterlib._ops', ['csrc/ops.cpp', 'csrc/cuda/ops.cu'], define_macros=define_macros)
setup(name='scatterlib', packages=['scatterlib'], ext_modules=[ext],
      cmdclass={'build_ext': BuildExtension})
"""
# The C++-API build: CPU by default, CUDA when asked for, no HIP anywhere. The markers say what
# the scan lists on each line: nothing but the one GP601 line that folds them.
CMAKE = """\
cmake_minimum_required(VERSION 3.10)  # ok: GP501
project(scatterlib)
option(WITH_CUDA "Enable CUDA support" OFF)
if(WITH_CUDA)
  # expect: GP601
  enable_language(CUDA)
  set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr")  # ok: GP506, GP509
endif()
file(GLOB SOURCES csrc/*.cpp)
if(WITH_CUDA)
  file(GLOB SOURCES ${SOURCES} csrc/cuda/*.cu)  # ok: GP507
endif()
add_library(${PROJECT_NAME} SHARED ${SOURCES})
"""
PROJECT = {
    "setup.py": SETUP,
    "scatterlib/__init__.py": "",
    "CMakeLists.txt": CMAKE,
    "csrc/ops.cpp": "int ops() { return 0; }\n",
}


def _cmake_components(root: Path) -> list[str]:
    model = build_model(root)
    return [
        c.path
        for c in model.components
        if c.status is ComponentStatus.NVIDIA_ONLY and c.path.endswith("CMakeLists.txt")
    ]


def test_the_cpp_api_cmake_build_folds_into_one_line(tmp_path: Path) -> None:
    root = write(tmp_path, PROJECT)
    result = scan_path(root, ScanOptions(jobs=1))
    mine = [f for f in result.findings if f.location.path == "CMakeLists.txt"]
    check_findings(CMAKE, mine, "CMakeLists.txt")
    (line,) = [f for f in mine if f.rule_id == "GP601"]
    assert "setup.py:4" in line.message and "on ROCm the project uses setup.py" in line.message
    # GP506 on the flags line is told by its GP509 finding (one edit of one line)
    assert {f.rule_id for f in result.set_aside} >= {"GP501", "GP507", "GP509"}


def test_not_folded_when_python_runs_cmake_or_the_cmake_build_knows_hip(tmp_path: Path) -> None:
    runs_cmake = SETUP.replace("import torch\n", "import torch\nimport subprocess  # cmake\n")
    assert _cmake_components(write(tmp_path / "a", {**PROJECT, "setup.py": runs_cmake})) == []
    hip = CMAKE.replace(
        "endif()\nfile", "elseif(WITH_HIP)\n  enable_language(HIP)\nendif()\nfile", 1
    )
    assert _cmake_components(write(tmp_path / "b", {**PROJECT, "CMakeLists.txt": hip})) == []
    # without a ROCm branch in setup.py the project has no ROCm path to name
    no_rocm = "\n".join(
        line for line in SETUP.splitlines() if "hip" not in line and "ROCM" not in line
    )
    assert _cmake_components(write(tmp_path / "c", {**PROJECT, "setup.py": no_rocm})) == []
    # a CMake build that never enables CUDA is not NVIDIA-only
    cpu = CMAKE.replace("enable_language(CUDA)", "message(STATUS cpu)")
    cpu = cpu.replace("CMAKE_CUDA_FLAGS", "CMAKE_CXX_FLAGS").replace("csrc/cuda/*.cu", "x.cpp")
    assert _cmake_components(write(tmp_path / "d", {**PROJECT, "CMakeLists.txt": cpu})) == []
    assert _cmake_components(write(tmp_path / "e", PROJECT)) == ["CMakeLists.txt"]
