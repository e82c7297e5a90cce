"""Features a port drops as a whole, reported once: a file whose every kernel is compiled only
for Blackwell (GP330), and the header of a cuDNN-graph file's entry points (GP314)."""

from __future__ import annotations

from pathlib import Path

from gpuport.findings import Category, Confidence, Finding, Location, Severity
from gpuport.project.model import ProjectModel
from gpuport.project.triage import triage
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BLACKWELL = FIXTURES / "kernels" / "GP330-blackwell-only-kernel"
ENTRY_HEADER = FIXTURES / "project" / "cudnn_entry_header"


def _finding(rule_id: str, path: str, line: int, message: str) -> Finding:
    return Finding(
        rule_id, message, Location(path, line), Severity.MEDIUM, Confidence.HIGH, Category.KERNELS
    )


def test_a_file_of_blackwell_only_kernels_is_one_line_and_a_mixed_file_keeps_its_findings() -> None:
    result = scan_path(BLACKWELL, ScanOptions(jobs=1), display_root=BLACKWELL.name)
    shown = [f for f in result.findings if f.location.path == "sm100_only_kernels.cu"]
    assert [f.rule_id for f in shown] == ["GP330"]
    assert "compiled only for Blackwell" in shown[0].message
    assert "other finding(s) in this file set aside (GP300 x1, GP324 x1)" in shown[0].message
    aside = {(f.rule_id, f.location.path) for f in result.set_aside}
    assert {("GP300", "sm100_only_kernels.cu"), ("GP324", "sm100_only_kernels.cu")} <= aside
    # negatives: a portable kernel beside, an exported helper, a Hopper guard
    for path in (
        "sm100_beside_portable.cu",
        "sm100_beside_empty_kernel.cu",
        "sm100_kernel_with_exported_helper.cuh",
        "sm90_only_kernels.cu",
        "sm90_ampere_barrier_only.cu",
    ):
        rules = {f.rule_id for f in result.findings if f.location.path == path}
        assert "GP324" in rules and "GP330" not in rules, path


def test_a_file_of_hopper_only_tma_kernels_is_one_line_and_a_fallback_keeps_its_findings() -> None:
    result = scan_path(BLACKWELL, ScanOptions(jobs=1), display_root=BLACKWELL.name)
    path = "sm90_tma_only_kernels.cu"
    (line,) = [f for f in result.findings if f.location.path == path]
    assert line.rule_id == "GP330"
    assert "compiled only for Hopper and newer NVIDIA GPUs (sm_90+)" in line.message
    assert "`mbarrier.arrive.expect_tx.shared::cta.b64` PTX" in line.message
    assert "other finding(s) in this file set aside (GP300 x1, GP309 x2, GP324 x1)" in line.message
    aside = sorted(f.rule_id for f in result.set_aside if f.location.path == path)
    assert aside == ["GP300", "GP309", "GP309", "GP324"]
    # negative: a portable #else beside the TMA path keeps the file's findings listed
    kept = {f.rule_id for f in result.findings if f.location.path == "sm90_tma_with_fallback.cu"}
    assert "GP330" not in kept and {"GP300", "GP309"} <= kept


def test_a_header_that_only_declares_a_graph_files_entry_points_folds_under_its_line() -> None:
    result = scan_path(ENTRY_HEADER, ScanOptions(jobs=1), display_root=ENTRY_HEADER.name)
    shown = {(f.rule_id, f.location.path) for f in result.findings}
    aside = {(f.rule_id, f.location.path) for f in result.set_aside}
    assert ("GP314", "src/softmax_graph.h") in aside
    (head,) = [f for f in result.findings if f.location.path == "src/softmax_graph.cu"]
    assert "softmax_graph.h only declares this file's entry points" in head.message
    # negative: a header with cuDNN work of its own keeps its line
    assert {("GP314", "src/pool_graph.h"), ("GP314", "src/pool_graph.cu")} <= shown


def test_the_header_fold_needs_the_same_stem_and_a_graph_source() -> None:
    model = ProjectModel(name="p")
    enabled = frozenset({"GP314"})
    graph = _finding(
        "GP314", "a/attn.cu", 3, "cuDNN in this file: 9 references (cudnn_frontend x6)"
    )
    legacy = _finding(
        "GP314", "a/attn.cu", 3, "cuDNN in this file: 9 references (cudnnTensorDescriptor_t x9)"
    )
    header = "cuDNN in this file: 2 references (cudnnHandle_t x2); MIOpen is the counterpart"
    kept, aside = triage([graph, _finding("GP314", "a/attn.h", 5, header)], model, enabled)
    assert [f.location.path for f in aside] == ["a/attn.h"] and len(kept) == 1
    for head, other in ((graph, "a/other.h"), (graph, "b/attn.h"), (legacy, "a/attn.h")):
        kept, aside = triage([head, _finding("GP314", other, 5, header)], model, enabled)
        assert not aside and len(kept) == 2


def _target(path: str, line: int, target: str, counterpart: str) -> Finding:
    message = f"{target} is a CUDA toolkit target; ROCm's counterpart is {counterpart}"
    return _finding("GP505", path, line, message)


def test_cuda_targets_with_one_rocm_counterpart_fold_per_build_file() -> None:
    runtime = "HIP runtime (driver and runtime APIs in one library, amdhip64)"
    findings = [
        _target("CMakeLists.txt", 10, "CUDA::cublas", "hipBLAS"),
        _target("CMakeLists.txt", 11, "CUDA::cudart", runtime),
        _target("CMakeLists.txt", 40, "CUDA::cuda_driver", runtime + " (and 1 more on this line)"),
        _target("tests/CMakeLists.txt", 5, "CUDA::cudart", runtime),
    ]
    kept, aside = triage(findings, ProjectModel(name="p"), frozenset({"GP505"}))
    assert [(f.location.path, f.location.line) for f in aside] == [("CMakeLists.txt", 40)]
    shown = {(f.location.path, f.location.line): f.message for f in kept}
    assert set(shown) == {
        ("CMakeLists.txt", 10),
        ("CMakeLists.txt", 11),
        ("tests/CMakeLists.txt", 5),
    }
    assert "1 more link(s) in this file" in shown[("CMakeLists.txt", 11)]
    assert "CUDA::cuda_driver line 40" in shown[("CMakeLists.txt", 11)]
    # negative: a target with another counterpart, and another file, keep their lines
    assert "set aside" not in shown[("CMakeLists.txt", 10)]
    assert "set aside" not in shown[("tests/CMakeLists.txt", 5)]


def test_a_cutlass_source_and_its_header_are_one_line() -> None:
    def cutlass(path: str, n: int) -> Finding:
        return _finding(
            "GP312", path, 3, f"CUTLASS/CuTe in this file: {n} references (cutlass::gemm)"
        )

    model, enabled = ProjectModel(name="p"), frozenset({"GP312"})
    kept, aside = triage([cutlass("g/gemm.cu", 8), cutlass("g/gemm.cuh", 40)], model, enabled)
    assert [f.location.path for f in aside] == ["g/gemm.cu"]
    (head,) = kept
    assert head.location.path == "g/gemm.cuh" and "gemm.cu (GP312, line 3)" in head.message
    # negative: other stems, or another folder, keep both lines
    for pair in (("g/gemm.cu", "g/attn.cuh"), ("g/gemm.cu", "h/gemm.cuh")):
        kept, aside = triage([cutlass(pair[0], 8), cutlass(pair[1], 40)], model, enabled)
        assert not aside and len(kept) == 2
