"""`gpuport scan --fail-on` counts product code only, unless --all-tiers."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpuport.cli import main

# warp_sum: a lane exchange, so the 32-lane arithmetic is GP302 work (scan/kernels/lane_groups.py)
KERNEL = "__global__ void k(float* x) {\n  int lane = threadIdx.x & 31;\n  x[lane] = warp_sum(x[0]);\n}\n"


def scan_exit(root: Path, *flags: str) -> int:
    args = ["scan", str(root), "--format", "json", "--no-progress", "--fail-on", "medium", *flags]
    return CliRunner().invoke(main, args).exit_code


def test_findings_in_tests_only_do_not_fail_the_scan_unless_all_tiers(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "k.cu").write_text(KERNEL)
    assert scan_exit(tmp_path) == 0
    assert scan_exit(tmp_path, "--all-tiers") == 1


def test_findings_in_product_code_fail_the_scan(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "k.cu").write_text(KERNEL)
    assert scan_exit(tmp_path) == 1
