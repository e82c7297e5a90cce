"""An extension built only when asked, on an NVIDIA library with no ROCm build, is one GP601 line."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

# A project with no ROCm path (apex's shape): three extensions behind command-line flags, one
# on cuDNN's C++ frontend (its graph API has no ROCm build), one plain CUDA (a port may want it
# on ROCm: its findings stay), and one on the frontend but always built (its findings stay).
SETUP = (
    "import sys\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "ext = []\n"
    "if '--graph_norm' in sys.argv:\n"
    "    ext.append(CUDAExtension('graph_norm', sources=['csrc/graph_norm/norm.cpp'],\n"
    "        include_dirs=['third_party/cudnn-frontend/include']))\n"
    "if '--fast_softmax' in sys.argv:\n"
    "    ext.append(CUDAExtension('fast_softmax', sources=['csrc/softmax/softmax.cu']))\n"
    "ext.append(CUDAExtension('conv', sources=['csrc/conv/conv.cpp'],\n"
    "    include_dirs=['third_party/cudnn-frontend/include']))\n"
    "setup(name='pkg', packages=['pkg'], ext_modules=ext)\n"
)
GRAPH = "#include <cudnn_frontend.h>\nvoid norm() { cudnnHandle_t h; (void)h; }\n"
FILES = {
    "setup.py": SETUP,
    "pkg/__init__.py": "",
    "csrc/graph_norm/norm.cpp": GRAPH,
    "csrc/softmax/softmax.cu": "__global__ void k(float* x) { x[threadIdx.x % 32] = 0.f; }\n",
    "csrc/conv/conv.cpp": GRAPH,
}


def test_only_the_opt_in_extension_on_the_nvidia_library_is_a_component(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, FILES))
    assert [c.path for c in model.components] == ["csrc/graph_norm"]
    (evidence,) = model.components[0].evidence
    assert (evidence.path, evidence.line) == ("setup.py", 6)
    assert "if '--graph_norm' in sys.argv" in evidence.what and "cudnn-frontend" in evidence.what


def test_its_findings_fold_and_the_others_stay(tmp_path: Path) -> None:
    result = scan_path(write(tmp_path, FILES), ScanOptions())
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    (line,) = [f for f in result.findings if f.rule_id == "GP601"]
    assert line.message.startswith("csrc/graph_norm/ is NVIDIA-only: an opt-in part")
    assert not any(p.startswith("csrc/graph_norm/") for _r, p in listed)
    assert ("GP314", "csrc/conv/conv.cpp") in listed
