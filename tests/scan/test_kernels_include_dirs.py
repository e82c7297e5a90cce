"""Constants from headers found through the project's include folders (issue 9)."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path

# DeepSpeed's layout: kernels in csrc/<op>/ include "inference_cuda_layers.h" and
# "custom_cuda_layers.h", which live in include folders the op builders put on the path.
SOFTMAX = (
    "#include <cooperative_groups.h>\n"
    '#include "{header}"\n'
    "namespace cg = cooperative_groups;\n"
    "__global__ void softmax(float* x) {{\n"
    "  cg::thread_block b = cg::this_thread_block();\n"
    "  cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b);\n"
    "  int wid = threadIdx.x >> 5;\n"
    "  int lane = threadIdx.x & 0x1f;\n"
    "  float v = g.shfl_xor(x[threadIdx.x], 1);\n"
    "  if (lane == 0) x[wid] = v;\n"
    "}}\n"
)


def _gp302(root: Path) -> list[tuple[str, int]]:
    result = scan_path(root, ScanOptions(jobs=1))
    return sorted(
        (f.location.path, f.location.line) for f in result.findings if f.rule_id == "GP302"
    )


def test_tile_width_from_a_header_in_an_include_folder(tmp_path: Path) -> None:
    inc = tmp_path / "csrc" / "transformer" / "includes"
    inc.mkdir(parents=True)
    (inc / "inference_cuda_layers.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    # two levels: custom_cuda_layers.h includes context.h, which defines it
    common = tmp_path / "csrc" / "includes"
    common.mkdir()
    (common / "custom_cuda_layers.h").write_text('#pragma once\n#include "context.h"\n')
    (common / "context.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
    # a tile of 64 on AMD: the lane math is reported
    wide = tmp_path / "csrc" / "wide" / "includes"
    wide.mkdir(parents=True)
    (wide / "wide.h").write_text("#pragma once\n#define WARP_SIZE 64\n")
    for folder, header in (
        ("csrc/transformer/csrc", "inference_cuda_layers.h"),
        ("csrc/lamb", "custom_cuda_layers.h"),
        ("csrc/wide", "wide.h"),
    ):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "softmax.cu").write_text(SOFTMAX.format(header=header))
    model = build_model(tmp_path)
    assert model.facts.include_dirs == (
        "csrc/includes",
        "csrc/transformer/includes",
        "csrc/wide/includes",
    )
    assert _gp302(tmp_path) == [("csrc/wide/softmax.cu", 7), ("csrc/wide/softmax.cu", 8)]


def test_include_folders_a_build_file_names(tmp_path: Path) -> None:
    (tmp_path / "kernels" / "common").mkdir(parents=True)
    (tmp_path / "kernels" / "common" / "width.h").write_text("#define WARP_SIZE 32\n")
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / "width.h").write_text("#define WARP_SIZE 32\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(k LANGUAGES CXX CUDA)\n"
        "include_directories(${CMAKE_CURRENT_SOURCE_DIR}/kernels/common)\n"
        "add_library(k kernels/softmax.cu)\n"
    )
    (tmp_path / "kernels" / "softmax.cu").write_text(SOFTMAX.format(header="width.h"))
    # only the folder the build names is on the include path, not any folder with headers
    assert build_model(tmp_path).facts.include_dirs == ("kernels/common",)
    assert _gp302(tmp_path) == []
    # a header no include folder holds is not found: the lane math is reported
    (tmp_path / "CMakeLists.txt").write_text("add_library(k kernels/softmax.cu)\n")
    assert build_model(tmp_path).facts.include_dirs == ()
    assert _gp302(tmp_path) == [("kernels/softmax.cu", 7), ("kernels/softmax.cu", 8)]
