"""GP300 renames that torch's hipify does itself, in a project built through cpp_extension."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "project"


def test_the_fixture_sets_aside_the_renames_torch_hipifies() -> None:
    root = FIXTURES / "torch_hipify"
    result = scan_path(root, ScanOptions(jobs=1), display_root=root.name)
    assert not result.skipped
    for rel in (
        "setup.py",
        "csrc/scale.cu",
        "csrc/ops.h",
        "native/copy.cu",
        "native/CMakeLists.txt",
    ):
        listed = [f for f in result.findings if f.location.path == rel]
        check_findings((root / rel).read_text(encoding="utf-8"), listed, rel)
    # the renames in csrc/ are kept, set aside, one per file; nothing else is set aside
    assert sorted((f.rule_id, f.location.path) for f in result.set_aside) == [
        ("GP300", "csrc/ops.h"),
        ("GP300", "csrc/scale.cu"),
    ]
    assert result.project is not None
    (evidence,) = result.project.torch_hipify
    assert (evidence.path, evidence.line) == ("setup.py", 5)
    assert result.project.native_cuda_dirs == ("native",)


def test_cpp_extension_and_cmake_at_the_root(tmp_path: Path) -> None:
    # CppExtension does not hipify; a root CMakeLists compiling CUDA covers every folder.
    cpp_only = build_model(
        write(
            tmp_path / "a",
            {
                "setup.py": "from torch.utils.cpp_extension import CppExtension\nCppExtension('x', [])\n"
            },
        )
    )
    assert cpp_only.torch_hipify == () and not cpp_only.hipified_by_torch("csrc/a.cu")
    both = build_model(
        write(
            tmp_path / "b",
            {
                "setup.py": "# CUDAExtension in a comment only\nfrom torch.utils.cpp_extension import load\n",
                "CMakeLists.txt": "project(b)\nenable_language(CUDA)\n",
            },
        )
    )
    assert [e.line for e in both.torch_hipify] == [2]
    assert both.native_cuda_dirs == ("",) and not both.hipified_by_torch("csrc/a.cu")
    jit = build_model(
        write(
            tmp_path / "c",
            {
                "setup.py": "import torch.utils.cpp_extension as ce\n"
                "ext = torch.utils.cpp_extension.load(name='x', sources=s)\n"
            },
        )
    )
    assert [e.line for e in jit.torch_hipify] == [2] and jit.hipified_by_torch("x/a.cu")


def test_without_a_torch_build_the_renames_stay(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='p')\n",
            "csrc/a.cu": "#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n",
        },
    )
    result = scan_path(root, ScanOptions(jobs=1), display_root="p")
    assert [f.rule_id for f in result.findings if f.location.path == "csrc/a.cu"] == ["GP300"]
    assert not result.set_aside
