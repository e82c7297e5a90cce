"""The project model read from small projects written in the patterns of real ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport.findings import Tier
from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from project_tree import write

# A torch extension whose setup.py picks a CK backend on ROCm and a CUTLASS one on CUDA
# (flash-attention's pattern), builds through torch's hipify, and names gfx targets.
TORCH_EXTENSION = {
    "setup.py": (
        "import glob, os\n"
        "import torch\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION\n"
        "PACKAGE_NAME = 'fast_attn'\n"
        "BUILD_TARGET = os.environ.get('BUILD_TARGET', 'auto')\n"
        "IS_ROCM = IS_HIP_EXTENSION if BUILD_TARGET == 'auto' else BUILD_TARGET == 'rocm'\n"
        "ext = []\n"
        "if not IS_ROCM:\n"
        "    ext.append(CUDAExtension(name='fast_attn_2_cuda',\n"
        "        sources=['csrc/fast_attn/api.cpp'] + glob.glob('csrc/fast_attn/src/*.cu'),\n"
        "        include_dirs=['csrc/cutlass/include']))\n"
        "else:\n"
        "    archs = os.getenv('GPU_ARCHS', 'gfx90a;gfx942').split(';')\n"
        "    flags = [f'--offload-arch={a}' for a in archs] + ['-DCK_FAST=1', '-DUSE_ROCM']\n"
        "    ext.append(CUDAExtension(name='fast_attn_2_cuda',\n"
        "        sources=['csrc/fast_attn_ck/api.cpp'] + glob.glob('build/fmha_*.cu')))\n"
        "setup(name=PACKAGE_NAME, packages=['fast_attn', 'fast_attn.layers'], ext_modules=ext)\n"
    ),
    "fast_attn/__init__.py": "",
    "csrc/fast_attn/api.cpp": "// cuda\n",
    "csrc/fast_attn/src/fwd.cu": "// cuda\n",
    "csrc/fast_attn_ck/api.cpp": "// ck\n",
    "csrc/cutlass/include/cutlass.h": "// vendored\n",
    ".gitmodules": '[submodule "csrc/cutlass"]\n\tpath = csrc/cutlass\n\turl = https://x/cutlass\n',
}


def test_torch_extension_with_a_ck_backend(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, TORCH_EXTENSION))
    assert model.name == "fast_attn"
    assert {"fast_attn", "fast_attn_2_cuda"} <= model.facts.first_party
    assert model.supports_rocm
    assert model.rocm_support[0].path == "setup.py"
    assert model.rocm_support[0].line == 4  # the IS_HIP_EXTENSION import
    # torch's cpp_extension defines USE_ROCM for HIP builds; -DCK_FAST=1 is not a ROCm name
    assert {"USE_ROCM", "__HIP_PLATFORM_AMD__"} <= model.facts.rocm_macros
    assert "CK_FAST" not in model.facts.rocm_macros
    assert model.rocm_archs == ("gfx90a", "gfx942")
    (component,) = model.components
    assert component.path == "csrc/fast_attn"
    assert component.status is ComponentStatus.NVIDIA_ONLY
    assert component.rocm_alternative == "csrc/fast_attn_ck"
    assert component.evidence[0].path == "setup.py" and component.evidence[0].line == 11
    # the submodule is vendored; the CK backend and the CUDA sources are product code
    assert model.tier_of("csrc/cutlass/include/cutlass.h") is Tier.VENDORED
    assert model.tier_of("csrc/fast_attn_ck/api.cpp") is Tier.PRODUCT
    assert model.component_of("csrc/fast_attn/src/fwd.cu") is component
    assert model.component_of("csrc/fast_attn_ck/api.cpp") is None


def test_hipify_only_extension_has_no_nvidia_only_component(tmp_path: Path) -> None:
    # mamba's pattern: the same sources for both builds; ROCm gets extra flags, not other files.
    model = build_model(
        write(
            tmp_path,
            {
                "setup.py": (
                    "import torch\n"
                    "from torch.utils import cpp_extension\n"
                    "HIP_BUILD = bool(torch.version.hip)\n"
                    "flags = ['-O3']\n"
                    "if HIP_BUILD:\n"
                    "    flags += ['-DHIPIFY_V2', '--offload-arch=gfx942']\n"
                    "else:\n"
                    "    flags += ['-lineinfo']\n"
                    "ext = cpp_extension.CUDAExtension('selective_scan_cuda', ['csrc/scan/scan.cpp'])\n"
                ),
                "csrc/scan/scan.cpp": "",
            },
        )
    )
    assert model.supports_rocm
    assert "selective_scan_cuda" in model.facts.first_party
    # torch's cpp_extension, imported as a module, still defines USE_ROCM for HIP builds
    assert model.facts.rocm_macros == {"HIPIFY_V2", "USE_ROCM", "__HIP_PLATFORM_AMD__"}
    assert model.components == ()


def test_cmake_project_with_build_cuda_and_build_hip(tmp_path: Path) -> None:
    cmake = (
        'set(COMPUTE_BACKEND "cpu" CACHE STRING "backend")\n'
        'if(${COMPUTE_BACKEND} STREQUAL "cuda")\n'
        "  set(BUILD_CUDA ON)\n"
        'elseif(${COMPUTE_BACKEND} STREQUAL "hip")\n'
        "  set(BUILD_HIP ON)\n"
        "endif()\n"
        "if(BUILD_CUDA)\n"
        "  enable_language(CUDA)\n"
        "  add_compile_definitions(BUILD_CUDA)\n"
        "elseif(BUILD_HIP)\n"
        "  enable_language(HIP)\n"
        "  add_compile_definitions(__HIP_PLATFORM_AMD__ BUILD_HIP HIP_VERSION_GATE=7)\n"
        '  set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx1100")\n'
        "endif()\n"
    )
    model = build_model(write(tmp_path, {"CMakeLists.txt": cmake}))
    assert [(e.path, e.line) for e in model.rocm_support] == [("CMakeLists.txt", 4)]
    # BUILD_CUDA is no ROCm name; HIP_VERSION_GATE has a value other than 1
    assert model.facts.rocm_macros == frozenset({"__HIP_PLATFORM_AMD__", "BUILD_HIP"})
    assert model.rocm_archs == ("gfx1100", "gfx90a")


HOPPER_SETUP = (
    "import os\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "USE_TRITON_ROCM = os.getenv('FA_TRITON_AMD_ENABLE', 'FALSE') == 'TRUE'\n"
    "SKIP_CUDA_BUILD = os.getenv('FA_SKIP_CUDA_BUILD', 'FALSE') == 'TRUE'\n"
    "if USE_TRITON_ROCM:\n"
    "    SKIP_CUDA_BUILD = True\n"
    "ext = []\n"
    "if not SKIP_CUDA_BUILD:\n"
    "    sources = [f'instantiations/fwd_hdim{d}_sm90.cu' for d in (64, 128)]\n"
    "    sources += ['combine.cu']\n"
    "    ext.append(CUDAExtension('fa3_cuda', sources))\n"
    "setup(name='fa3', ext_modules=ext)\n"
)


def test_hopper_only_package_and_cuda_only_subpackage(tmp_path: Path) -> None:
    files = dict(TORCH_EXTENSION)
    files |= {
        "hopper/setup.py": HOPPER_SETUP,
        "hopper/instantiations/fwd_hdim64_sm90.cu": "",
        "hopper/combine.cu": "",
        "fast_attn/cute/pyproject.toml": (
            '[project]\nname = "fast-attn-cute"\ndependencies = [\n'
            '    "torch",\n    "nvidia-cutlass-dsl>=4.2",\n]\n'
        ),
        "fast_attn/cute/kernel.py": "import cutlass\n",
    }
    model = build_model(write(tmp_path, files))
    by_path = {c.path: c for c in model.components}
    assert set(by_path) == {"csrc/fast_attn", "hopper", "fast_attn/cute"}
    hopper = by_path["hopper"]
    assert hopper.evidence[0].path == "hopper/setup.py"
    assert hopper.evidence[0].line == 10  # the first CUDA-only source
    assert hopper.rocm_alternative == "csrc/fast_attn_ck"  # the project's ROCm backend folder
    cute = by_path["fast_attn/cute"]
    assert cute.evidence[0].path == "fast_attn/cute/pyproject.toml"
    assert cute.evidence[0].line == 5
    assert "nvidia-cutlass-dsl" in cute.evidence[0].what


def test_project_importing_itself(tmp_path: Path) -> None:
    model = build_model(
        write(
            tmp_path,
            {
                "pyproject.toml": '[project]\nname = "My-Quant-Lib"\nversion = "1"\n',
                "src/myquant/__init__.py": "",
                "helpers/__init__.py": "",
                "convert.py": "import myquant\n",
                "setup.py": (
                    "from setuptools import setup, Extension\n"
                    "setup(packages=['myquant', 'myquant.ops'], py_modules=['qutil'],\n"
                    "      ext_modules=[Extension('myquant_ext._C', ['c/x.c'])])\n"
                ),
            },
        )
    )
    assert model.name == "My-Quant-Lib"
    assert model.facts.first_party == frozenset(
        {"my_quant_lib", "myquant", "helpers", "convert", "qutil", "myquant_ext"}
    )
    assert not model.supports_rocm


def test_no_rocm_path_is_strict(tmp_path: Path) -> None:
    # CUDA-only extension; the README mentions AMD in prose only, CI runs on amd64.
    model = build_model(
        write(
            tmp_path,
            {
                "setup.py": (
                    "from torch.utils.cpp_extension import CUDAExtension\n"
                    "# Someday: ROCm. torch.version.hip is not checked here.\n"
                    "ext = CUDAExtension('te_cuda', ['csrc/a.cu'])\n"
                ),
                "csrc/a.cu": "",
                "README.md": "# TE\n\nFaster than anything on AMD or Intel hardware.\n",
                ".github/workflows/build-amd64.yml": "jobs:\n  b:\n    runs-on: ubuntu\n",
            },
        )
    )
    assert model.rocm_support == ()
    assert model.components == ()
    assert model.facts.rocm_macros == frozenset()


def test_rocm_ci_dockerfile_readme_and_hip_sources_are_evidence(tmp_path: Path) -> None:
    model = build_model(
        write(
            tmp_path,
            {
                ".github/workflows/wheels.yml": "jobs:\n  w:\n    container: rocm/dev-ubuntu-22.04\n",
                "Dockerfile_amd": "FROM ubuntu\n",
                "README.md": "# lib\n\n## Installing on AMD GPUs\n\npip install lib\n",
                "kernels/x.hip": "",
            },
        )
    )
    where = {(e.path, e.line) for e in model.rocm_support}
    assert where == {
        (".github/workflows/wheels.yml", 3),
        ("Dockerfile_amd", 0),
        ("README.md", 3),
        ("kernels/x.hip", 0),
    }


def test_tiers_by_folder_file_name_and_submodule(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, {".gitmodules": '[submodule "k"]\n  path = deps/kern\n'}))
    cases = {
        "pkg/ops/attn.py": Tier.PRODUCT,
        "tests/unit/test_attn.py": Tier.TESTS,
        "pkg/ops/attn_test.py": Tier.TESTS,
        "conftest.py": Tier.TESTS,
        "benchmarks/bench_attn.py": Tier.BENCHMARKS,
        "examples/train.py": Tier.EXAMPLES,
        "notebooks/a.ipynb": Tier.EXAMPLES,
        "docs/conf.py": Tier.DOCS,
        ".github/workflows/ci.yml": Tier.CI,
        "scripts/release.sh": Tier.DEV,
        "packaging/build_wheel.sh": Tier.CI,
        "build_tools/wheel_utils/Dockerfile.x86": Tier.CI,
        "pkg/packaging/version.py": Tier.PRODUCT,  # a package's own module of that name ships
        "pkg/scripts/entry.py": Tier.PRODUCT,  # scripts/ inside a package ships
        "pkg/legacy/old.py": Tier.DEPRECATED,
        "third_party/cutlass/x.h": Tier.VENDORED,
        "deps/kern/k.cu": Tier.VENDORED,  # a git submodule
        "tests/third_party/x.py": Tier.TESTS,  # the outermost folder decides
    }
    assert {rel: model.tier_of(rel) for rel in cases} == cases


def test_setup_py_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(
        tmp_path, {"setup.py": f"open({str(marker)!r}, 'w').write('x')\nimport torch.version.hip\n"}
    )
    build_model(tmp_path)
    assert not marker.exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_build_file_linked_from_outside_the_root_is_not_read(tmp_path: Path) -> None:
    outside = write(
        tmp_path / "outside", {"setup.py": "import torch\nif torch.version.hip:\n  pass\n"}
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "setup.py").symlink_to(outside / "setup.py")
    model = build_model(project)
    assert model.rocm_support == ()


def test_a_setup_py_that_does_not_parse_is_a_note(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, {"setup.py": "import torch\nif torch.version.hip\n"}))
    assert model.notes == (
        "setup.py does not parse; its package names are not known",
        "setup.py does not parse; its components are not classified",
    )


def test_a_rocm_branch_with_computed_sources_is_a_note(tmp_path: Path) -> None:
    setup = "import torch\nif torch.version.hip:\n    srcs = builder.sources()\n"
    model = build_model(write(tmp_path, {"setup.py": setup}))
    assert model.components == ()
    assert model.notes == (
        "setup.py branches on ROCm but names no source folder inside either branch (both "
        "builds share their sources, or compute them); no component is classified",
    )


def test_cmake_sources_only_the_cuda_branch_compiles_are_nvidia_only(tmp_path: Path) -> None:
    cmake = (
        "set(GPU_FILES csrc/ops.cu csrc/kernels.cu)\n"
        "if(BUILD_CUDA)\n"
        "  list(APPEND SRC_FILES ${GPU_FILES} csrc/gemm_simt.cu)\n"
        "  if(HAS_SM80)\n"
        "    list(APPEND SRC_FILES csrc/gemm_sm80.cu)\n"
        "  endif()\n"
        "  list(APPEND SRC_FILES tc/mma_a.cu tc/mma_b.cu)\n"
        "elseif(BUILD_HIP)\n"
        "  enable_language(HIP)\n"
        "  list(APPEND SRC_FILES ${GPU_FILES} csrc/gemm_simt.cu)\n"
        "endif()\n"
        "if(NOT BUILD_HIP)\n"
        "  list(APPEND SRC_FILES csrc/not_said.cu)\n"
        "endif()\n"
    )
    files = {"CMakeLists.txt": cmake}
    files |= {
        f: ""
        for f in (
            "csrc/ops.cu",
            "csrc/gemm_simt.cu",
            "csrc/gemm_sm80.cu",
            "csrc/not_said.cu",
            "tc/mma_a.cu",
            "tc/mma_b.cu",
        )
    }
    model = build_model(write(tmp_path, files))
    found = {c.path: (c.evidence[0].line, c.rocm_alternative) for c in model.components}
    # csrc/ holds sources the ROCm build compiles too: the file alone; tc/ is CUDA's alone
    assert found == {
        "csrc/gemm_sm80.cu": (5, "csrc/gemm_simt.cu"),
        "tc": (7, "csrc/gemm_simt.cu"),
    }


def test_a_pyproject_nested_too_deeply_is_a_note_not_a_crash(tmp_path: Path) -> None:
    deep = "x = " + "[" * 10_000 + "]" * 10_000 + "\n"
    files = {"pyproject.toml": deep, "sub/pyproject.toml": deep, "setup.py": "import torch\n"}
    files["setup.py"] += "if torch.version.hip:\n    x = " + "(" * 200 + "1" + ")" * 200 + "\n"
    model = build_model(write(tmp_path, files))
    assert "pyproject.toml is nested too deeply to read; its name is not known" in model.notes


def test_setup_keywords_unpacked_from_a_dict_literal(tmp_path: Path) -> None:
    # AutoGPTQ's pattern: setup(**common_setup_kwargs) with the dict assigned at module level
    setup = (
        "from setuptools import setup\n"
        "common_setup_kwargs = {'version': '0.1', 'name': 'quant_kit'}\n"
        "more = dict(packages=['quant_kit', 'quant_kit.nn'])\n"
        "setup(**common_setup_kwargs, **more)\n"
    )
    model = build_model(write(tmp_path / "a", {"setup.py": setup}))
    assert model.name == "quant_kit"
    assert "quant_kit" in model.facts.first_party
    # an explicit keyword wins over one unpacked from a dict
    explicit = setup.replace("setup(**", "setup(name='other_kit', **")
    assert build_model(write(tmp_path / "b", {"setup.py": explicit})).name == "other_kit"
    # a dict built in code, not a literal, says nothing
    computed = "from setuptools import setup\nkw = make()\nsetup(**kw)\n"
    assert build_model(write(tmp_path / "c", {"setup.py": computed})).name == ""


# torchao's pattern: sources computed with os.path.join/glob, CUDA files added only under a
# name set from torch.version.cuda, and a ROCm switch that only picks the extension class.
COMPUTED_SOURCES = {
    "setup.py": (
        "import glob, os\n"
        "import torch\n"
        "from torch.utils.cpp_extension import CUDAExtension, CppExtension, ROCM_HOME\n"
        "def get_extensions():\n"
        "    use_cuda = torch.version.cuda and CUDA_HOME is not None\n"
        "    use_rocm = torch.version.hip and ROCM_HOME is not None\n"
        "    extension = CUDAExtension if (use_cuda or use_rocm) else CppExtension\n"
        "    curdir = os.path.dirname(os.path.curdir)\n"
        "    extensions_dir = os.path.join(curdir, 'quantlib', 'csrc')\n"
        "    sources = list(glob.glob(os.path.join(extensions_dir, '**/*.cpp'), recursive=True))\n"
        "    extensions_cuda_dir = os.path.join(extensions_dir, 'cuda')\n"
        "    cuda_sources = list(glob.glob(os.path.join(extensions_cuda_dir, '**/*.cu')))\n"
        "    if use_cuda:\n"
        "        sources += cuda_sources\n"
        "    return [extension('quantlib._C', sources)]\n"
        "setup(name='quantlib', ext_modules=get_extensions())\n"
    ),
    "quantlib/__init__.py": "",
    "quantlib/csrc/cpu/ops.cpp": "// cpu\n",
    "quantlib/csrc/cuda/gemm/gemm.cu": "// cuda\n",
}


def test_computed_source_paths_under_a_cuda_switch(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, COMPUTED_SOURCES))
    assert model.supports_rocm
    ((path, status, evidence),) = [(c.path, c.status, c.evidence) for c in model.components]
    assert (path, status) == ("quantlib/csrc/cuda", ComponentStatus.NVIDIA_ONLY)
    assert (evidence[0].path, evidence[0].line) == ("setup.py", 14)
    assert not model.notes


def test_a_test_of_torch_version_cuda_is_the_cuda_branch(tmp_path: Path) -> None:
    files = dict(COMPUTED_SOURCES)
    setup = files["setup.py"].replace(
        "    if use_cuda:\n", "    if torch.version.cuda is not None:\n"
    )
    files["setup.py"] = setup
    model = build_model(write(tmp_path / "a", files))
    assert [c.path for c in model.components] == ["quantlib/csrc/cuda"]
    # `is None` is the ROCm side: the CUDA files are then what ROCm compiles, not a component
    files["setup.py"] = setup.replace("is not None:", "is None:")
    assert build_model(write(tmp_path / "b", files)).components == ()


def test_an_extra_pinning_rocm_wheels_is_rocm_evidence(tmp_path: Path) -> None:
    # unsloth's pattern: extras that pin torch/triton wheels from AMD's ROCm index
    pyproject = (
        "[project]\nname = 'tuner'\n\n[project.optional-dependencies]\n"
        "amd = [\n    'bitsandbytes>=0.50',\n]\n"
        "# a comment naming https://repo.radeon.com is not an extra\n"
        "rocm72-torch291 = [\n    'tuner[amd]',\n"
        '    "torch @ https://repo.radeon.com/rocm/manylinux/rocm-rel-7.2/'
        "torch-2.9.1%2Brocm7.2.0-cp312-cp312-linux_x86_64.whl ; python_version == '3.12'\",\n]\n"
        "\n[tool.other]\nx = ['https://repo.radeon.com/not-an-extra']\n"
    )
    model = build_model(write(tmp_path / "a", {"pyproject.toml": pyproject}))
    assert [(e.path, e.line) for e in model.rocm_support] == [("pyproject.toml", 9)]
    assert "`rocm72-torch291` extra" in model.rocm_support[0].what
    # an extra only named for AMD, pinning nothing from a ROCm index, is not evidence
    plain = pyproject.split("# a comment")[0]
    assert not build_model(write(tmp_path / "b", {"pyproject.toml": plain})).supports_rocm


CONDA_ENV = "channels:\n  - nvidia/label/cuda-11.8.0\ndependencies:\n  - pytorch-cuda=11.8\n"


def test_a_conda_environment_beside_a_pip_package_is_a_developer_tier(tmp_path: Path) -> None:
    # DeepSpeed's pattern: setup.py names the distribution, environment.yml sets up a CUDA
    # development machine (pytorch-cuda, compilers); users install the package with pip.
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='speedy', packages=['speedy'])\n",
        "speedy/__init__.py": "",
        "environment.yml": CONDA_ENV,
        "envs/environment.yml": CONDA_ENV,
    }
    model = build_model(write(tmp_path, files))
    assert model.tier_of("environment.yml") is Tier.DEV
    assert model.tier_of("envs/environment.yml") is Tier.PRODUCT  # only the root's


def test_a_conda_environment_of_an_application_is_how_it_installs(tmp_path: Path) -> None:
    model = build_model(write(tmp_path / "app", {"environment.yml": CONDA_ENV, "run.py": ""}))
    assert model.tier_of("environment.yml") is Tier.PRODUCT
