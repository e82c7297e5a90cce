"""Sub-packages whose own setup.py builds with nvcc whatever the build are NVIDIA-only."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from gpuport.scan.engine import ScanOptions, scan_path
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


# apex's pattern: no ROCm path; an opt-in group norm whose v2 extension is built only for
# Hopper and Blackwell (its arch flags set in two branches of a toolkit-version test).
NEWER_GPU_SETUP = (
    "import glob\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "ext_modules = [CUDAExtension('gn_cuda', sources=['csrc/gn/gn.cu'],\n"
    "    extra_compile_args={'nvcc': ['-gencode=arch=compute_80,code=sm_80']})]\n"
    "if toolkit >= (12, 8):\n"
    "    arch_flags = ['-gencode=arch=compute_90,code=sm_90',\n"
    "                  '-gencode=arch=compute_100a,code=sm_100a']\n"
    "else:\n"
    "    arch_flags = ['-gencode=arch=compute_90,code=compute_90']\n"
    "ext_modules.append(\n"
    "    CUDAExtension(\n"
    "        name='gn_v2_cuda',\n"
    "        sources=['csrc/gn_v2/gn.cpp'] + glob.glob('csrc/gn_v2/gn_inst_*.cu'),\n"
    "        extra_compile_args={'cxx': ['-O2'], 'nvcc': ['-O2'] + arch_flags},\n"
    "    )\n"
    ")\n"
    "setup(name='gn', ext_modules=ext_modules)\n"
)
CLUSTER_KERNEL = (
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "__global__ void __cluster_dims__(2, 1, 1) gn(float* x) {\n"
    "  cg::this_cluster().sync();\n"
    "  x[threadIdx.x] *= 2.0f;\n"
    "}\n"
)


def test_an_extension_built_only_for_hopper_and_newer_is_folded(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "setup.py": NEWER_GPU_SETUP,
            "csrc/gn/gn.cu": "",
            "csrc/gn_v2/gn.cpp": "",
            "csrc/gn_v2/gn_inst_1.cu": CLUSTER_KERNEL,
        },
    )
    model = build_model(root)
    assert not model.supports_rocm
    (component,) = model.components
    assert component.path == "csrc/gn_v2" and component.rocm_alternative == ""
    assert (component.evidence[0].path, component.evidence[0].line) == ("setup.py", 12)
    assert "sm_90, sm_100" in component.evidence[0].what
    result = scan_path(root, ScanOptions(jobs=1))
    (line,) = [f for f in result.findings if f.rule_id == "GP601"]
    assert line.message.startswith("csrc/gn_v2/ is NVIDIA-only: the build targets only newer")
    assert "no ROCm alternative" in line.message and "GP310" in line.message
    assert not any(f.location.path.startswith("csrc/gn_v2/") for f in result.findings)
    assert any(f.location.path.startswith("csrc/gn_v2/") for f in result.set_aside)


def test_an_extension_with_one_older_target_or_shared_sources_stays(tmp_path: Path) -> None:
    older = NEWER_GPU_SETUP.replace("compute_90,code=compute_90", "compute_80,code=sm_80")
    files = {"setup.py": older, "csrc/gn_v2/gn.cpp": ""}
    assert build_model(write(tmp_path / "a", files)).components == ()
    # another extension compiles the same folder for every GPU
    shared = NEWER_GPU_SETUP.replace("'csrc/gn/gn.cu'", "'csrc/gn_v2/common.cu'")
    files = {"setup.py": shared, "csrc/gn_v2/gn.cpp": ""}
    assert build_model(write(tmp_path / "b", files)).components == ()
