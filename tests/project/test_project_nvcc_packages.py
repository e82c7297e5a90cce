"""Sub-packages whose own setup.py builds with nvcc whatever the build are NVIDIA-only."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from project_tree import write

# The root build picks a CK backend on ROCm (flash-attention's pattern); csrc/fast_norm is a
# separate opt-in package whose setup.py asks nvcc for its version at import.
ROOT_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION\n"
    "if IS_HIP_EXTENSION:\n"
    "    ext = [CUDAExtension('attn', sources=['csrc/attn_ck/api.cpp'])]\n"
    "else:\n"
    "    ext = [CUDAExtension('attn', sources=['csrc/attn/api.cu'])]\n"
    "setup(name='attn', packages=['attn'], ext_modules=ext)\n"
)
NVCC_SETUP = (
    "import subprocess\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME\n"
    "def nvcc_version(cuda_dir):\n"
    "    out = subprocess.check_output([cuda_dir + '/bin/nvcc', '-V'], text=True)\n"
    "    return out.split()[-1]\n"
    "def with_threads(args):\n"
    "    return args + ['--threads', '4'] if nvcc_version(CUDA_HOME) else args\n"
    "setup(\n"
    "    name='fast_norm',\n"
    "    ext_modules=[CUDAExtension('fast_norm', sources=['ln_api.cpp', 'ln_fwd.cu'],\n"
    "        extra_compile_args={'cxx': ['-O3'], 'nvcc': with_threads(['-O3'])})],\n"
    "    cmdclass={'build_ext': BuildExtension})\n"
)
FILES = {
    "setup.py": ROOT_SETUP,
    "attn/__init__.py": "",
    "csrc/attn/api.cu": "",
    "csrc/attn_ck/api.cpp": "",
    "csrc/fast_norm/setup.py": NVCC_SETUP,
    "csrc/fast_norm/ln_fwd.cu": "",
}


def test_a_subpackage_built_with_nvcc_whatever_the_build_is_nvidia_only(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, FILES))
    by_path = {c.path: c for c in model.components}
    assert set(by_path) == {"csrc/attn", "csrc/fast_norm"}
    norm = by_path["csrc/fast_norm"]
    assert norm.status is ComponentStatus.NVIDIA_ONLY
    assert norm.rocm_alternative == "its main build (csrc/attn_ck), which leaves this package out"
    extension, nvcc = norm.evidence
    assert (extension.path, extension.line) == ("csrc/fast_norm/setup.py", 11)
    # setup() calls with_threads, which calls nvcc_version, which runs nvcc
    assert nvcc.line == 12 and "with_threads()" in nvcc.what
    assert model.component_of("csrc/fast_norm/ln_fwd.cu") is norm


def test_nvcc_only_when_asked_or_with_a_rocm_branch_is_not_a_component(tmp_path: Path) -> None:
    guarded = NVCC_SETUP.replace(
        "setup(\n", "import os\nif os.environ.get('NVCC_THREADS'):\n    with_threads([])\nsetup(\n"
    )
    guarded = guarded.replace("with_threads(['-O3'])", "['-O3']")
    files = FILES | {"csrc/fast_norm/setup.py": guarded}
    assert {c.path for c in build_model(write(tmp_path / "a", files)).components} == {"csrc/attn"}
    # the file mentions a HIP build: it is not classified from nvcc alone
    hip = NVCC_SETUP + "# hipcc builds it too\n"
    files = FILES | {"csrc/fast_norm/setup.py": hip}
    assert {c.path for c in build_model(write(tmp_path / "b", files)).components} == {"csrc/attn"}
    # the root build's ROCm branch compiles that folder: it is built for ROCm
    root = ROOT_SETUP.replace(
        "'csrc/attn_ck/api.cpp'", "'csrc/attn_ck/api.cpp', 'csrc/fast_norm/x.cu'"
    )
    files = FILES | {"setup.py": root}
    assert {c.path for c in build_model(write(tmp_path / "c", files)).components} == {"csrc/attn"}
    # without a ROCm path in the project nothing is NVIDIA-only
    files = FILES | {"setup.py": "from setuptools import setup\nsetup(name='attn')\n"}
    del files["csrc/attn_ck/api.cpp"]
    assert build_model(write(tmp_path / "d", files)).components == ()
