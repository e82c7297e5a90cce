"""A file built around cuDNN's graph API: its CUDA renames fold under its cuDNN line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpuport.findings import Category, Confidence, Finding, Location, Severity
from gpuport.project.model import ProjectModel
from gpuport.project.triage import triage
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "cudnn_graph"
ENABLED = frozenset({"GP300", "GP314"})


def _finding(rule_id: str, path: str, line: int, message: str) -> Finding:
    return Finding(
        rule_id, message, Location(path, line), Severity.MEDIUM, Confidence.HIGH, Category.KERNELS
    )


def test_the_fixture_folds_the_graph_files_renames_and_keeps_the_mixed_files() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    shown = {(f.rule_id, f.location.path) for f in result.findings}
    aside = {(f.rule_id, f.location.path) for f in result.set_aside}
    assert ("GP300", "src/graph_attn.cu") in aside
    assert ("GP300", "src/graph_attn.cu") not in shown
    (head,) = [f for f in result.findings if f.location.path == "src/graph_attn.cu"]
    assert head.rule_id == "GP314" and "cuDNN-graph code" in head.message
    # negative: a dispatch file whose plain CUDA path uses the runtime keeps its renames
    assert {("GP300", "src/norm_dispatch.cpp"), ("GP314", "src/norm_dispatch.cpp")} <= shown


def test_driver_names_or_more_renames_than_graph_calls_stay() -> None:
    graph = "cuDNN in this file: 9 references (cudnn_frontend x6, cudnnHandle_t x3)"
    head = _finding("GP314", "a.cu", 4, graph)
    runtime = "3 CUDA API references that gpuport port renames to HIP: runtime 3 (cudaStream_t x3)"
    driver = (
        "3 CUDA API references that gpuport port renames to HIP: runtime 1 (cudaStream_t); "
        "driver 2 (cuMemAlloc x2)"
    )
    many = "7 CUDA API references that gpuport port renames to HIP: runtime 7 (cudaStream_t x7)"
    model = ProjectModel(name="p")
    kept, aside = triage([head, _finding("GP300", "a.cu", 2, runtime)], model, ENABLED)
    assert [f.rule_id for f in aside] == ["GP300"] and [f.rule_id for f in kept] == ["GP314"]
    for message in (driver, many):
        kept, aside = triage([head, _finding("GP300", "a.cu", 2, message)], model, ENABLED)
        assert not aside and len(kept) == 2
    # a cuDNN file with no graph API (the legacy C API) keeps its renames
    legacy = replace(head, message="cuDNN in this file: 9 references (cudnnTensorDescriptor_t x9)")
    kept, aside = triage([legacy, _finding("GP300", "a.cu", 2, runtime)], model, ENABLED)
    assert not aside
