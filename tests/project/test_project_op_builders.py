"""Components read from op-builder classes (DeepSpeed's op_builder/ pattern): per op, whether the
ROCm build compiles its sources."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

BUILDER = """\
import os
class OpBuilder:
    @staticmethod
    def is_rocm_pytorch():
        import torch
        return torch.version.hip is not None
    def hipify_extension(self):
        pass
class CUDAOpBuilder(OpBuilder):
    pass
"""
FUSED = """\
from .builder import CUDAOpBuilder
class FusedAdamBuilder(CUDAOpBuilder):
    NAME = "fused_adam"
    def sources(self):
        return ['csrc/adam/fused_adam_frontend.cpp', 'csrc/adam/multi_tensor_adam.cu']
"""
STORAGE = """\
from .builder import CUDAOpBuilder
class StorageBuilder(CUDAOpBuilder):
    NAME = "storage"
    def sources(self):
        return ['csrc/storage/py_lib/handle.cpp']
    def is_compatible(self, verbose=False):
        if self.is_rocm_pytorch():
            if verbose:
                self.warning("not compatible with ROCm")
            return False
        if not self.is_rocm_pytorch():
            return True
        return True
"""
ATTENTION = """\
import os
from .builder import CUDAOpBuilder
class BigAttnBuilder(CUDAOpBuilder):
    NAME = "big_attn"
    def __init__(self):
        self.cutlass_path = os.environ.get('CUTLASS_PATH')
    def sources(self):
        src_dir = 'csrc/science/big_attn'
        return [f'{src_dir}/attention.cpp', f'{src_dir}/attention_cu.cu']
    def is_compatible(self, verbose=False):
        if self.cutlass_path is None:
            return False
        return True
"""
PREBUILT = """\
import os
from .builder import CUDAOpBuilder
class RaggedBuilder(CUDAOpBuilder):
    NAME = "ragged"
    def get_prefix(self):
        return "pkg"
    def sources(self):
        sources = ["kernels/ragged/ragged.cpp", "kernels/ragged/top_k.cu"]
        return [os.path.join(self.get_prefix(), s) for s in sources]
    def extra_ldflags(self):
        import dskernels
        return [f'-L{dskernels.library_path()}', '-lblockedflash']
"""
SHARED = """\
from .builder import CUDAOpBuilder
class SharedNvidiaBuilder(CUDAOpBuilder):
    NAME = "shared_nvidia"
    def sources(self):
        return ['csrc/adam/nvidia_only.cu']
    def is_compatible(self, verbose=False):
        if self.is_rocm_pytorch():
            return False
        return True
"""
SETUP = """\
import torch
from setuptools import setup
from op_builder import ALL_OPS
if torch.version.hip:
    print('hipify every op')
