"""A module importing, at its top, an extension only the project's CUDA build compiles joins that
extension's NVIDIA-only component: on ROCm it fails at its first line."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "extension_imports"


def test_the_module_importing_a_cuda_only_extension_joins_its_component() -> None:
    model = build_model(FIXTURE)
    component = model.component_of("attn/ops/fused_mm.py")
    assert component is not None and component.path == "csrc/fused_mm"
    assert component.files == ("attn/ops/fused_mm.py",)
    (joined,) = [e for e in component.evidence if e.path == "attn/ops/fused_mm.py"]
    assert joined.line == 5 and "fused_mm_lib" in joined.what
    # a guarded import, and the extension the ROCm branch builds too, join nothing
    assert model.component_of("attn/ops/maybe_fused.py") is None
    assert model.component_of("attn/ops/attention.py") is None


def test_its_findings_fold_into_the_extensions_line() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    assert ("GP202", "attn/ops/fused_mm.py") in {
        (f.rule_id, f.location.path) for f in result.set_aside
    }
    assert not [f for f in result.findings if f.location.path == "attn/ops/fused_mm.py"]
    (line,) = [
        f
        for f in result.findings
        if f.rule_id == "GP601" and f.location.path == "csrc/fused_mm/setup.py"
    ]
    assert "attn/ops/fused_mm.py:5" in line.message
    for rel in ("attn/ops/maybe_fused.py", "attn/ops/attention.py"):
        text = (FIXTURE / rel).read_text(encoding="utf-8")
        check_findings(text, [f for f in result.findings if f.location.path == rel], rel)
