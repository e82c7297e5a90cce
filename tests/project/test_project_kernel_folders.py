"""A folder whose every kernel is built on Hopper-or-newer hardware is one decision (GP601)."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

# A CMake project with no ROCm path (TransformerEngine's shape): a Blackwell recipe folder whose
# kernels all take TMA tensor maps, a mixed folder where one kernel is plain CUDA (its TMA
# findings stay: the plain kernel is what ROCm runs), and a folder whose helper header the rest
# of the project includes (not a component: the helper is compiled everywhere).
TMA_KERNEL = (
    "#include <cuda.h>\n"
    "__global__ void {name}(const __grid_constant__ CUtensorMap map, float* out) {{\n"
    '  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile [%0], [%1];" ::);\n'
    "}}\n"
)
PLAIN_KERNEL = (
    "#include <cuda_runtime.h>\n__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n"
)
HELPER = "#pragma once\ninline int round_up(int x, int m) { return (x + m - 1) / m * m; }\n"
FILES = {
    "CMakeLists.txt": "project(fp LANGUAGES CUDA CXX)\nadd_library(fp SHARED lib.cu)\n",
    "lib.cu": '#include "shared/helper.h"\n',
    "csrc/fp4_recipe/quantize.cu": TMA_KERNEL.format(name="quantize"),
    "csrc/fp4_recipe/dequantize.cuh": TMA_KERNEL.format(name="dequantize"),
    "csrc/fp4_recipe/utils.cuh": "// helpers only the recipe includes\n",
    "csrc/mixed/tma_cast.cu": TMA_KERNEL.format(name="tma_cast"),
    "csrc/mixed/plain_cast.cu": PLAIN_KERNEL,
    "csrc/shared/a.cu": TMA_KERNEL.format(name="a"),
    "csrc/shared/b.cu": TMA_KERNEL.format(name="b"),
    "csrc/shared/helper.h": HELPER,
}


def test_a_folder_of_tma_kernels_is_one_nvidia_only_component(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, FILES))
    (recipe,) = [c for c in model.components if c.path == "csrc/fp4_recipe"]
    assert recipe.status is ComponentStatus.NVIDIA_ONLY
    (evidence,) = recipe.evidence
    assert (evidence.path, evidence.line) == ("csrc/fp4_recipe/quantize.cu", 2)
    assert "CUtensorMap" in evidence.what
    # a plain kernel beside, or a helper the rest of the project includes: not a component
    assert model.component_of("csrc/mixed/tma_cast.cu") is None
    assert model.component_of("csrc/shared/a.cu") is None


def test_the_folder_folds_into_one_line_and_the_rest_stays(tmp_path: Path) -> None:
    result = scan_path(write(tmp_path, FILES), ScanOptions())
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    (line,) = [f for f in result.findings if f.rule_id == "GP601"]
    assert line.message.startswith("csrc/fp4_recipe/ is NVIDIA-only: its kernels are written")
    assert "exclude its kernels there" in line.fix.text
    assert not any(p.startswith("csrc/fp4_recipe/") for r, p in listed if r != "GP601")
    assert any(f.location.path.startswith("csrc/fp4_recipe/") for f in result.set_aside)
    # still reported: the TMA kernel beside a plain one, and the shared folder's kernels (under
    # GP309's one line for the project's Hopper-or-newer uses, with the originals set aside)
    hopper = {
        f.location.path for f in [*result.findings, *result.set_aside] if f.rule_id == "GP309"
    }
    assert {"csrc/mixed/tma_cast.cu", "csrc/shared/a.cu"} <= hopper


def test_a_project_with_a_rocm_path_leaves_the_decision_to_its_build(tmp_path: Path) -> None:
    files = {
        **FILES,
        "setup.py": "import torch\nIS_ROCM = torch.version.hip is not None\n"
        "if IS_ROCM:\n    srcs = ['csrc/ck/a.cpp']\nelse:\n    srcs = ['lib.cu']\n",
        "csrc/ck/a.cpp": "",
    }
    model = build_model(write(tmp_path, files))
    assert model.component_of("csrc/fp4_recipe/quantize.cu") is None