setup(name='speedy', packages=['pkg'])
"""


PROJECT = {
    "setup.py": SETUP,
    "pkg/__init__.py": "",
    "op_builder/__init__.py": "",
    "op_builder/builder.py": BUILDER,
    "op_builder/fused_adam.py": FUSED,
    "op_builder/storage.py": STORAGE,
    "op_builder/big_attn.py": ATTENTION,
    "op_builder/ragged.py": PREBUILT,
    "csrc/adam/fused_adam_frontend.cpp": "// op\n",
    "csrc/adam/multi_tensor_adam.cu": "// op\n",
    "csrc/storage/py_lib/handle.cpp": "// op\n",
    "csrc/science/big_attn/attention.cpp": "// op\n",
    "csrc/science/big_attn/attention_cu.cu": "// op\n",
    "pkg/kernels/ragged/ragged.cpp": "// op\n",
    "pkg/kernels/ragged/top_k.cu": "// op\n",
}


def test_each_op_builders_sources_are_classified_with_the_evidence(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, PROJECT))
    assert model.supports_rocm
    found = {c.path: c for c in model.components}
    assert {p: c.status for p, c in found.items()} == {
        "csrc/adam": ComponentStatus.ROCM,
        "csrc/storage/py_lib": ComponentStatus.NVIDIA_ONLY,
        "csrc/science/big_attn": ComponentStatus.NVIDIA_ONLY,
        "pkg/kernels/ragged": ComponentStatus.NVIDIA_ONLY,
    }
    (storage,) = found["csrc/storage/py_lib"].evidence
    assert (storage.path, storage.line) == ("op_builder/storage.py", 7)
    assert "is_compatible returns False on ROCm" in storage.what
    (attention,) = found["csrc/science/big_attn"].evidence
    assert attention.path == "op_builder/big_attn.py" and "CUTLASS (cutlass_path)" in attention.what
    (ragged,) = found["pkg/kernels/ragged"].evidence
    assert (ragged.path, ragged.line) == ("op_builder/ragged.py", 11)
    assert "dskernels" in ragged.what
    assert "not offered on ROCm" in found["csrc/storage/py_lib"].rocm_alternative
    # the op builders were read: no note that they compute what they compile
    assert not any(note.startswith("op_builder/") for note in model.notes)


def test_a_folder_both_kinds_of_op_compile_is_not_a_component(tmp_path: Path) -> None:
    files = dict(PROJECT)
    files["op_builder/shared.py"] = SHARED
    files["csrc/adam/nvidia_only.cu"] = "// op\n"
    model = build_model(write(tmp_path, files))
    assert "csrc/adam" not in {c.path for c in model.components}


def test_a_project_without_a_rocm_path_gets_no_op_components(tmp_path: Path) -> None:
    files = dict(PROJECT)
    files["setup.py"] = "from setuptools import setup\nsetup(name='speedy')\n"
    files["op_builder/builder.py"] = BUILDER.replace("rocm", "other").replace("hip", "x")
    files["op_builder/storage.py"] = STORAGE.replace("rocm", "other")
    model = build_model(write(tmp_path, files))
    assert not model.supports_rocm
    assert model.components == ()


def test_the_nvidia_only_ops_findings_are_folded_in_a_scan(tmp_path: Path) -> None:
    files = dict(PROJECT)
    kernel = "__global__ void k(float* x) {\n  int lane = threadIdx.x & 31;\n  x[lane] = warp_sum(x[0]);\n}\n"
    files["csrc/storage/py_lib/kernel.cu"] = kernel
    files["csrc/adam/kernel.cu"] = kernel
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    assert {f.location.path for f in result.set_aside} == {"csrc/storage/py_lib/kernel.cu"}
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    assert ("GP601", "op_builder/storage.py") in listed
    assert any(path == "csrc/adam/kernel.cu" for _, path in listed)


EXTRAS_SETUP = """\
import torch
from setuptools import setup
from op_builder import ALL_OPS
def fetch_requirements(path):
    return open(path).read().split()
extras_require = {
    'storage': fetch_requirements('requirements/requirements-storage.txt'),
    'fused_adam': fetch_requirements('requirements/requirements-fused_adam.txt'),
    'triton': fetch_requirements('requirements/requirements-triton.txt'),
}
if torch.version.hip:
    print('hipify every op')
setup(name='speedy', packages=['pkg'], extras_require=extras_require)
"""


def test_the_requirements_of_a_refused_ops_extra_fold_into_its_line(tmp_path: Path) -> None:
    """The extra named like an op that refuses ROCm installs what only that op uses: its pins
    join the op's GP601 line. An extra of an op built on ROCm, and one no op is named like,
    keep their findings."""
    files = dict(PROJECT)
    files["setup.py"] = EXTRAS_SETUP
    files["requirements/requirements-storage.txt"] = "triton==1.0.0\n"
    files["requirements/requirements-fused_adam.txt"] = "triton==1.0.0\n"
    files["requirements/requirements-triton.txt"] = "triton==2.1.0\n"
    root = write(tmp_path, files)
    model = build_model(root)
    storage = model.component_of("requirements/requirements-storage.txt")
    assert storage is not None and storage.path == "csrc/storage/py_lib"
    assert (storage.evidence[1].path, storage.evidence[1].line) == ("setup.py", 7)
    assert model.component_of("requirements/requirements-fused_adam.txt") is None
    result = scan_path(root, ScanOptions(jobs=1))
    aside = {(f.rule_id, f.location.path) for f in result.set_aside}
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    assert ("GP112", "requirements/requirements-storage.txt") in aside
    assert ("GP112", "requirements/requirements-fused_adam.txt") in listed
    assert ("GP112", "requirements/requirements-triton.txt") in listed
    (line,) = [f for f in result.findings if f.location.path == "op_builder/storage.py"]
    assert "requirements/requirements-storage.txt" in line.message
    assert "1 finding(s) in it set aside (GP112 x1)" in line.message
