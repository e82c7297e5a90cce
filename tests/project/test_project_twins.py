"""A Python module written for an NVIDIA-only kernel DSL beside its AMD twin of the same name
(torchao's cutedsl_quantize_3d.py and flydsl_quantize_3d.py) is an NVIDIA-only component."""

from __future__ import annotations

from pathlib import Path

import pytest

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.project.twins import amd_twin
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "amd_twins"


def test_the_fixture_folds_the_cute_dsl_twin_and_lists_the_kernel_without_one() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    assert result.project is not None and result.project.supports_rocm
    for name in ("cutedsl_rowquant.py", "cutedsl_colquant.py", "flydsl_rowquant.py"):
        rel = f"twinpkg/kernels/{name}"
        text = (FIXTURE / rel).read_text(encoding="utf-8")
        check_findings(text, [f for f in result.findings if f.location.path == rel], rel)
    (fold,) = [f for f in result.findings if f.rule_id == "GP601"]
    assert "flydsl_rowquant.py" in fold.message and "FlyDSL" in fold.message
    assert "runs its AMD twin instead" in fold.message
    assert [(f.rule_id, f.location.path) for f in result.set_aside] == [
        ("GP201", "twinpkg/kernels/cutedsl_rowquant.py")
    ]


@pytest.mark.parametrize(
    ("name", "siblings", "twin"),
    [
        ("cutedsl_gemm.py", {"flydsl_gemm.py"}, "flydsl_gemm.py"),
        ("attn_cuda.py", {"attn_hip.py", "attn_rocm.py"}, "attn_hip.py"),
        ("cute_utils.py", {"ck_utils.py"}, "ck_utils.py"),
        ("cute_utils.py", {"flydsl_utils.py"}, None),  # another kind of thing: no twin
        ("gemm_cutlass_sm90.py", {"gemm_aiter_sm90.py"}, "gemm_aiter_sm90.py"),
        ("gemm_cuda_sm90.py", {"gemm_aiter_sm90.py"}, None),  # a platform is no library
        # a plain module beside a ROCm one may be the ROCm build's too: no twin
        ("attention.py", {"attention_rocm.py"}, None),
        # a name part that only contains an NVIDIA word is not one
        ("cudagraph_utils.py", {"hipgraph_utils.py"}, None),
        ("cutedsl_gemm.py", {"flydsl_norm.py"}, None),
        ("cutedsl_gemm.cu", {"flydsl_gemm.cu"}, None),  # Python modules only
    ],
)
def test_amd_twin(name: str, siblings: set[str], twin: str | None) -> None:
    assert amd_twin(name, siblings) == twin


def test_no_twin_component_without_a_rocm_path_or_in_tests(tmp_path: Path) -> None:
    kernel = "import cutlass.cute as cute\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/cutedsl_k.py": kernel,
        "pkg/flydsl_k.py": "import flydsl\n",
        "tests/cutedsl_k.py": kernel,
        "tests/flydsl_k.py": "",
    }
    assert build_model(write(tmp_path / "a", files)).components == ()
    files["setup.py"] = "import torch\nIS_ROCM = torch.version.hip\n"
    model = build_model(write(tmp_path / "b", files))
    assert [c.path for c in model.components] == ["pkg/cutedsl_k.py"]


def test_a_twin_with_no_finding_gets_no_line(tmp_path: Path) -> None:
    files = {
        "setup.py": "import torch\nIS_ROCM = torch.version.hip\n",
        "pkg/__init__.py": "",
        "pkg/norm_cuda.py": "def norm(x):\n    return x\n",
        "pkg/norm_hip.py": "def norm(x):\n    return x\n",
    }
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1), display_root="p")
    assert result.project is not None
    assert [c.path for c in result.project.components] == ["pkg/norm_cuda.py"]
    assert "GP601" not in {f.rule_id for f in result.findings}
