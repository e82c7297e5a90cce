"""Imports of a package whose ROCm build must be installed are set aside under the dependency
finding that already names it: one install decision, not one finding per importing file."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "rocm_build_imports"


def test_the_fixture_sets_the_tilelang_imports_aside_under_its_dependency_line() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    for rel in ("pyproject.toml", "tlpkg/step.py", "tlpkg/kernels/mimo_fwd.py"):
        text = (FIXTURE / rel).read_text(encoding="utf-8")
        if rel.endswith("mimo_fwd.py"):
            assert not [f for f in result.findings if f.location.path == rel]
            continue
        check_findings(text, [f for f in result.findings if f.location.path == rel], rel)
    assert sorted((f.rule_id, f.location.path) for f in result.set_aside) == [
        ("GP201", "tlpkg/kernels/mimo_bwd.py"),
        ("GP201", "tlpkg/kernels/mimo_fwd.py"),
    ]
    (head,) = [f for f in result.findings if f.rule_id == "GP107"]
    assert "2 import finding(s) of tilelang in 2 file(s) set aside" in head.message


def test_imports_stay_when_only_a_test_requirement_names_the_package(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/k.py": "import tilelang\n",
        "tests/requirements.txt": "tilelang==0.1.8\n",
    }
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1), display_root="p")
    assert ("GP201", "pkg/k.py") in {(f.rule_id, f.location.path) for f in result.findings}
    assert not result.set_aside
