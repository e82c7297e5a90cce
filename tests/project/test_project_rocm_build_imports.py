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


FOLDS = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "import_folds"


def test_guarded_imports_and_an_undeclared_sibling_package_fold_into_one_line_each() -> None:
    result = scan_path(FOLDS, ScanOptions(jobs=1), display_root=FOLDS.name)
    for rel in (
        "pyproject.toml",
        "gpkg/conv.py",
        "gpkg/gather.py",
        "gpkg/kernels/step.py",
        "gpkg/kernels/decode.py",
    ):
        text = (FOLDS / rel).read_text(encoding="utf-8")
        check_findings(text, [f for f in result.findings if f.location.path == rel], rel)
    assert sorted((f.rule_id, f.location.path) for f in result.set_aside) == [
        ("GP201", "gpkg/fused_attn.py"),
        ("GP201", "gpkg/reduce.py"),
    ]
    (dependency,) = [f for f in result.findings if f.rule_id == "GP104"]
    assert "1 guarded import(s) of it set aside" in dependency.message
    assert "gpkg/fused_attn.py:4" in dependency.message
    (sibling,) = [f for f in result.findings if f.location.path == "gpkg/gather.py"]
    assert "1 other import(s) of torch-scatter in 1 other file(s)" in sibling.message
    assert "gpkg/reduce.py:3" in sibling.message


def test_an_undeclared_package_imported_by_one_file_stays_as_it_is(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/k.py": "import torch_scatter\n"}
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1), display_root="p")
    assert ("GP201", "pkg/k.py") in {(f.rule_id, f.location.path) for f in result.findings}
    assert not result.set_aside


def test_a_subpackage_import_folds_under_its_own_pyproject(tmp_path: Path) -> None:
    dep = '[project]\nname = "{}"\nversion = "1"\ndependencies = ["nvidia-cudnn-frontend"]\n'
    guarded = "try:\n    import cudnn\nexcept ImportError:\n    cudnn = None\n"
    files = {
        "pyproject.toml": dep.format("top"),
        "top/__init__.py": "",
        "top/jax/__init__.py": "",
        "top/jax/pyproject.toml": dep.format("top-jax"),
        "top/jax/attn.py": guarded,
    }
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1), display_root="p")
    notes = {f.location.path: f.message for f in result.findings if f.rule_id == "GP104"}
    assert "top/jax/attn.py" in notes["top/jax/pyproject.toml"]
    assert "guarded import" not in notes["pyproject.toml"]
