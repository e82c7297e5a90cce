"""GP300 renames that torch's hipify does itself, in a project built through cpp_extension."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.findings import Severity
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.kernels.renames import CUDA_API_RENAMES
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
    assert [e.line for e in cpp_only.torch_cpp_only] == [2]
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


_TORCH_EXTENSION_SOURCE = (
    "#include <torch/extension.h>\n#include <cuda_runtime.h>\n"
    "void f() { cudaDeviceSynchronize(); }\n"
)


def test_a_cpp_extension_keeps_its_renames_as_work() -> None:
    # The project builds its torch extension only as CppExtension: torch hipifies nothing, so
    # GP300 in a file with torch's headers is the plain rename finding, saying why.
    root = FIXTURES / "torch_cpp_extension"
    result = scan_path(root, ScanOptions(jobs=1), display_root=root.name)
    rel = "csrc/bind.cpp"
    listed = [f for f in result.findings if f.location.path == rel]
    check_findings((root / rel).read_text(encoding="utf-8"), listed, rel)
    (renames,) = listed
    assert renames.severity is Severity.LOW and renames.fix is not None
    assert renames.fix.text == CUDA_API_RENAMES.fix
    assert "that gpuport port renames to HIP" in renames.message
    assert renames.message.endswith(
        "the project builds this PyTorch extension as a CppExtension (setup.py:11), which torch "
        "does not hipify"
    )
    assert not result.set_aside
    assert result.project is not None and result.project.torch_hipify == ()
    assert [(e.path, e.line) for e in result.project.torch_cpp_only] == [("setup.py", 11)]


def test_a_cuda_extension_or_no_build_keeps_the_hipify_reading(tmp_path: Path) -> None:
    # CUDAExtension beside CppExtension: torch hipifies, the renames are set aside as before.
    cuda = write(
        tmp_path / "cuda",
        {
            "setup.py": "from torch.utils.cpp_extension import CppExtension, CUDAExtension\n"
            "exts = [CppExtension('a', ['a.cpp']), CUDAExtension('b', ['csrc/b.cu'])]\n",
            "csrc/b.cpp": _TORCH_EXTENSION_SOURCE,
        },
    )
    result = scan_path(cuda, ScanOptions(jobs=1), display_root="cuda")
    assert result.project is not None and result.project.torch_cpp_only == ()
    assert not [f for f in result.findings if f.rule_id == "GP300"]
    (aside,) = [f for f in result.set_aside if f.rule_id == "GP300"]
    assert "torch's own hipify renames" in aside.message and aside.severity is Severity.INFO
    # No build file at all: the per-file guess from torch's headers stands.
    bare = write(tmp_path / "bare", {"csrc/b.cpp": _TORCH_EXTENSION_SOURCE})
    result = scan_path(bare, ScanOptions(jobs=1), display_root="bare")
    (kept,) = [f for f in result.findings if f.rule_id == "GP300"]
    assert "torch's own hipify renames" in kept.message and kept.severity is Severity.INFO
