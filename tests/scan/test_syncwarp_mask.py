"""GP320 says when a __syncwarp mask is 32-bit: HIP's masked __syncwarp takes only 64 bits."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan.engine import ScanOptions, scan_path

KERNEL = (
    "#include <cstdint>\n"
    "__global__ void k(float* s) {\n"
    "  uint32_t narrow = (1u << (blockDim.x / 32)) - 1;\n"
    "  uint64_t wide = (1ull << (blockDim.x / 32)) - 1;\n"
    "  if (threadIdx.x < blockDim.x / 32) {\n"
    "    __syncwarp(narrow);\n"
    "    __syncwarp(wide);\n"
    "    __syncwarp(0xffffull >> 4);\n"
    "  }\n"
    "}\n"
)


def test_a_32_bit_mask_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    result = scan_path(tmp_path, ScanOptions())
    by_line = {f.location.line: f.message for f in result.findings if f.rule_id == "GP320"}
    assert "static_asserts a 64-bit one (declare it uint64_t)" in by_line[6]
    assert "32-bit" not in by_line[7] and "32-bit" not in by_line[8]
