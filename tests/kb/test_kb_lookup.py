"""The knowledge base's look-ups: families, imports, headers, indexes, images and variables."""

from __future__ import annotations

import pytest

from gpuport import kb

# --- find_package ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelled", ["torch", "Torch", "TORCH", " torch ", "torch>=2.3", "torch[opt]==2.4.1"]
)
def test_find_package_normalizes_spelling_extras_and_versions(spelled: str) -> None:
    found = kb.find_package(spelled)
    assert found is not None and found.name == "torch"


def test_find_package_normalizes_separators() -> None:
    assert kb.find_package("Flash_Attn") is kb.packages()["flash-attn"]
    assert kb.find_package("llama.cpp.python") is kb.packages()["llama-cpp-python"]


@pytest.mark.parametrize(
    "name",
    [
        "nvidia-cublas-cu12",
        "nvidia-cudnn-cu11",
        "nvidia-nccl-cu12",
        "nvidia-cuda-nvrtc-cu12",
        "nvidia-cuda-cupti-cu12",
        "nvidia-cusparselt-cu12",
        "nvidia-nvjitlink-cu12",
        "nvidia_cufft_cu13",
        "nvidia-cublas",  # CUDA 13 wheels dropped the suffix
        "nvidia-cuda-runtime",
    ],
)
def test_nvidia_runtime_wheels_are_not_applicable(name: str) -> None:
    found = kb.find_package(name)
    assert found is not None
    assert found.status is kb.PackageStatus.NOT_APPLICABLE
    assert found.name == kb.normalize_name(name), "a family match answers with the asked name"


@pytest.mark.parametrize("name", ["nvidia-ml-py", "nvidia-dali-cuda120", "nvidia-cutlass-dsl"])
def test_other_nvidia_packages_are_not_mistaken_for_runtime_wheels(name: str) -> None:
    found = kb.find_package(name)
    assert found is not None
    assert found.status is not kb.PackageStatus.NOT_APPLICABLE


@pytest.mark.parametrize("name", ["cupy-cuda12x", "cupy-cuda11x", "cupy-cuda13x", "cupy-cuda102"])
def test_cupy_cuda_wheels_point_to_the_rocm_wheel(name: str) -> None:
    found = kb.find_package(name)
    assert found is not None
    assert found.status is kb.PackageStatus.NEEDS_ROCM_BUILD
    assert found.rocm_package is not None and found.rocm_package.startswith("cupy-rocm-")


def test_cupy_rocm_wheels_are_fine() -> None:
    found = kb.find_package("cupy-rocm-5-0")
    assert found is not None and found.status is kb.PackageStatus.WORKS


@pytest.mark.parametrize(
    "name", ["jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax_cuda13_pjrt"]
)
def test_jax_cuda_plugins_need_the_rocm_plugin(name: str) -> None:
    found = kb.find_package(name)
    assert found is not None
    assert found.status is kb.PackageStatus.NEEDS_ROCM_BUILD
    assert found.rocm_package == "jax-rocm7-plugin"


def test_jax_rocm_plugins_are_fine() -> None:
    for name in ("jax-rocm7-plugin", "jax-rocm7-pjrt", "jax-rocm60-plugin"):
        found = kb.find_package(name)
        assert found is not None and found.status is kb.PackageStatus.WORKS, name


def test_cuda_extras_are_recorded_for_the_caller() -> None:
    jax = kb.find_package("jax[cuda12]")
    assert jax is not None and "cuda12" in jax.cuda_extras and "cuda13" in jax.cuda_extras
    tensorflow = kb.find_package("tensorflow[and-cuda]")
    assert tensorflow is not None and "and-cuda" in tensorflow.cuda_extras
    assert tensorflow.rocm_package == "tensorflow-rocm"


@pytest.mark.parametrize(
    "name", ["tensorrt", "tensorrt-cu12", "tensorrt-cu12-libs", "tensorrt-cu13-bindings"]
)
def test_tensorrt_family_is_not_supported(name: str) -> None:
    found = kb.find_package(name)
    assert found is not None and found.status is kb.PackageStatus.NOT_SUPPORTED


