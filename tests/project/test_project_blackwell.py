"""A file GP330 calls a Blackwell-only kernel is one decision: its other findings set aside."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from gpuport.scan.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kernels"


def test_a_blackwell_file_keeps_one_line_and_sets_the_rest_aside() -> None:
    root = FIXTURES / "GP330-blackwell-only-kernel"
    result = scan_path(root, ScanOptions(jobs=1), display_root=root.name)
    # the files of a tensor-memory design (the folder's sm100_* files: test_project_archfeat.py)
    originals = {"umma_gemm.cu", "tcgen05_fence.cu", "arch_test_only.cu"}
    listed = Counter(
        (f.location.path, f.rule_id) for f in result.findings if f.location.path in originals
    )
    assert listed == {
        ("umma_gemm.cu", "GP330"): 1,
        ("tcgen05_fence.cu", "GP330"): 1,
        ("arch_test_only.cu", "GP324"): 3,  # no GP330 there: nothing set aside
    }
    aside = sorted(
        (f.location.path, f.location.line, f.rule_id)
        for f in result.set_aside
        if f.location.path in originals
    )
    assert aside == [
        ("tcgen05_fence.cu", 6, "GP309"),
        ("tcgen05_fence.cu", 11, "GP309"),
        ("umma_gemm.cu", 6, "GP312"),
        ("umma_gemm.cu", 17, "GP309"),
    ]
    (umma,) = [f for f in result.findings if f.location.path == "umma_gemm.cu"]
    assert umma.message.endswith("; 2 other finding(s) in this file set aside (GP309 x1, GP312 x1)")


def test_the_fold_is_off_when_gp330_is_ignored() -> None:
    root = FIXTURES / "GP330-blackwell-only-kernel"
    options = ScanOptions(jobs=1, ignore=frozenset({"GP330"}))
    result = scan_path(root, options, display_root=root.name)
    # GP309's own fold (Hopper-or-newer uses of two files, one line) still applies
    assert not [f for f in result.set_aside if f.rule_id != "GP309"]
    assert ("umma_gemm.cu", "GP312") in {(f.location.path, f.rule_id) for f in result.findings}