def test_onnxruntime_gpu_is_replaced_by_the_migraphx_build() -> None:
    found = kb.find_package("onnxruntime-gpu")
    assert found is not None
    assert found.rocm_package == "onnxruntime-migraphx"
    assert "MIGraphXExecutionProvider" in found.instead


def test_unknown_packages_are_none() -> None:
    assert kb.find_package("requests") is None
    assert kb.find_package("") is None
    assert kb.find_package("nvidia-") is None


def test_rocm_min_version_marks_packages_fixed_in_a_release() -> None:
    bnb = kb.find_package("bitsandbytes")
    assert bnb is not None and bnb.rocm_min_version == "0.50.0"
    assert bnb.status is kb.PackageStatus.WORKS


# --- package_for_import ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module,package",
    [
        ("torch", "torch"),
        ("torch.cuda", "torch"),
        ("flash_attn", "flash-attn"),
        ("flash_attn.flash_attn_interface", "flash-attn"),
        ("flash_attn.cute", "flash-attn-4"),
        ("flash_attn.cute.interface", "flash-attn-4"),
        ("pynvml", "pynvml"),
        ("cupy", "cupy"),
        ("cupyx.scipy", "cupy"),
        ("numba", "numba"),
        ("numba.cuda", "numba-cuda"),
        ("cuda.bindings.runtime", "cuda-bindings"),
        ("cuda", "cuda-python"),
        ("nvidia.dali.fn", "nvidia-dali-cuda120"),
        ("tensorrt", "tensorrt"),
        ("bitsandbytes.nn", "bitsandbytes"),
        ("megatron.core", "megatron-core"),
    ],
)
def test_package_for_import_picks_the_longest_known_prefix(module: str, package: str) -> None:
    found = kb.package_for_import(module)
    assert found is not None and found.name == package


def test_package_for_import_of_unknown_modules_is_none() -> None:
    assert kb.package_for_import("os") is None
    assert kb.package_for_import("torchx_unknown") is None


# --- CUDA libraries ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header,library",
    [
        ("cublas_v2.h", "cuBLAS"),
        ("<cublasLt.h>", "cuBLASLt"),
        ('"cudnn.h"', "cuDNN"),
        ("cub/cub.cuh", "CUB"),
        ("cub/block/block_reduce.cuh", "CUB"),
        ("thrust/device_vector.h", "Thrust"),
        ("cuda/std/atomic", "libcu++"),
        ("cooperative_groups/reduce.h", "Cooperative Groups"),
        ("cuda_bf16.h", "CUDA half/bfloat16/fp8 types"),
        ("nvtx3/nvToolsExt.h", "NVTX"),
        ("cutlass/gemm/device/gemm.h", "CUTLASS / CuTe"),
        ("cute/tensor.hpp", "CUTLASS / CuTe"),
        ("NvInfer.h", "TensorRT"),
        ("nccl.h", "NCCL"),
        ("cuda_runtime.h", "CUDA Runtime"),
    ],
)
def test_library_for_header(header: str, library: str) -> None:
    found = kb.library_for_header(header)
    assert found is not None and found.name == library


def test_library_for_header_does_not_guess() -> None:
    assert kb.library_for_header("vector") is None
    assert kb.library_for_header("my/cublas_v2.h") is None
    assert kb.library_for_header("hip/hip_runtime.h") is None


def test_library_for_link_name_accepts_every_spelling() -> None:
    for spelled in ("cublas", "-lcublas", "libcublas.so", "libcublas.so.12", "libcublas.a"):
        found = kb.library_for_link_name(spelled)
        assert found is not None and found.name == "cuBLAS", spelled
    assert kb.library_for_link_name("m") is None


def test_library_for_cmake_target_maps_to_rocm_targets() -> None:
    found = kb.library_for_cmake_target("CUDA::cublas")
    assert found is not None and "roc::hipblas" in found.amd_cmake_targets
    fft = kb.library_for_cmake_target("cuda::cufft")
    assert fft is not None and fft.amd_cmake_targets == ("hip::hipfft",)
    assert kb.library_for_cmake_target("Boost::boost") is None


# --- PyTorch's ROCm indexes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "requested,published",
    [
        ("6.4", "6.4"),
        ("6.4.3", "6.4"),
        ("6.2.4", "6.2.4"),
        ("6.2.1", "6.2"),
        ("6.3", "6.3"),
        ("7.0", "6.4"),  # rocm7.0 was nightly-only
        ("7.1", "7.1"),
        ("7.2.1", "7.2"),
        ("7.9", "7.2"),  # 7.14 > 7.9: versions compare as numbers, not strings
        ("7.14", "7.14"),
        ("rocm6.1", "6.1"),
    ],
)
def test_pytorch_rocm_index_picks_the_newest_published_not_above(
    requested: str, published: str
) -> None:
    assert kb.pytorch_rocm_index(requested) == f"https://download.pytorch.org/whl/rocm{published}"


def test_pytorch_rocm_index_below_every_published_version_takes_the_oldest() -> None:
    oldest = kb.pytorch_rocm_versions()[0]
    assert kb.pytorch_rocm_index("4.0") == f"https://download.pytorch.org/whl/rocm{oldest}"


def test_pytorch_rocm_index_default() -> None:
    assert kb.pytorch_rocm_index() == "https://download.pytorch.org/whl/rocm7.2"


def test_pytorch_rocm_index_rejects_nonsense() -> None:
    with pytest.raises(kb.KbError):
        kb.pytorch_rocm_index("latest")


def test_package_index_for_snaps_pytorch_and_substitutes_others() -> None:
    torch = kb.packages()["torch"]
    assert torch.index_for("6.2.1") == "https://download.pytorch.org/whl/rocm6.2"
    assert torch.index_for() == "https://download.pytorch.org/whl/rocm7.2"
    assert kb.packages()["bitsandbytes"].index_for("6.4") is None
    assert kb.packages()["vllm"].index_for("7.2") == "https://wheels.vllm.ai/rocm/"


# --- pip indexes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url,replacement",
    [
        ("https://download.pytorch.org/whl/cu121", "https://download.pytorch.org/whl/rocm6.4"),
        ("http://download.pytorch.org/whl/cu118/", "https://download.pytorch.org/whl/rocm6.4"),
        (
            "https://download.pytorch.org/whl/nightly/cu128",
            "https://download.pytorch.org/whl/nightly/rocm6.4",
        ),
        (
            "https://abetlen.github.io/llama-cpp-python/whl/cu124",
            "https://abetlen.github.io/llama-cpp-python/whl/rocm64",
        ),
    ],
)
def test_find_pip_index(url: str, replacement: str) -> None:
    found = kb.find_pip_index(url)
    assert found is not None and found.index_for("6.4") == replacement


def test_pip_index_without_replacement_says_drop_it() -> None:
    found = kb.find_pip_index("https://pypi.nvidia.com")
    assert found is not None and found.index_for("6.4") is None and found.notes


def test_rocm_and_unknown_indexes_are_not_cuda_indexes() -> None:
    assert kb.find_pip_index("https://download.pytorch.org/whl/rocm6.4") is None
    assert kb.find_pip_index("https://pypi.org/simple") is None


# --- Docker ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref,pattern",
    [
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "nvidia/cuda:*"),
        ("docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", "nvidia/cuda:*"),
        ("nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/pytorch:*"),
        ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "pytorch/pytorch:*cuda*"),
        ("pytorch/pytorch", "pytorch/pytorch:latest"),
        ("vllm/vllm-openai:v0.9.0@sha256:abc", "vllm/vllm-openai:*"),
        ("nvcr.io/nvidia/tritonserver:24.08-py3", "nvcr.io/nvidia/tritonserver:*"),
    ],
)
def test_find_docker_image(ref: str, pattern: str) -> None:
    found = kb.find_docker_image(ref)
    assert found is not None and found.pattern == pattern


def test_docker_image_replacement_fills_the_rocm_version() -> None:
    found = kb.find_docker_image("nvidia/cuda:12.4.1-devel-ubuntu22.04")
    assert found is not None
    assert found.image_for("6.4") == "rocm/dev-ubuntu-24.04:6.4-complete"


def test_rocm_and_unrelated_images_are_not_matched() -> None:
    assert kb.find_docker_image("rocm/pytorch:latest") is None
    assert kb.find_docker_image("python:3.12-slim") is None
    assert kb.find_docker_image("pytorch/pytorch:2.5.1-runtime") is None


def test_find_docker_flag() -> None:
    for spelled in ("--gpus", "--gpus=all", "--gpus all"):
        found = kb.find_docker_flag(spelled.split()[0])
        assert found is not None and found.flag == "--gpus", spelled
    runtime = kb.find_docker_flag("--runtime=nvidia")
    assert runtime is not None and runtime.flag == "--runtime=nvidia"
    assert kb.find_docker_flag("--rm") is None


# --- Environment variables, commands, GPUs ------------------------------------------------------------


def test_find_env_var_exact_and_family() -> None:
    visible = kb.find_env_var("CUDA_VISIBLE_DEVICES")
    assert visible is not None and "ROCR_VISIBLE_DEVICES" in visible.rocm_names
    assert kb.find_env_var("$CUDA_HOME") is kb.env_vars()["CUDA_HOME"]
    assert kb.find_env_var("${CUDA_HOME}") is kb.env_vars()["CUDA_HOME"]
    family = kb.find_env_var("NCCL_SOCKET_IFNAME")
    assert family is not None and family.name == "NCCL_*" and family.honoured_on_rocm
    exact = kb.find_env_var("NCCL_NVLS_ENABLE")
    assert exact is not None and exact.name == "NCCL_NVLS_ENABLE"
    launch = kb.find_env_var("CUDA_LAUNCH_BLOCKING")
    assert launch is not None and "AMD_SERIALIZE_KERNEL" in launch.rocm_names
    assert kb.find_env_var("HOME") is None


def test_find_command_by_name_path_or_alias() -> None:
    smi = kb.find_command("/usr/bin/nvidia-smi")
    assert smi is not None and "amd-smi" in smi.rocm_commands
    nvcc = kb.find_command("nvcc")
    assert nvcc is not None and "hipcc" in nvcc.rocm_commands
    nvprof = kb.find_command("nvprof")
    assert nvprof is not None and nvprof.name == "nsys"
    assert kb.find_command("ls") is None


def test_find_gpu_arch_by_id_target_id_or_product() -> None:
    assert kb.find_gpu_arch("gfx942") is kb.gpu_architectures()["gfx942"]
    assert kb.find_gpu_arch("gfx942:sramecc+:xnack-") is kb.gpu_architectures()["gfx942"]
    assert kb.find_gpu_arch("GFX90A") is kb.gpu_architectures()["gfx90a"]
    product = kb.find_gpu_arch("radeon rx 7900 xtx")
    assert product is not None and product.gfx == "gfx1100" and product.wavefront == 32
    assert kb.find_gpu_arch("sm_90") is None


def test_tables_are_cached() -> None:
    assert kb.packages() is kb.packages()
    assert kb.cuda_libraries() is kb.cuda_libraries()
    assert kb.docker_images() is kb.docker_images()


def test_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        kb.packages()["torch"] = kb.packages()["triton"]  # type: ignore[index]


def test_cuda_image_replacement_keeps_the_ubuntu_release_and_the_image_flavour() -> None:
    devel = "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04"
    entry = kb.find_docker_image(devel)
    assert entry is not None
    assert entry.image_for("6.4", original=devel) == "rocm/dev-ubuntu-22.04:6.4-complete"
    runtime = "nvidia/cuda:12.4.1-runtime-ubuntu20.04"
    assert entry.image_for("6.4", original=runtime) == "rocm/dev-ubuntu-20.04:6.4"
    odd = "nvidia/cuda:12.4.1-devel-ubuntu18.04"  # no ROCm image for 18.04: the default stays
    assert entry.image_for("6.4", original=odd) == entry.image_for("6.4")
